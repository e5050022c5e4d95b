// The admin console: sign-in, a hash router, polling, and the pages. Every
// element is built with the DOM API and every text goes in as text, so
// nothing from the API is ever parsed as HTML.

import { api, ApiError, credential } from './api.js';
import { draw } from './dag.js';

const pollMs = 3000;
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const signOut = document.getElementById('signout');
const status = document.getElementById('status');

let me = null; // the /whoami answer once signed in
let page = null; // {refresh, stop} of the page shown
let busy = false;

// ---------------------------------------------------------------- helpers

function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  add(e, kids);
  return e;
}

function add(e, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : String(k));
  }
}

const can = (scope) => !!me && me.scopes.includes(scope);
const canWrite = () => can('admin:write');

function fmtTime(s) {
  if (!s || s.startsWith('0001-')) return '—';
  const d = new Date(s);
  return d.toLocaleString(undefined, { hour12: false });
}

function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '—';
  if (ms < 1) return '<1 ms';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return (ms / 60000).toFixed(1) + ' min';
}

function fmtAgo(s) {
  if (!s || s.startsWith('0001-')) return '—';
  return fmtMs(Date.now() - new Date(s).getTime()) + ' ago';
}

const pct = (x) => (x === undefined || x === null ? '—' : Math.round(x * 100) + ' %');

function badge(state) {
  return h('span', { class: 'badge st-' + state, text: state });
}

function table(caption, headers, rows, empty = 'None.') {
  if (!rows.length) return h('p', { class: 'empty', text: empty });
  return h('table', {},
    h('caption', { class: 'vh', text: caption }),
    h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))));
}

function section(title, ...kids) {
  const id = 'h-' + title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('section', { 'aria-labelledby': id }, h('h2', { id, text: title }), kids);
}

function field(label, input) {
  const id = 'f-' + Math.random().toString(36).slice(2, 9);
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id, text: label }), input);
}

function select(name, options, value = '') {
  return h('select', { name }, options.map(([v, t]) => h('option', { value: v, text: t, selected: v === value })));
}

// region is a part of a page that a refresh redraws: set(v, render) draws
// render(v) only when v changed since the last draw, so that a poll that
// brings nothing new keeps focus, selection and scroll where they are.
function region(props) {
  const e = h('div', props || {});
  let last;
  e.set = (v, render) => {
    const key = JSON.stringify(v);
    if (key === last) return;
    last = key;
    e.replaceChildren(...[render(v)].flat().filter(Boolean));
  };
  e.fail = (err) => {
    last = undefined;
    e.replaceChildren(h('p', { class: 'error', role: 'alert', text: describe(err) }));
  };
  return e;
}

function describe(err) {
  if (err instanceof ApiError) {
    if (err.status === 401) return 'The server no longer accepts this credential (' + err.message + '). Sign in again.';
    if (err.status === 403) return 'Refused: ' + err.message + '.';
    return err.message + (err.code ? ' (' + err.code + ')' : '');
  }
  return String(err && err.message ? err.message : err);
}

function say(text) {
  status.textContent = text;
}

// A button that asks once more before it acts: the first press shows
// "Yes" and "No" next to it.
function confirmButton(label, question, action, idBase) {
  const wrap = h('span', { class: 'confirm' });
  const first = h('button', { type: 'button', id: idBase, text: label });
  first.addEventListener('click', () => {
    const yes = h('button', { type: 'button', class: 'danger', id: idBase + '-yes', text: 'Yes, ' + label.toLowerCase() });
    const no = h('button', { type: 'button', id: idBase + '-no', text: 'No' });
    const q = h('span', { class: 'question', text: question + ' ' });
    yes.addEventListener('click', async () => {
      yes.disabled = no.disabled = true;
      try {
        await action();
      } catch (e) {
        say(describe(e));
        wrap.replaceChildren(first, h('span', { class: 'error', role: 'alert', text: ' ' + describe(e) }));
        return;
      }
      wrap.replaceChildren(first);
    });
    no.addEventListener('click', () => {
      wrap.replaceChildren(first);
      first.focus();
    });
    wrap.replaceChildren(q, yes, no);
    no.focus();
  });
  wrap.append(first);
  return wrap;
}

function link(href, text) {
  return h('a', { href, text });
}

function pre(v, max = 600) {
  if (v === undefined || v === null) return '—';
  let s = typeof v === 'string' ? v : JSON.stringify(v, null, 1);
  if (s.length > max) s = s.slice(0, max) + '…';
  return h('pre', { class: 'preview', text: s });
}

// ------------------------------------------------------------- sign-in

