// A layered layout of a plan's steps, drawn as SVG, left to right.
//
// Plans are small (at most a few dozen steps) and acyclic, so a full
// Sugiyama library is not needed: each step goes in the layer after its
// deepest dependency (longest path), and the steps of a layer are ordered
// by the mean position of their neighbours, sweeping forwards and
// backwards a few times to uncross edges. ADR 0013 says why this file
// replaces a vendored dagre or elkjs.

const svgNS = 'http://www.w3.org/2000/svg';

export const nodeWidth = 230;
export const nodeHeight = 70;
const gapX = 60;
const gapY = 24;
const pad = 12;

// layout places nodes ([{id, deps: [id]}]): it returns {pos: Map id ->
// {x, y}, width, height}. Dependencies on unknown ids are ignored, and so
// is any edge that would close a cycle.
export function layout(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const layer = new Map();
  const visiting = new Set();
  const depth = (id) => {
    if (layer.has(id)) return layer.get(id);
    if (visiting.has(id)) return 0; // a cycle: break it here
    visiting.add(id);
    let d = 0;
    for (const dep of byId.get(id).deps || []) {
      if (byId.has(dep)) d = Math.max(d, depth(dep) + 1);
    }
    visiting.delete(id);
    layer.set(id, d);
    return d;
  };
  nodes.forEach((n) => depth(n.id));
  const layers = [];
  for (const n of nodes) (layers[layer.get(n.id)] ||= []).push(n.id);
  const preds = new Map(nodes.map((n) => [n.id, (n.deps || []).filter((d) => byId.has(d))]));
  const succs = new Map(nodes.map((n) => [n.id, []]));
  for (const [id, ps] of preds) ps.forEach((p) => succs.get(p).push(id));

  const order = new Map();
  const renumber = (ids) => ids.forEach((id, i) => order.set(id, i));
  layers.forEach(renumber);
  const mean = (ids, fallback) => (ids.length ? ids.reduce((s, id) => s + order.get(id), 0) / ids.length : fallback);
  for (let sweep = 0; sweep < 4; sweep++) {
    const down = sweep % 2 === 0;
    const seq = down ? layers.slice(1) : layers.slice(0, -1).reverse();
    for (const ids of seq) {
      const key = new Map(ids.map((id) => [id, mean((down ? preds : succs).get(id), order.get(id))]));
      ids.sort((a, b) => key.get(a) - key.get(b));
      renumber(ids);
    }
  }

  const tallest = Math.max(1, ...layers.map((l) => l.length));
  const height = pad * 2 + tallest * nodeHeight + (tallest - 1) * gapY;
  const width = pad * 2 + layers.length * nodeWidth + Math.max(0, layers.length - 1) * gapX;
  const pos = new Map();
  layers.forEach((ids, li) => {
    const span = ids.length * nodeHeight + (ids.length - 1) * gapY;
    const top = (height - span) / 2;
    ids.forEach((id, i) => pos.set(id, { x: pad + li * (nodeWidth + gapX), y: top + i * (nodeHeight + gapY) }));
  });
  return { pos, width, height, preds };
}

function el(tag, attrs, ...kids) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k);
  return e;
}

function clip(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// draw returns an SVG element for steps: [{id, tool, status, lines:
// [string], description}] with deps. onSelect(id) is called when a step is
// clicked, or chosen with Enter or Space.
export function draw(steps, { title, onSelect } = {}) {
  const { pos, width, height, preds } = layout(steps);
  const svg = el('svg', {
    class: 'dag', viewBox: `0 0 ${width} ${height}`, width, height,
    role: 'group', 'aria-label': title || 'Plan',
  });
  svg.append(el('defs', {}, el('marker', {
    id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto-start-reverse',
  }, el('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }))));
  const edges = el('g', { class: 'edges', 'aria-hidden': 'true' });
  for (const s of steps) {
    const to = pos.get(s.id);
    for (const dep of preds.get(s.id)) {
      const from = pos.get(dep);
      const x1 = from.x + nodeWidth, y1 = from.y + nodeHeight / 2;
      const x2 = to.x, y2 = to.y + nodeHeight / 2;
      const mx = (x1 + x2) / 2;
      edges.append(el('path', { d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`, class: 'edge', 'marker-end': 'url(#arrow)' }));
    }
  }
  svg.append(edges);
  for (const s of steps) {
    const p = pos.get(s.id);
    // The name read out is the text shown (as WCAG's label-in-name asks);
    // the title adds the full text of clipped lines and the description.
    const lines = [s.id, s.tool || '(no tool)', ...(s.lines || [])].slice(0, 3);
    const shown = lines.map((t) => clip(t, 32));
    const g = el('g', {
      class: 'node st-' + s.status, transform: `translate(${p.x} ${p.y})`, tabindex: 0, role: 'button',
      'aria-label': shown.join(' '), 'data-step': s.id, 'data-tool': s.tool || '',
    });
    g.append(el('title', {}, [...lines, s.description].filter(Boolean).join('\n')));
    g.append(el('rect', { width: nodeWidth, height: nodeHeight, rx: 6, class: 'box' }));
    g.append(el('rect', { width: 6, height: nodeHeight, rx: 2, class: 'stripe' }));
    // A trailing space (not drawn) keeps the lines apart as words in the
    // text content that assistive technology reads.
    shown.forEach((t, i) => {
      g.append(el('text', { x: 14, y: 20 + i * 19, class: i === 0 ? 'name' : i === 1 ? 'tool' : 'meta' }, i < shown.length - 1 ? t + ' ' : t));
    });
    if (onSelect) {
      g.addEventListener('click', () => onSelect(s.id));
      g.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          onSelect(s.id);
        }
      });
    }
    svg.append(g);
  }
  return svg;
}
