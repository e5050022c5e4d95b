// Attacks, each performed against the real binary and each expected to be refused. The
// egress (SSRF, credentials that follow redirects) and allowlist attacks are in
// security-egress.test.mjs and security-allowlist.test.mjs; tasks and memory of other principals in
// security-tasks.test.mjs and security-memory.test.mjs.
//
// Three agents-mcp instances of the test's own, each on a temp data dir:
//   - open:  `make run`'s defaults (no credentials, loopback), the target of DNS rebinding and
//            cross-site requests from a web page (finding 1);
//   - keyed: API keys full, b, slow (1 request a second, burst 3) and slow2 (burst 4), for batches
//            (finding 4), sessions and ids (finding 8);
//   - flood: one key, flooded with wrong ones (finding 6), then restarted on its data dir to read
//            the summarised trail.
//
//   1. a Host of another name is refused on every route (admin API, health, metrics, MCP), while the
//      connection's own IP passes; admin writes need JSON and a same-origin or absent Origin, even
//      without a body;
//   4. a batch costs one request per message: over the limit it is refused (400), beyond the
//      caller's rate 429, on POST /sse and on a /mcp session of 2025-03-26 without
//      MCP-Protocol-Version;
//   6. wrong keys: 401 up to the burst, then 429 with Retry-After from the same address, while the
//      right key still gets in; /metrics counts every failure; the audit trail holds the first 5
//      entries of the minute as they came and, once the window is closed (here: at shutdown), one
//      summary with the count of the others;
//   8. a session id of another key is answered exactly as an unknown one; a session that never
//      completes initialize is closed within seconds; a fractional JSON-RPC id is refused.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { BIN } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';
import { raw, show } from './lib/raw.mjs';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const KEYS = { full: secret('sec-full'), b: secret('sec-b'), slow: secret('sec-slow'), slow2: secret('sec-slow2') };
const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' };

const rpc = (id, method, params) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const initialize = (version = '2025-11-25') =>
  JSON.stringify(rpc(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'security-e2e', version: '1' } }));
const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
const batchOf = (n) => JSON.stringify(Array.from({ length: n }, (_, i) => rpc(i + 1, 'tools/call', { name: 'search_tools', arguments: { query: 'search' } })));

async function serve(name, config, env = {}) {
  const work = mkdtempSync(path.join(tmpdir(), `agents-mcp-sec-${name}-`));
  const configPath = path.join(work, 'config.yaml');
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 }); // JSON is YAML
  const dataDir = path.join(work, 'data');
  const agents = await startAgents(BIN, configPath, dataDir, { env, readyMs: 30_000 });
  return { ...agents, work, configPath, dataDir, env };
}

async function close(s) {
  if (!s) return;
  await stop(s.p, 'SIGTERM', 10_000);
  rmSync(s.work, { recursive: true, force: true });
}