function showSignIn(message) {
  me = null;
  stopPage();
  nav.hidden = true;
  signOut.hidden = true;
  who.textContent = '';
  document.title = 'Sign in · agents-mcp console';
  const input = h('input', { type: 'password', name: 'credential', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'signin-help' });
  const form = h('form', { class: 'signin' },
    h('h1', { text: 'Sign in' }),
    h('p', { id: 'signin-help', text: 'Paste an API key or a JWT with the admin:read scope (admin:write to change things). ' +
      'It stays in this tab only, until you sign out or close it. A server run without credentials (make run) needs none: leave the field empty.' }),
    field('API key or JWT', input),
    message ? h('p', { class: 'error', role: 'alert', text: message }) : null,
    h('button', { type: 'submit', text: 'Sign in' }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const value = input.value.trim();
    try {
      me = await api('/whoami', { token: value });
    } catch (e) {
      showSignIn(e instanceof ApiError && e.status === 401 ? 'The server did not accept this credential: ' + e.message : describe(e));
      return;
    }
    credential.set(value);
    enter();
  });
  main.replaceChildren(form);
  input.focus();
}

function enter() {
  signOut.hidden = false;
  who.textContent = 'Signed in as ' + (me.name || me.id);
  if (!can('admin:read')) {
    nav.hidden = true;
    document.title = 'Refused · agents-mcp console';
    main.replaceChildren(h('div', { class: 'refusal', role: 'alert' },
      h('h1', { text: 'Refused' }),
      h('p', { text: `${me.id} does not have the admin:read scope, so the console cannot show anything to it. ` +
        `Its scopes: ${me.scopes.join(', ') || 'none'}. Sign out and sign in with a key that has admin:read.` })));
    return;
  }
  nav.hidden = false;
  show();
}

signOut.addEventListener('click', () => {
  credential.clear();
  showSignIn();
});

// --------------------------------------------------------------- router

const routes = {
  '': ['Overview', overviewPage],
  tasks: ['Tasks', tasksPage],
  learnings: ['Learnings', learningsPage],
  tools: ['Tools', toolsPage],
  upstreams: ['Upstreams', upstreamsPage],
  audit: ['Audit', auditPage],
};

function stopPage() {
  if (page && page.stop) page.stop();
  page = null;
}

async function show() {
  if (!me || !can('admin:read')) return;
  stopPage();
  const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const arg = rest.map(decodeURIComponent).join('/');
  const [title, make] = routes[name] || routes[''];
  for (const a of nav.querySelectorAll('a')) {
    const target = a.getAttribute('href').replace(/^#\/?/, '');
    if (target === (routes[name] ? name : '')) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = title + ' · agents-mcp console';
  main.replaceChildren();
  page = make(main, arg);
  await refresh();
  main.focus({ preventScroll: true });
}

async function refresh() {
  if (!page || busy) return;
  busy = true;
  const p = page;
  try {
    await p.refresh();
    if (p === page) say('Updated ' + new Date().toLocaleTimeString(undefined, { hour12: false }));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      credential.clear();
      showSignIn(describe(e));
    } else {
      say(describe(e));
    }
  } finally {
    busy = false;
  }
}

window.addEventListener('hashchange', show);
setInterval(() => {
  if (!document.hidden) refresh();
}, pollMs);

// ---------------------------------------------------------------- pages

// overviewPage: upstream health with the tool calls through each, tasks by
// status, calls per minute, the vector outbox backlog.
function overviewPage(root) {
  const cards = region({ class: 'cards' });
  const ups = region();
  let prev = null; // {at, calls}: the per-minute rate is the difference of two polls
  let rate = null;
  root.append(h('h1', { text: 'Overview' }), cards, section('Upstreams', ups));
  return {
    async refresh() {
      const [summary, upstreams, perf] = await Promise.all([
        api('/summary'), api('/upstreams'), api('/tools/performance', { query: { limit: 200 } }),
      ]);
      const tools = perf.items || [];
      const calls = tools.reduce((s, t) => s + t.calls, 0);
      const errors = tools.reduce((s, t) => s + t.errors, 0);
      const now = Date.now();
      if (prev && now > prev.at) rate = Math.max(0, ((calls - prev.calls) * 60000) / (now - prev.at));
      prev = { at: now, calls };
      cards.set({ summary, calls, errors, rate: rate === null ? null : Math.round(rate) }, (v) => [
        h('div', { class: 'card', id: 'card-tasks' }, h('h2', { text: 'Tasks' }),
          v.summary.tasks
            ? h('ul', { class: 'counts' }, Object.entries(v.summary.tasks).map(([st, n]) =>
              h('li', {}, link('#/tasks/?status=' + st, st), ' ', h('strong', { text: String(n) }))))
            : h('p', { text: 'unavailable' })),
        h('div', { class: 'card', id: 'card-calls' }, h('h2', { text: 'Tool calls' }),
          h('p', {}, h('strong', { text: v.rate === null ? '…' : String(v.rate) }), ' per minute (over the last poll)'),
          h('p', { text: `${v.calls} calls, ${v.errors} failed, in all` })),
        h('div', { class: 'card', id: 'card-outbox' }, h('h2', { text: 'Vector outbox' }),
          v.summary.outbox
            ? [h('p', {}, h('strong', { text: String(v.summary.outbox.pending) }), ' pending'),
              h('p', { text: v.summary.outbox.oldest ? 'oldest ' + fmtAgo(v.summary.outbox.oldest) : 'the index is up to date' })]
            : h('p', { text: 'unavailable' })),
        (v.summary.problems || []).length ? h('p', { class: 'error', text: v.summary.problems.join('; ') }) : null,
      ]);
      const byUpstream = new Map();
      for (const t of tools) {
        const i = t.tool.indexOf('__');
        if (i < 0) continue;
        const u = t.tool.slice(0, i);
        const agg = byUpstream.get(u) || { calls: 0, errors: 0, p95: 0 };
        agg.calls += t.calls;
        agg.errors += t.errors;
        agg.p95 = Math.max(agg.p95, t.p95Ms || 0);
        byUpstream.set(u, agg);
      }
      const rows = (upstreams.items || []).map((u) => ({ u, agg: byUpstream.get(u.name) || { calls: 0, errors: 0, p95: null } }));
      ups.set(rows, (rs) => table('Upstreams and their health', ['Upstream', 'State', 'Since', 'Tools', 'Calls', 'Errors', 'Slowest p95', 'In flight', 'Last error'],
        rs.map(({ u, agg }) => [
          link('#/upstreams/' + encodeURIComponent(u.name), u.name), h('span', { class: 'upstream-state', 'data-upstream': u.name }, badge(u.state)),
          fmtAgo(u.since), String(u.tools ?? 0), String(agg.calls), String(agg.errors), agg.p95 ? fmtMs(agg.p95) : '—',
          String(u.inFlight ?? 0), u.lastError ? u.lastError + ' (' + fmtAgo(u.lastErrorAt) + ')' : '—',
        ]), 'No upstream is configured. Add one on the Upstreams page.'));
    },
  };
}

const taskStatuses = ['pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];

function tasksPage(root, arg) {
  if (arg && !arg.startsWith('?')) return taskPage(root, arg);
  const params = new URLSearchParams(arg ? arg.slice(1) : '');
  const filter = { status: params.get('status') || '', principal: '', cursor: '' };
  const statusSel = select('status', [['', 'any'], ...taskStatuses.map((s) => [s, s])], filter.status);
  const principal = h('input', { type: 'text', name: 'principal' });
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter tasks' },
    field('Status', statusSel), field('Principal', principal), h('button', { type: 'submit', text: 'Filter' }));
  const list = region();
  const more = h('div', { class: 'pager' });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    Object.assign(filter, { status: statusSel.value, principal: principal.value.trim(), cursor: '' });
    refresh();
  });
  root.append(h('h1', { text: 'Tasks' }), form, list, more);
  return {
    async refresh() {
      const res = await api('/tasks', { query: { status: filter.status, principal: filter.principal, cursor: filter.cursor, limit: 50 } });
      list.set(res.items, (items) => table('Tasks', ['Task', 'Request', 'Status', 'Steps', 'Created', 'Updated'], items.map((t) => [
        link('#/tasks/' + t.id, t.id), t.request, badge(t.status),
        Object.entries(t.stepCounts || {}).map(([k, n]) => `${n} ${k}`).join(', ') || '—', fmtTime(t.createdAt), fmtAgo(t.updatedAt),
      ]), 'No task matches.'));
      more.replaceChildren(
        filter.cursor ? h('button', { type: 'button', text: 'First page', onclick: () => { filter.cursor = ''; refresh(); } }) : '',
        res.next ? h('button', { type: 'button', text: 'Next page', onclick: () => { filter.cursor = res.next; refresh(); } }) : '');
    },
  };
}

function stepDuration(s) {
  if (!s.startedAt || s.startedAt.startsWith('0001-')) return null;
  const end = s.endedAt && !s.endedAt.startsWith('0001-') ? new Date(s.endedAt) : new Date();
  return end - new Date(s.startedAt);
}