/** Opens a streamable session as key; complete: also sends notifications/initialized. */
async function openSession(base, key, { version = '2025-11-25', complete = true } = {}) {
  const res = await raw(base, '/mcp', { method: 'POST', key, body: initialize(version), headers: MCP_ACCEPT });
  const sid = res.headers['mcp-session-id'];
  assert.equal(res.status, 200, `initialize: ${show(res)}`);
  assert.ok(sid, 'initialize answered without Mcp-Session-Id');
  if (complete) {
    const ack = await raw(base, '/mcp', { method: 'POST', key, body: initialized, headers: { ...MCP_ACCEPT, 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': version } });
    assert.equal(ack.status, 202, `notifications/initialized: ${show(ack)}`);
  }
  return sid;
}

describe('security: rebinding and cross-site requests against make run defaults (finding 1)', () => {
  let open;
  before(async () => {
    open = await serve('open', {});
  }, { timeout: 40_000 });
  after(() => close(open), { timeout: 20_000 });

  test('a Host of another name is refused on every route; the connection\'s own IP passes', { timeout: 20_000 }, async () => {
    const { base } = open;
    const port = new URL(base).port;
    const routes = [
      { method: 'GET', path: '/admin/v1/audit' },
      { method: 'GET', path: '/admin/v1/tasks' },
      { method: 'POST', path: '/admin/v1/upstreams', body: JSON.stringify({ name: 'evil', transport: 'streamable', url: 'http://127.0.0.1:9/mcp' }) },
      { method: 'POST', path: '/admin/v1/reindex', body: '{}' },
      { method: 'GET', path: '/healthz' },
      { method: 'GET', path: '/readyz' },
      { method: 'GET', path: '/metrics' },
      { method: 'POST', path: '/mcp', body: initialize(), headers: MCP_ACCEPT },
    ];
    for (const r of routes) {
      const evil = await raw(base, r.path, { ...r, headers: { ...r.headers, Host: `evil.example:${port}` } });
      assert.equal(evil.status, 403, `${r.method} ${r.path} with Host evil.example: ${show(evil)}`);
    }
    // What a DNS-rebinding page cannot send: the IP itself. Probes do (Kubernetes: the pod's IP).
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const ok = await raw(base, '/healthz', { headers: { Host: host } });
      assert.equal(ok.status, 200, `/healthz with Host ${host}: ${show(ok)}`);
    }
    const audit = await raw(base, '/admin/v1/audit?kind=admin_write', {});
    assert.equal(audit.status, 200, show(audit));
    assert.ok(!audit.text.includes('"evil"'), `a refused admin write reached the API: ${audit.text.slice(0, 500)}`);
    const ups = await raw(base, '/admin/v1/upstreams', {});
    assert.ok(!ups.text.includes('"evil"'), `the rebinding page added an upstream: ${ups.text.slice(0, 500)}`);
  });

  test('admin writes need Content-Type: application/json and a same-origin or absent Origin, even without a body', { timeout: 20_000 }, async () => {
    const { base } = open;
    const host = new URL(base).host;
    const cases = [
      { what: 'cross-site, no body', headers: { Origin: 'https://evil.example' }, want: 403 },
      { what: 'cross-site with JSON', headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' }, body: '{}', want: 403 },
      { what: 'another loopback origin', headers: { Origin: 'http://localhost:3000', 'Content-Type': 'application/json' }, body: '{}', want: 403 },
      { what: 'no Content-Type, no body', headers: {}, want: 415 },
      { what: 'a form', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'a=b', want: 415 },
      { what: 'text/plain (a no-preflight fetch)', headers: { 'Content-Type': 'text/plain' }, body: '{}', want: 415 },
    ];
    for (const c of cases) {
      const res = await raw(base, '/admin/v1/reindex', { method: 'POST', headers: c.headers, body: c.body });
      assert.equal(res.status, c.want, `${c.what}: ${show(res)}`);
    }
    const ok = await raw(base, '/admin/v1/reindex', { method: 'POST', headers: { Origin: `http://${host}`, 'Content-Type': 'application/json' } });
    assert.equal(ok.status, 202, `a same-origin JSON write without a body: ${show(ok)}`);
  });
});

describe('security: keys, batches, sessions, ids (findings 4 and 8)', () => {
  let keyed;
  before(async () => {
    keyed = await serve('keyed', {
      auth: {
        api_keys: [
          { name: 'b', key: KEYS.b, scopes: ['mcp'] },
          { name: 'slow', key: KEYS.slow, scopes: ['mcp'], rate_limit: 0.001, burst: 3 },
          { name: 'slow2', key: KEYS.slow2, scopes: ['mcp'], rate_limit: 0.001, burst: 4 },
        ],
      },
    }, { AGENTS_MCP_API_KEYS: KEYS.full });
  }, { timeout: 40_000 });
  after(() => close(keyed), { timeout: 20_000 });

  test('a batch on POST /sse is charged per message and bounded', { timeout: 20_000 }, async () => {
    const { base } = keyed;
    const huge = await raw(base, '/sse', { method: 'POST', key: KEYS.slow, body: batchOf(1000) });
    assert.equal(huge.status, 400, `a batch of 1,000: ${show(huge)}`);
    assert.match(huge.json?.error?.message ?? '', /exceeds the limit/);
    const ten = await raw(base, '/sse', { method: 'POST', key: KEYS.slow, body: batchOf(10) });
    assert.equal(ten.status, 429, `a batch of 10 with 2 requests left: ${show(ten)}`);
    assert.ok(Number(ten.headers['retry-after']) >= 1, 'no Retry-After');
    assert.ok(!ten.text.includes('"result"'), 'calls of a refused batch ran');
    // The refused batch cost only its HTTP request: exactly one more request gets through.
    const one = await raw(base, '/sse', { method: 'POST', key: KEYS.slow, body: JSON.stringify(rpc(1, 'tools/list')) });
    assert.equal(one.status, 200, `the last request of the burst: ${show(one)}`);
    const two = await raw(base, '/sse', { method: 'POST', key: KEYS.slow, body: batchOf(2) });
    assert.equal(two.status, 429, `a batch on an empty bucket: ${show(two)}`);
  });

  test('a batch on a /mcp session of 2025-03-26 without MCP-Protocol-Version is charged per message', { timeout: 20_000 }, async () => {
    const { base } = keyed;
    const sid = await openSession(base, KEYS.slow2, { version: '2025-03-26' }); // 2 of 4 requests
    const three = await raw(base, '/mcp', { method: 'POST', key: KEYS.slow2, body: batchOf(3), headers: { ...MCP_ACCEPT, 'Mcp-Session-Id': sid } });
    assert.equal(three.status, 429, `a batch of 3 with 2 requests left: ${show(three)}`);
    // The full key, not limited this tightly, runs the same batch.
    const fsid = await openSession(base, KEYS.full, { version: '2025-03-26' });
    const ok = await raw(base, '/mcp', { method: 'POST', key: KEYS.full, body: batchOf(3), headers: { ...MCP_ACCEPT, 'Mcp-Session-Id': fsid } });
    assert.equal(ok.status, 200, show(ok));
    assert.equal((ok.text.match(/"result"/g) ?? []).length, 3, `a batch of 3: ${ok.text.slice(0, 300)}`);
  });

  test('a session id of another key gets the answer of an unknown id', { timeout: 20_000 }, async () => {
    const { base } = keyed;
    const sid = await openSession(base, KEYS.full);
    const ping = JSON.stringify(rpc(7, 'ping'));
    for (const method of ['POST', 'GET', 'DELETE']) {
      const send = (id) =>
        raw(base, '/mcp', { method, key: KEYS.b, body: method === 'POST' ? ping : undefined, headers: { ...MCP_ACCEPT, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-11-25' } });
      const foreign = await send(sid);
      const unknown = await send(`sec-no-such-${randomBytes(8).toString('hex')}`);
      assert.equal(foreign.status, 404, `${method} with a foreign session id: ${show(foreign)}`);
      assert.equal(foreign.status, unknown.status, method);
      assert.equal(foreign.text, unknown.text, `${method}: the bodies tell foreign from unknown`);
    }
    const own = await raw(base, '/mcp', { method: 'POST', key: KEYS.full, body: ping, headers: { ...MCP_ACCEPT, 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-11-25' } });
    assert.equal(own.status, 200, `the owner's session after the tries: ${show(own)}`);
  });

  test('a session that never completes initialize is closed within seconds', { timeout: 30_000 }, async () => {
    const { base } = keyed;
    const bare = await openSession(base, KEYS.b, { complete: false });
    const done = await openSession(base, KEYS.b);
    const ping = (sid) => raw(base, '/mcp', { method: 'POST', key: KEYS.b, body: JSON.stringify(rpc(3, 'ping')), headers: { ...MCP_ACCEPT, 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-11-25' } });
    // Polled with a GET of the session's stream, which is no JSON-RPC request: any request after
    // initialize counts as the end of the handshake (clients that skip notifications/initialized).
    const stream = (sid) => raw(base, '/mcp', { key: KEYS.b, headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-11-25' } });
    await eventually(
      async () => {
        const r = await stream(bare);
        assert.equal(r.status, 404, show(r));
      },
      20_000,
      'the bare session to be closed',
      500,
    );
    const still = await ping(done);
    assert.equal(still.status, 200, `the initialized session: ${show(still)}`);
  });

  test('a fractional JSON-RPC id is refused, not answered as its integer part', { timeout: 20_000 }, async () => {
    const { base } = keyed;
    for (const id of ['1.5', '2e0']) {
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`;
      for (const p of ['/mcp', '/sse']) {
        const res = await raw(base, p, { method: 'POST', key: KEYS.full, body, headers: { ...MCP_ACCEPT, 'Mcp-Protocol-Version': '2026-07-28' } });
        assert.equal(res.status, 400, `id ${id} on ${p}: ${show(res)}`);
        assert.equal(res.json?.error?.code, -32600, `id ${id} on ${p}: ${res.text}`);
        assert.ok(!res.text.includes('"result"'), `id ${id} on ${p} was answered`);
      }
    }
  });
});

describe('security: a flood of wrong keys (finding 6)', () => {
  let flood;
  const FLOOD = 200;
  before(async () => {
    flood = await serve('flood', {}, { AGENTS_MCP_API_KEYS: KEYS.full });
  }, { timeout: 40_000 });
  after(() => close(flood), { timeout: 20_000 });

  const failureCount = async (base) => {
    // Keys are configured: /metrics needs one (admin:read or metrics), the full key has both.
    const m = (await raw(base, '/metrics', { key: KEYS.full })).text;
    return m
      .split('\n')
      .filter((l) => l.startsWith('agents_mcp_auth_failures_total'))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  };

  test('401 up to the burst, then 429 per address; the right key still works; every failure counted; the trail stays small', { timeout: 60_000 }, async () => {
    const { base } = flood;
    const before = await failureCount(base);
    const statuses = {};
    for (let i = 0; i < FLOOD; i++) {
      const res = await raw(base, '/mcp', { method: 'POST', key: secret('wrong'), body: initialize(), headers: MCP_ACCEPT });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 429) assert.ok(Number(res.headers['retry-after']) >= 1, `429 without Retry-After: ${show(res)}`);
    }
    assert.ok(statuses[401] >= 20 && statuses[401] < 40, `401s: ${JSON.stringify(statuses)} (burst 20, 1/s)`);
    assert.equal(statuses[401] + statuses[429], FLOOD, JSON.stringify(statuses));
    const right = await raw(base, '/mcp', { method: 'POST', key: KEYS.full, body: initialize(), headers: MCP_ACCEPT });
    assert.equal(right.status, 200, `the right key from the flooded address: ${show(right)}`);
    assert.equal((await failureCount(base)) - before, FLOOD, 'the metric missed failures');

    // The first 5 of the window as they came (the recorder writes in batches: soon); the others
    // wait for the window's summary.
    await eventually(
      async () => {
        const r = await raw(base, '/admin/v1/audit?kind=auth_failure&limit=100', { key: KEYS.full });
        assert.ok(r.json?.items?.length >= 5, show(r));
      },
      10_000,
      'the first failures in the audit trail',
    );
    await new Promise((r) => setTimeout(r, 1000)); // anything more would be written by now
    const trail = await raw(base, '/admin/v1/audit?kind=auth_failure&limit=100', { key: KEYS.full });
    assert.equal(trail.status, 200, show(trail));
    assert.equal(trail.json.items.length, 5, `${trail.json.items.length} auth_failure entries for one flood in one window`);
  });

  test('after shutdown the summary accounts for every failure', { timeout: 60_000 }, async () => {
    await stop(flood.p, 'SIGTERM', 10_000); // closes the window: the summary is written
    const again = await startAgents(BIN, flood.configPath, flood.dataDir, { env: flood.env, readyMs: 30_000 });
    flood.p = again.p;
    const trail = await raw(again.base, '/admin/v1/audit?kind=auth_failure&limit=100', { key: KEYS.full });
    assert.equal(trail.status, 200, show(trail));
    const items = trail.json.items;
    assert.ok(items.length <= 12, `${items.length} entries: at most 5 and a summary per window`);
    const total = items.reduce((n, e) => n + (e.arguments?.count ?? 0), 0);
    assert.equal(total, FLOOD, `counts ${JSON.stringify(items.map((e) => e.arguments))}`);
    for (const e of items) assert.equal(e.arguments.source, '127.0.0.1', JSON.stringify(e));
  });
});