// taskPage: the plan as a DAG with each step's state, the steps' details,
// the history, and cancel.
function taskPage(root, id) {
  const head = region();
  const actions = h('div', { class: 'actions' });
  const dag = region({ class: 'dag-wrap' });
  const steps = region();
  const timeline = region();
  let selected = '';
  root.append(h('p', {}, link('#/tasks', '← Tasks')), head, actions,
    section('Plan', dag), section('Steps', steps), section('Timeline', timeline));
  let lastStatus = '';
  return {
    async refresh() {
      const t = await api('/tasks/' + encodeURIComponent(id));
      const planSteps = (t.plan && t.plan.steps) || [];
      const byId = new Map((t.steps || []).map((s) => [s.stepId, s]));
      const events = t.history || [];
      const repairs = (sid) => events.filter((e) => e.stepId === sid && /repair|replace/.test(e.type)).length;
      const rows = (planSteps.length ? planSteps : (t.steps || []).map((s) => ({ id: s.stepId }))).map((p) => {
        const s = byId.get(p.id) || { status: 'pending', attempts: 0 };
        return { id: p.id, tool: p.tool || '', deps: p.dependsOn || [], description: p.description || '', s, repairs: repairs(p.id), ms: stepDuration(s) };
      });
      head.set({ id: t.id, request: t.request, status: t.status, error: t.error, createdAt: t.createdAt, endedAt: t.endedAt, principal: t.principal, goal: t.plan && t.plan.goal },
        (v) => [
          h('h1', {}, 'Task ', h('code', { text: v.id }), ' ', badge(v.status)),
          h('dl', { class: 'facts' },
            h('dt', { text: 'Request' }), h('dd', { text: v.request }),
            v.goal ? [h('dt', { text: 'Goal' }), h('dd', { text: v.goal })] : null,
            h('dt', { text: 'Created' }), h('dd', { text: fmtTime(v.createdAt) + (v.principal ? ' by ' + v.principal : '') }),
            h('dt', { text: 'Ended' }), h('dd', { text: fmtTime(v.endedAt) }),
            v.error ? [h('dt', { text: 'Error' }), h('dd', { class: 'error', text: v.error })] : null),
        ]);
      const ended = ['succeeded', 'failed', 'cancelled'].includes(t.status);
      // Redrawn when the status or what the task waits for changes, not at
      // every step, so that a half-answered confirmation stays put.
      const waitKey = t.status + ' ' + (t.steps || []).filter((s) => s.status.startsWith('waiting_')).map((s) => s.stepId + ':' + s.status + ':' + (s.error || '')).join(' ');
      if (waitKey !== lastStatus) {
        lastStatus = waitKey;
        actions.replaceChildren();
        if (!ended && canWrite()) {
          actions.append(confirmButton('Cancel task', 'Cancel this task? Running steps are stopped.', async () => {
            await api('/tasks/' + encodeURIComponent(id) + '/cancel', { method: 'POST', body: {} });
            say('Task cancelled');
            await refresh();
          }, 'cancel-task'));
        }
        const waiting = t.status === 'paused' ? (t.steps || []).filter((s) => s.status === 'waiting_input' || s.status === 'waiting_confirmation') : [];
        if (waiting.length && canWrite()) actions.append(resumeForm(id, waiting));
        else if (waiting.length) {
          actions.append(h('p', { class: 'note', text: 'Waiting for ' + waiting.map((s) => `${s.stepId} (${s.status.replace('waiting_', '')})`).join(', ') + '.' }));
        }
      }
      const select = (sid) => {
        selected = sid;
        for (const tr of steps.querySelectorAll('tr[data-step]')) tr.classList.toggle('selected', tr.dataset.step === sid);
        const row = steps.querySelector(`tr[data-step="${CSS.escape(sid)}"]`);
        if (row) row.scrollIntoView({ block: 'nearest' });
      };
      dag.set(rows.map((r) => [r.id, r.tool, r.deps, r.s.status, r.s.attempts, r.repairs, r.ms === null ? null : Math.round(r.ms / 100)]), () => {
        if (!rows.length) return h('p', { class: 'empty', text: 'This task has no stored plan.' });
        return draw(rows.map((r) => ({
          id: r.id, tool: r.tool, deps: r.deps, status: r.s.status,
          lines: [`${r.s.status} · ${r.s.attempts || 0} attempt${r.s.attempts === 1 ? '' : 's'} · ${fmtMs(r.ms)}${r.repairs ? ' · ' + r.repairs + ' repaired' : ''}`],
          description: r.description,
        })), { title: 'Plan of task ' + id, onSelect: select });
      });
      steps.set(rows.map((r) => [r, r.s.output, r.s.error]), () => {
        const tbl = table('Steps', ['Step', 'Tool', 'State', 'Attempts', 'Duration', 'Repairs', 'Output', 'Error'], rows.map((r) => [
          h('span', { text: r.id, title: r.description || null }), h('code', { text: r.tool || '—' }), badge(r.s.status), String(r.s.attempts || 0),
          fmtMs(r.ms), String(r.repairs), pre(r.s.output), r.s.error || '—',
        ]));
        tbl.querySelectorAll && tbl.querySelectorAll('tbody tr').forEach((tr, i) => {
          tr.dataset.step = rows[i].id;
          if (rows[i].id === selected) tr.classList.add('selected');
        });
        return tbl;
      });
      timeline.set(events, (evs) => evs.length
        ? h('ol', { class: 'timeline' }, evs.map((e) => h('li', {},
          h('time', { datetime: e.at, text: fmtTime(e.at) }), ' ', h('strong', { text: e.type }),
          e.stepId ? [' ', h('code', { text: e.stepId })] : null, e.message ? ' — ' + e.message : '')))
        : h('p', { class: 'empty', text: 'No history yet.' }));
    },
  };
}

// resumeForm answers a paused task: each step waiting for a confirmation
// is confirmed or rejected, inputs are given as a JSON object.
function resumeForm(id, waiting) {
  const send = async (body) => {
    await api('/tasks/' + encodeURIComponent(id) + '/resume', { method: 'POST', body });
    say('Task resumed');
    await refresh();
  };
  const box = h('div', { class: 'resume' }, h('h2', { text: 'The task waits for you' }));
  for (const s of waiting.filter((w) => w.status === 'waiting_confirmation')) {
    box.append(h('p', {}, h('code', { text: s.stepId }), ' asks for a confirmation', s.error ? ': ' + s.error : '', ' ',
      h('button', { type: 'button', id: 'confirm-' + s.stepId, text: 'Confirm ' + s.stepId, onclick: () => send({ confirm: [s.stepId] }).catch((e) => say(describe(e))) }), ' ',
      h('button', { type: 'button', id: 'reject-' + s.stepId, text: 'Reject ' + s.stepId, onclick: () => send({ reject: [s.stepId] }).catch((e) => say(describe(e))) })));
  }
  const needInputs = waiting.filter((w) => w.status === 'waiting_input');
  if (needInputs.length) {
    const text = h('textarea', { name: 'inputs', rows: 3, spellcheck: 'false' }, '{}');
    const err = h('p', { class: 'error', role: 'alert' });
    const form = h('form', { 'aria-label': 'Give inputs' },
      h('p', { text: needInputs.map((s) => `${s.stepId} needs inputs${s.error ? ': ' + s.error : ''}`).join('; ') }),
      field('Inputs (a JSON object)', text), h('button', { type: 'submit', text: 'Give inputs' }), err);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      let inputs;
      try {
        inputs = JSON.parse(text.value);
        if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) throw new Error('not an object');
      } catch (e) {
        err.textContent = 'The inputs must be a JSON object: ' + e.message;
        return;
      }
      try {
        await send({ inputs });
      } catch (e) {
        err.textContent = describe(e);
      }
    });
    box.append(form);
  }
  return box;
}

const outcomes = ['success', 'partial', 'failure', 'cancelled'];
const insightTypes = ['observation', 'best_practice', 'pitfall', 'preference'];

function learningsPage(root) {
  const q = h('input', { type: 'search', name: 'q', placeholder: 'what was tried, in your words' });
  const tool = h('input', { type: 'text', name: 'tool' });
  const outcome = select('status', [['', 'any'], ...outcomes.map((o) => [o, o])]);
  const upstream = h('input', { type: 'text', name: 'upstream' });
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Search learnings' },
    field('Search by meaning', q), field('Tool', tool), field('Outcome', outcome), field('Upstream', upstream),
    h('button', { type: 'submit', text: 'Search' }));
  const filter = {};
  const results = region({ id: 'learning-results' });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    Object.assign(filter, { q: q.value.trim(), tool: tool.value.trim(), status: outcome.value, upstream: upstream.value.trim() });
    refresh();
  });

  const text = h('textarea', { name: 'text', rows: 2, required: true });
  const type = select('type', insightTypes.map((t) => [t, t.replace('_', ' ')]));
  const applies = h('input', { type: 'text', name: 'appliesTo', placeholder: 'tool or upstream names, comma-separated' });
  const conf = h('input', { type: 'number', name: 'confidence', min: 0, max: 1, step: 0.1, value: 0.5 });
  const insightForm = h('form', { class: 'filters', 'aria-label': 'Record an insight' },
    field('Insight', text), field('Type', type), field('Applies to', applies), field('Confidence', conf),
    h('button', { type: 'submit', text: 'Record insight' }));
  insightForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const body = { text: text.value.trim(), type: type.value, confidence: Number(conf.value) };
      const at = applies.value.split(',').map((s) => s.trim()).filter(Boolean);
      if (at.length) body.appliesTo = at;
      await api('/insights', { method: 'POST', body });
      text.value = '';
      say('Insight recorded');
      await refresh();
    } catch (e) {
      say(describe(e));
    }
  });
  const insights = region();
  const patterns = region();
  root.append(h('h1', { text: 'Learnings' }), form, results,
    section('Insights', canWrite() ? insightForm : null, insights), section('Plan patterns', patterns));
  return {
    async refresh() {
      const [ls, ins, pats] = await Promise.all([
        api('/learnings', { query: { ...filter, limit: 50 } }), api('/insights', { query: { limit: 100 } }), api('/patterns', { query: { limit: 100 } }),
      ]);
      results.set(ls, (v) => [
        h('p', { class: 'note', text: filter.q ? `Ranked by ${v.mode === 'semantic' ? 'meaning' : 'words (the vector index is unavailable)'}.` : 'Newest first.' }),
        table('Learnings', ['Request', 'Outcome', 'Plan pattern', 'Duration', 'Retries', 'Errors', filter.q ? 'Score' : 'When'], v.items.map((l) => [
          h('span', { text: l.query || l.goal, title: l.goal || null }), badge(l.outcome), h('code', { text: (l.steps || []).join(' → ') || '—' }),
          fmtMs(l.durationNs / 1e6), String(l.retries || 0), (l.errors || []).join('; ') || '—',
          filter.q ? (l.score ?? 0).toFixed(3) : fmtTime(l.createdAt),
        ]), 'No learning matches.'),
      ]);
      insights.set(ins.items, (items) => table('Insights', ['Insight', 'Type', 'Applies to', 'Confidence', 'Source', 'Actions'], items.map((i) => [
        i.text, i.type.replace('_', ' '), (i.appliesTo || []).join(', ') || '—', pct(i.confidence), i.source || '—',
        canWrite() ? confirmButton('Delete', 'Delete this insight?', async () => {
          await api('/insights/' + encodeURIComponent(i.id), { method: 'DELETE', body: {} });
          say('Insight deleted');
          await refresh();
        }, 'delete-' + i.id) : '',
      ]), 'No insight yet.'));
      patterns.set(pats.items, (items) => table('Plan patterns', ['Goal', 'Steps', 'Uses', 'Success rate', 'Last used'], items.map((p) => [
        p.goal, h('code', { text: (p.steps || []).join(' → ') }), String(p.uses), pct(p.successRate), fmtAgo(p.lastUsed),
      ]), 'No plan pattern yet.'));
    },
  };
}

// refreshListingCost shows the tokens (one per 4 bytes of JSON) and bytes of a whole tools/list per catalog mode
// and per virtual server, and what discovery mode saves against the full listing.
async function refreshListingCost(region) {
  const c = await api('/tools/listing-cost');
  const saving = (tokens, full) => (full > 0 ? pct(1 - tokens / full) : '—');
  const full = (c.modes.find((m) => m.mode === 'full') || {}).tokens || 0;
  region.set(c, (v) => [
    table('Per catalog mode', ['Mode', 'Tools', 'Bytes', 'Tokens (approx.)', 'Saving', 'Pages answered'], v.modes.map((m) => [
      m.mode, String(m.tools), String(m.bytes), String(m.tokens), saving(m.tokens, full), String(m.listed.pages),
    ])),
    table('Per virtual server', ['Virtual server', 'Mode', 'Full: tokens', 'Discovery: tokens', 'Saving'], (v.virtualServers || []).map((s) => [
      h('code', { text: '/mcp/' + s.name }), s.mode || 'default', `${s.full.tokens} (${s.full.tools} tools, ${s.full.bytes} B)`,
      `${s.discovery.tokens} (${s.discovery.tools} tools, ${s.discovery.bytes} B)`, saving(s.discovery.tokens, s.full.tokens),
    ]), 'No virtual server is defined.'),
    h('p', { class: 'note', text: 'Tokens: ' + v.tokenizer }),
  ]);
}

function reliability(t) {
  if (t.consecutiveFailures >= 3) return h('span', { class: 'badge st-failed', text: `failing (${t.consecutiveFailures} in a row)` });
  if (t.consecutiveFailures > 0) return h('span', { class: 'badge st-degraded', text: 'last call failed' });
  return h('span', { class: 'badge st-ready', text: 'ok' });
}

// toolsPage: the catalog with each tool's performance, and a search that
// ranks as the search_tools tool does (GET /tools?q= asks the same index).
function toolsPage(root) {
  const q = h('input', { type: 'search', name: 'q', placeholder: 'what you want done' });
  const scope = select('scope', [['all', 'all'], ['local', 'local'], ['remote', 'remote']]);
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Search tools' },
    field('Search tools (as search_tools ranks)', q), field('Scope', scope), h('button', { type: 'submit', text: 'Search' }));
  const filter = { q: '', scope: 'all' };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    Object.assign(filter, { q: q.value.trim(), scope: scope.value });
    refresh();
  });
  const list = region({ id: 'tool-results' });
  // What a tools/list costs a client's model, per catalog mode and per virtual server (GET /tools/listing-cost).
  const cost = region({ id: 'listing-cost' });
  root.append(h('h1', { text: 'Tools' }), form, list, section('What tools/list costs', cost));
  return {
    async refresh() {
      refreshListingCost(cost).catch((e) => cost.fail(e));
      const [cat, perf] = await Promise.all([
        api('/tools', { query: { q: filter.q, scope: filter.scope, limit: filter.q ? 20 : undefined } }),
        api('/tools/performance', { query: { limit: 200 } }),
      ]);
      const stats = new Map((perf.items || []).map((t) => [t.tool, t]));
      list.set({ cat, perf: perf.items, q: filter.q }, (v) => [
        v.q ? h('p', { class: 'note', text: `Ranked ${v.cat.mode === 'hybrid' ? 'by words and meaning' : 'by words'}, best first.${v.cat.note ? ' ' + v.cat.note : ''}` }) : null,
        table('Tools', ['Tool', 'Source', v.q ? 'Why' : 'Description', 'Calls', 'Success rate', 'p50', 'p95', 'Common errors', 'Reliability'], v.cat.items.map((t) => {
          const st = stats.get(t.name);
          return [
            h('code', { text: t.name }), t.source, h('span', { class: 'desc', text: (v.q ? t.why : t.description) || '—' }),
            st ? String(st.calls) : '0', st ? pct(st.successRate) : '—', st ? fmtMs(st.p50Ms) : '—', st ? fmtMs(st.p95Ms) : '—',
            st ? Object.entries(st.commonErrors || {}).map(([k, n]) => `${k} ×${n}`).join(', ') || '—' : '—', st ? reliability(st) : 'not called yet',
          ];
        }), v.q ? 'No tool matches.' : 'The catalog is empty.'),
      ]);
    },
  };
}

function upstreamsPage(root, name) {
  if (name) return upstreamPage(root, name);
  const nameIn = h('input', { type: 'text', name: 'name', required: true, pattern: '[A-Za-z0-9_\\-]+' });
  const transport = select('transport', [['streamable', 'streamable HTTP'], ['sse', 'SSE (legacy)']]);
  const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'http://127.0.0.1:3001/mcp' });
  const form = h('form', { class: 'filters', 'aria-label': 'Add an upstream' },
    field('Name', nameIn), field('Transport', transport), field('URL', url), h('button', { type: 'submit', text: 'Add upstream' }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await api('/upstreams', { method: 'POST', body: { name: nameIn.value.trim(), transport: transport.value, url: url.value.trim() } });
      say('Upstream ' + nameIn.value + ' added');
      nameIn.value = url.value = '';
      await refresh();
    } catch (e) {
      say(describe(e));
    }
  });
  const list = region();
  // The virtual servers: curated views of the catalog at /mcp/<name>, read-only here.
  const virtuals = region();
  root.append(h('h1', { text: 'Upstreams' }), canWrite() ? section('Add an upstream', form) : null, section('Configured', list),
    section('Virtual servers', virtuals));
  return {
    async refresh() {
      const vs = await api('/virtual-servers');
      virtuals.set(vs.items, (items) => table('Virtual servers', ['Name', 'Endpoint', 'Title', 'Catalog mode', 'Source'], items.map((v) => [
        v.name, h('code', { text: '/mcp/' + v.name }), v.title || '—', v.catalog_mode || 'default', v.source,
      ]), 'No virtual server is defined.'));
      const res = await api('/upstreams');
      list.set(res.items, (items) => table('Upstreams', ['Upstream', 'Transport', 'Address', 'State', 'Tools', 'Origin', 'Last error', 'Actions'], items.map((u) => [
        link('#/upstreams/' + encodeURIComponent(u.name), u.name), u.transport, h('code', { text: u.url || u.command || '—' }), badge(u.state),
        String(u.tools ?? 0), u.origin, u.lastError || '—',
        canWrite() ? h('span', { class: 'row-actions' },
          h('button', { type: 'button', text: 'Refresh', 'aria-label': 'Refresh ' + u.name, onclick: async () => {
            try {
              await api('/upstreams/' + encodeURIComponent(u.name) + '/refresh', { method: 'POST', body: {} });
              say('Refreshing ' + u.name);
            } catch (e) {
              say(describe(e));
            }
          } }),
          confirmButton('Remove', `Remove ${u.name}?`, async () => {
            await api('/upstreams/' + encodeURIComponent(u.name), { method: 'DELETE', body: {} });
            say('Upstream ' + u.name + ' removed');
            await refresh();
          }, 'remove-' + u.name)) : '',
      ]), 'No upstream is configured.'));
    },
  };
}

// upstreamPage: one upstream's health, its tools, and its state history
// as the server that answers keeps it.
function upstreamPage(root, name) {
  const facts = region();
  const tools = region();
  const hist = region();
  root.append(h('p', {}, link('#/upstreams', '← Upstreams')), h('h1', {}, 'Upstream ', h('code', { text: name })),
    facts, section('State history', h('p', { class: 'note', text: 'The last changes, oldest first, as the answering server saw them; each server keeps its own, and starts over when it restarts.' }), hist), section('Tools', tools));
  return {
    async refresh() {
      const u = await api('/upstreams/' + encodeURIComponent(name));
      facts.set({ ...u, exposedTools: undefined, inFlight: undefined, history: undefined }, (v) => h('dl', { class: 'facts' },
        [['State', badge(v.state)], ['Since', fmtTime(v.since)], ['Transport', v.transport], ['Address', v.url || v.command || '—'],
          ['Server', v.serverName ? `${v.serverName} ${v.serverVersion || ''}` : '—'], ['Protocol', v.protocolVersion || '—'],
          ['Failed attempts', String(v.failedAttempts || 0)], ['Next attempt', fmtTime(v.nextAttemptAt)], ['Breaker', v.breaker || '—'],
          ['Last error', v.lastError || '—']].map(([k, val]) => [h('dt', { text: k }), h('dd', {}, val)])));
      hist.set(u.history, (hs) => h('ol', { class: 'timeline' }, (hs || []).map((x) => h('li', {}, h('time', { text: fmtTime(x.at) }), ' ', badge(x.state), x.reason ? ' — ' + x.reason : ''))));
      tools.set(u.exposedTools, (ts) => table('Tools of ' + name, ['Tool', 'Description'], (ts || []).map((t) => [h('code', { text: t.name }), t.description || '—']), 'No tool.'));
    },
  };
}

const auditKinds = ['tool_call', 'admin_write', 'auth_failure', 'mcp_read', 'mcp_write'];

function auditPage(root) {
  const principal = h('input', { type: 'text', name: 'principal' });
  const kind = select('kind', [['', 'any'], ...auditKinds.map((k) => [k, k])]);
  const target = h('input', { type: 'text', name: 'target' });
  const outcome = select('outcome', [['', 'any'], ['ok', 'ok'], ['error', 'error'], ['denied', 'denied']]);
  const requestId = h('input', { type: 'text', name: 'requestId' });
  const filter = { cursor: '' };
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter the audit trail' },
    field('Principal', principal), field('Kind', kind), field('Target', target), field('Outcome', outcome), field('Request id', requestId),
    h('button', { type: 'submit', text: 'Filter' }));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    Object.assign(filter, { principal: principal.value.trim(), kind: kind.value, target: target.value.trim(), outcome: outcome.value, requestId: requestId.value.trim(), cursor: '' });
    refresh();
  });
  const list = region();
  const more = h('div', { class: 'pager' });
  root.append(h('h1', { text: 'Audit' }), form, list, more);
  return {
    async refresh() {
      const res = await api('/audit', { query: { ...filter, limit: 100 } });
      list.set(res.items, (items) => table('Audit trail', ['When', 'Principal', 'Kind', 'Target', 'Outcome', 'Latency', 'Error'], items.map((e) => [
        fmtTime(e.at), e.principal, e.kind, h('code', { text: e.target }), badge(e.outcome), fmtMs((e.latencyNs || 0) / 1e6), e.error || '—',
      ]), 'No entry matches.'));
      more.replaceChildren(
        filter.cursor ? h('button', { type: 'button', text: 'First page', onclick: () => { filter.cursor = ''; refresh(); } }) : '',
        res.next ? h('button', { type: 'button', text: 'Next page', onclick: () => { filter.cursor = res.next; refresh(); } }) : '');
    },
  };
}

// ---------------------------------------------------------------- start

(async function start() {
  const saved = credential.get();
  if (saved === null) return showSignIn();
  try {
    me = await api('/whoami');
  } catch (e) {
    credential.clear();
    return showSignIn(describe(e));
  }
  enter();
})();
