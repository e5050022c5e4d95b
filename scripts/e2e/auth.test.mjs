// API keys end to end: the official TypeScript SDK client over streamable HTTP (/mcp) and legacy
// SSE (/sse + /messages) against an agents-mcp that requires credentials, plus raw HTTP requests for
// the exact answers.
//
// The test starts its own `agents-mcp serve --config` (temp data dir) with four keys:
//   - full:   AGENTS_MCP_API_KEYS, every scope, no allowlist;
//   - narrow: scopes [mcp], tools ["store_insight", "search_*"];
//   - reader: scopes [admin:read] only, so /mcp and /sse refuse it (403);
//   - slow:   scopes [mcp], rate_limit 0.01/s with burst 2, so its third request is refused (429).
// Every key is random per run; none may show up in an answer or in the server's log.
//
//   1. the full key connects over both transports and lists every tool;
//   2. no key and a wrong key: 401 with `WWW-Authenticate: Bearer …` and
//      {"error":{"code":"unauthenticated"}} on every MCP endpoint; the SDK cannot connect;
//   3. the admin-only key: 403 `forbidden` (insufficient_scope); the SDK cannot connect;
//   4. the narrow key: tools/list shows exactly its allowlist, store_insight works, hidden tools get
//      -32602 (tools/call and tools/validate), search_tools never names a hidden tool; 4b: it
//      cannot use a session of the full key (streamable Mcp-Session-Id, SSE /messages) either, and
//      is told 404, as for an unknown session;
//   5. the slow key: after its burst of 2 every request gets 429 with Retry-After, and the SDK
//      surfaces the error (mid-session on /mcp, at connect on /sse);
//   6. /metrics, read with a key of scope admin:read (keys are configured: without one it is 401, see
//      security-limits.test.mjs), counts the store_insight calls and the refusals (6b: exactly);
//   7. every answer, refused or not, and every answer the SDK clients received, carries
//      X-Request-Id; a valid id sent by the client is echoed, an invalid one replaced;
//   8. SIGTERM: the server exits 0, its log is JSON and holds no key.
//
// The Authorization header goes through the transports' `requestInit.headers`: SDK 1.32 sends
// those headers on the POSTs and also on the GET that opens the SSE stream (SSEClientTransport's
// _commonHeaders feeds its EventSource fetch), which test 1 checks on the wire through the
// transports' `fetch` option, so no `eventSourceInit.fetch` is needed.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, ValidateResultSchema, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';
import { raw, show } from './lib/raw.mjs';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const KEYS = {
  full: secret('e2e-full'),
  narrow: secret('e2e-narrow'),
  reader: secret('e2e-reader'),
  slow: secret('e2e-slow'),
  wrong: secret('e2e-wrong'), // configured nowhere
};
const ALLOWED = ['search_tools', 'store_insight']; // what the narrow key's patterns match
// Tools every agents-mcp serves; the full key must see them (and the narrow key must not see the
// ones outside its allowlist).
const CORE_TOOLS = ['query_memory', 'run_task', 'search_tools', 'store_insight', 'generate_plan', 'execute_task', 'get_task'];
const SLOW_RATE = 0.01; // requests/s: no token comes back during this file's run
const SLOW_BURST = 2;
const TRANSPORTS = ['streamable', 'sse'];
// SIGTERM to exit with every client gone. Not less: Go's http.Server.Shutdown counts a connection
// that has not sent a request yet as busy for up to 5 s, and undici (Node's fetch, under the SDK's
// SSE transport) leaves such a spare connection open after it closes.
const SHUTDOWN_MS = 7000;
const RUN = `${process.pid}-${Date.now().toString(36)}`;
const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/; // what the server accepts from a caller


function initializeBody(id = 1) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'agents-mcp-e2e-raw', version: '1.0.0' } },
  });
}

/** The MCP endpoints, each as a request that reaches the MCP layer once credentials pass. */
const ENDPOINTS = [
  { name: 'POST /mcp', method: 'POST', path: '/mcp', body: initializeBody() },
  { name: 'GET /mcp', method: 'GET', path: '/mcp', headers: { Accept: 'text/event-stream' } },
  { name: 'GET /sse', method: 'GET', path: '/sse', headers: { Accept: 'text/event-stream' } },
  { name: 'POST /messages', method: 'POST', path: '/messages?sessionId=e2e-no-such-session', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) },
  { name: 'POST /sse (compat)', method: 'POST', path: '/sse', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
];

/** A refusal of the auth middleware: status, JSON error code, Bearer challenge, no secret. */
function assertRefused(res, { status, code, what, presented }) {
  assert.equal(res.status, status, `${what}: ${show(res)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content-type`);
  assert.equal(res.json?.error?.code, code, `${what}: error code: ${res.text}`);
  assert.equal(typeof res.json?.error?.message, 'string', `${what}: error message: ${res.text}`);
  if (status === 401 || status === 403) {
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="agents-mcp"/, `${what}: WWW-Authenticate`);
  }
  assert.ok(res.headers['x-request-id'], `${what}: X-Request-Id`);
  if (presented !== undefined) assert.ok(!res.raw.includes(presented), `${what}: the presented key is in the answer:\n${res.raw}`);
  for (const k of Object.values(KEYS)) assert.ok(!res.raw.includes(k), `${what}: a key is in the answer:\n${res.raw}`);
}

// ---------------------------------------------------------------------------------------------
// Prometheus text

/** The sum of the samples of metric name whose labels include every one of labels. */
function metric(text, name, labels = {}) {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) {
      sum += Number(m[3]);
      found = true;
    }
  }
  return found ? sum : undefined;
}

// ---------------------------------------------------------------------------------------------
// SDK clients

/**
 * fetch for the SDK transports that records every exchange in wire:
 * { method, url, status, requestId, sentAuth, sentRequestId }.
 */
function recordingFetch(wire) {
  return async (url, init) => {
    const sent = new Headers(init?.headers);
    const res = await fetch(url, init);
    wire.push({
      method: init?.method ?? 'GET',
      url: String(url),
      status: res.status,
      requestId: res.headers.get('x-request-id'),
      sentAuth: sent.get('authorization'),
      sentRequestId: sent.get('x-request-id'),
    });
    return res;
  };
}

/**
 * A TS SDK client over kind ('streamable' → /mcp, 'sse' → /sse) presenting key (none when
 * undefined). Resolves with { client, transport, errors, wire, close } or rejects with the
 * connect error (the transport is closed then).
 */
async function connect(base, kind, key, { requestId } = {}) {
  const client = newClient();
  const errors = [];
  client.onerror = (err) => errors.push(err);
  const headers = {};
  if (key !== undefined) headers.Authorization = `Bearer ${key}`;
  if (requestId !== undefined) headers['X-Request-Id'] = requestId;
  const wire = [];
  const opts = { requestInit: { headers }, fetch: recordingFetch(wire) };
  const transport = kind === 'sse' ? new SSEClientTransport(new URL(`${base}/sse`), opts) : new StreamableHTTPClientTransport(new URL(`${base}/mcp`), opts);
  const close = async () => {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
  };
  try {
    await withTimeout(client.connect(transport), 10_000, `connect over ${kind}`);
  } catch (err) {
    await close();
    err.wire = wire;
    throw err;
  }
  return { client, transport, errors, wire, close };
}

// What the SDK saw on the wire in connects that failed as they should (for test 7).
const refusedWires = [];

/** The error of a connect that must fail. */
async function connectError(base, kind, key) {
  try {
    const c = await connect(base, kind, key);
    await c.close();
  } catch (err) {
    refusedWires.push(...(err.wire ?? []));
    return err;
  }
  assert.fail(`connect over ${kind} with ${key === undefined ? 'no key' : 'that key'} succeeded`);
}

async function toolNames(client) {
  const names = [];
  let cursor;
  for (let page = 0; page < 50; page++) {
    const res = await withTimeout(client.listTools(cursor ? { cursor } : undefined), 10_000, 'tools/list');
    names.push(...res.tools.map((t) => t.name));
    cursor = res.nextCursor;
    if (!cursor) return names.sort();
  }
  throw new Error('tools/list: more than 50 pages');
}

/** The McpError of a request that must be refused. */
async function rpcError(promise, what) {
  try {
    const res = await withTimeout(promise, 10_000, what);
    assert.fail(`${what} succeeded: ${JSON.stringify(res).slice(0, 500)}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    assert.ok(err instanceof McpError, `${what}: not a JSON-RPC error: ${err.stack}`);
    return err;
  }
}

// ---------------------------------------------------------------------------------------------

describe('API keys over streamable HTTP and legacy SSE', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-auth-'));
  let agents; // { p, base }
  let base;
  const sessions = []; // every SDK client opened, to close and to check its wire
  let fullTools; // the full key's tools/list (test 1)
  let storeInsightCalls = 0; // store_insight calls that succeeded, for /metrics
  const refusals = { missing_credentials: 0, invalid_credentials: 0, insufficient_scope: 0 }; // raw ones, for /metrics
  let metricsBefore; // /metrics right after start

  async function open(kind, key, opts) {
    const s = await connect(base, kind, key, opts);
    sessions.push(s);
    return s;
  }

  before(
    async () => {
      const config = {
        auth: {
          api_keys: [
            { name: 'narrow', key: KEYS.narrow, scopes: ['mcp'], tools: ['store_insight', 'search_*'] },
            { name: 'reader', key: KEYS.reader, scopes: ['admin:read'] },
            { name: 'slow', key: KEYS.slow, scopes: ['mcp'], rate_limit: SLOW_RATE, burst: SLOW_BURST },
          ],
        },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      // The refusals of this file come from one address faster than the per-address failure limit
      // allows; its exact answers are checked here, the limit itself in security.test.mjs.
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), {
        env: { AGENTS_MCP_API_KEYS: KEYS.full, AGENTS_MCP_AUTH_FAILURE_BURST: '10000' },
        readyMs: 30_000,
      });
      base = agents.base;
      metricsBefore = (await raw(base, '/metrics', { key: KEYS.reader })).text;
    },
    { timeout: 40_000 },
  );

  after(
    async () => {
      for (const s of sessions) await s.close();
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  test('1. the full key connects over both transports and lists every tool', { timeout: 20_000 }, async () => {
    const lists = {};
    for (const kind of TRANSPORTS) {
      const s = await open(kind, KEYS.full);
      lists[kind] = await toolNames(s.client);
      // The credential travelled on every request, the SSE GET included.
      const sse = s.wire.filter((w) => w.method === 'GET' && new URL(w.url).pathname === '/sse');
      if (kind === 'sse') assert.equal(sse.length, 1, `one GET /sse: ${JSON.stringify(s.wire)}`);
      for (const w of s.wire) {
        assert.equal(w.sentAuth, `Bearer ${KEYS.full}`, `${kind}: ${w.method} ${w.url} without the key`);
        assert.ok(w.status < 300, `${kind}: ${w.method} ${w.url} got ${w.status}`);
      }
    }
    fullTools = lists.streamable;
    assert.deepEqual(lists.sse, lists.streamable, 'both transports list the same tools');
    for (const name of CORE_TOOLS) assert.ok(fullTools.includes(name), `${name} listed for the full key: ${fullTools}`);
    assert.equal(new Set(fullTools).size, fullTools.length, `no tool twice: ${fullTools}`);
  });

  test('2. no key and a wrong key: 401 unauthenticated with a Bearer challenge; the SDK cannot connect', { timeout: 20_000 }, async () => {
    for (const ep of ENDPOINTS) {
      const none = await raw(base, ep.path, { method: ep.method, headers: ep.headers, body: ep.body });
      assertRefused(none, { status: 401, code: 'unauthenticated', what: `${ep.name} without a key` });
      assert.doesNotMatch(none.headers['www-authenticate'], /error=/, `${ep.name}: no error param when nothing was presented`);
      refusals.missing_credentials++;

      const wrong = await raw(base, ep.path, { method: ep.method, key: KEYS.wrong, headers: ep.headers, body: ep.body });
      assertRefused(wrong, { status: 401, code: 'unauthenticated', what: `${ep.name} with a wrong key`, presented: KEYS.wrong });
      assert.match(wrong.headers['www-authenticate'], /error="invalid_token"/, `${ep.name}: invalid_token`);
      refusals.invalid_credentials++;
    }
    // Not a bearer token, and a key with a different case: refused as well.
    const basic = await raw(base, '/mcp', { method: 'POST', headers: { Authorization: `Basic ${Buffer.from(`u:${KEYS.full}`).toString('base64')}` }, body: initializeBody() });
    assertRefused(basic, { status: 401, code: 'unauthenticated', what: 'Basic auth' });
    refusals.missing_credentials++; // "none": nothing usable was presented
    const upper = await raw(base, '/mcp', { method: 'POST', key: KEYS.full.toUpperCase(), body: initializeBody() });
    assertRefused(upper, { status: 401, code: 'unauthenticated', what: 'the full key in upper case', presented: KEYS.full.toUpperCase() });
    refusals.invalid_credentials++;

    for (const kind of TRANSPORTS) {
      for (const [label, key] of [['no key', undefined], ['a wrong key', KEYS.wrong]]) {
        const err = await connectError(base, kind, key);
        assert.equal(err.code, 401, `${kind} with ${label}: ${err.stack}`);
        assert.ok(!String(err.message).includes(KEYS.wrong), `${kind}: the error shows the key: ${err.message}`);
      }
    }
  });

  test('3. the admin-only key: 403 forbidden (insufficient_scope) on the MCP endpoints; the SDK cannot connect', { timeout: 20_000 }, async () => {
    for (const ep of ENDPOINTS) {
      const res = await raw(base, ep.path, { method: ep.method, key: KEYS.reader, headers: ep.headers, body: ep.body });
      assertRefused(res, { status: 403, code: 'forbidden', what: `${ep.name} with the admin:read key`, presented: KEYS.reader });
      assert.match(res.headers['www-authenticate'], /error="insufficient_scope"/, `${ep.name}: insufficient_scope`);
      assert.match(res.headers['www-authenticate'], /scope="mcp"/, `${ep.name}: names the scope`);
      refusals.insufficient_scope++;
    }
    for (const kind of TRANSPORTS) {
      const err = await connectError(base, kind, KEYS.reader);
      assert.equal(err.code, 403, `${kind} with the admin:read key: ${err.stack}`);
    }
  });

  test('4. the narrow key sees and calls only its allowlist', { timeout: 20_000 }, async () => {
    assert.ok(fullTools, 'test 1 listed the tools');
    const hidden = fullTools.filter((n) => !ALLOWED.includes(n));
    assert.ok(hidden.length >= 5, `hidden tools: ${hidden}`);
    for (const kind of TRANSPORTS) {
      const { client } = await open(kind, KEYS.narrow);
      assert.deepEqual(await toolNames(client), ALLOWED, `${kind}: tools/list of the narrow key`);

      const stored = await withTimeout(
        client.callTool({ name: 'store_insight', arguments: { text: `auth e2e over ${kind} (run ${RUN}): deploys fail on Fridays`, type: 'pitfall' } }),
        10_000,
        'store_insight',
      );
      assert.notEqual(stored.isError, true, `${kind}: store_insight: ${JSON.stringify(stored).slice(0, 500)}`);
      assert.match(stored.structuredContent?.insight?.id ?? '', /^ins_/, `${kind}: store_insight result: ${JSON.stringify(stored).slice(0, 500)}`);
      // The insight is attributed to the key's principal, never to the key.
      assert.match(stored.structuredContent.insight.source ?? '', /^key:[0-9a-f]{12}$/, `${kind}: insight source`);
      storeInsightCalls++;

      for (const name of ['query_memory', 'run_task', 'get_task']) {
        const err = await rpcError(client.callTool({ name, arguments: { query: 'x', request: 'x', taskId: 'task_x' } }), `${kind}: tools/call ${name}`);
        assert.equal(err.code, -32602, `${kind}: tools/call ${name}: ${err.message}`);
        const verr = await rpcError(client.request({ method: 'tools/validate', params: { name, arguments: {} } }, ValidateResultSchema), `${kind}: tools/validate ${name}`);
        assert.equal(verr.code, -32602, `${kind}: tools/validate ${name}: ${verr.message}`);
      }
      // A tool that does not exist at all is refused the same way, so the refusal tells nothing.
      const none = await rpcError(client.callTool({ name: 'no_such_tool_e2e', arguments: {} }), `${kind}: tools/call of an unknown tool`);
      assert.equal(none.code, -32602);

      // search_tools ranks every tool, but shows this key only its own.
      for (const query of ['run a task from a plan', 'query memory for similar past tasks', 'get_task list_tasks cancel_task', hidden.join(' '), 'tools']) {
        const res = await withTimeout(client.callTool({ name: 'search_tools', arguments: { query, limit: 50 } }), 10_000, `search_tools ${query}`);
        assert.notEqual(res.isError, true, `${kind}: search_tools ${query}: ${JSON.stringify(res).slice(0, 500)}`);
        const found = (res.structuredContent?.tools ?? []).map((t) => t.name);
        for (const n of found) assert.ok(ALLOWED.includes(n), `${kind}: search_tools "${query}" shows ${n}`);
        const all = JSON.stringify(res);
        for (const n of hidden) assert.doesNotMatch(all, new RegExp(`\\b${n}\\b`), `${kind}: search_tools "${query}" mentions ${n}:\n${all.slice(0, 1500)}`);
      }
    }
  });

  test('4b. another key cannot use a session the full key opened', { timeout: 20_000 }, async () => {
    // Streamable HTTP: the narrow key presents the full key's Mcp-Session-Id.
    const full = await open('streamable', KEYS.full);
    const sessionId = full.transport.sessionId;
    assert.ok(sessionId, 'the full key has a streamable session');
    const listBody = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    const res = await raw(base, '/mcp', {
      method: 'POST',
      key: KEYS.narrow,
      headers: { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': full.transport.protocolVersion ?? '2025-06-18' },
      body: listBody,
    });
    // 404, the answer to an unknown id: the refusal does not tell that the session exists.
    assert.equal(res.status, 404, `the narrow key in the full key's streamable session: ${show(res)}`);
    assert.doesNotMatch(res.text, /query_memory|run_task/, 'no tool list in the refusal');

    // Legacy SSE: the narrow key POSTs to the full key's /messages endpoint, where an answer would
    // go to the full key's stream (and a forged sampling answer would be taken as the client's).
    const fullSSE = await open('sse', KEYS.full);
    const endpoint = fullSSE.transport._endpoint; // the `endpoint` event of its stream
    assert.ok(endpoint, 'the SSE client got its /messages endpoint');
    const seen = [];
    const onmessage = fullSSE.transport.onmessage;
    fullSSE.transport.onmessage = (msg, extra) => {
      seen.push(msg);
      onmessage?.(msg, extra);
    };
    const post = await raw(base, endpoint.pathname + endpoint.search, { method: 'POST', key: KEYS.narrow, body: JSON.stringify({ jsonrpc: '2.0', id: 'e2e-injected', method: 'tools/list' }) });
    assert.equal(post.status, 404, `the narrow key on the full key's /messages: ${show(post)}`);

    // Both sessions of the full key are unharmed, and nothing injected reached the SSE stream.
    assert.deepEqual(await toolNames(full.client), fullTools);
    assert.deepEqual(await toolNames(fullSSE.client), fullTools);
    assert.ok(!seen.some((m) => m.id === 'e2e-injected'), `an answer to the injected request reached the full key's stream: ${JSON.stringify(seen).slice(0, 500)}`);
  });

  test('5. the slow key: 429 with Retry-After after its burst; the SDK surfaces the error', { timeout: 20_000 }, async () => {
    // Connecting over /mcp is exactly the burst: initialize + notifications/initialized.
    const s = await open('streamable', KEYS.slow);
    const posts = s.wire.filter((w) => w.method === 'POST');
    assert.equal(posts.length, SLOW_BURST, `connect made ${posts.length} POSTs: ${JSON.stringify(s.wire)}`);
    const err = await withTimeout(s.client.listTools().then(
      (r) => assert.fail(`tools/list after the burst succeeded: ${JSON.stringify(r).slice(0, 300)}`),
      (e) => e,
    ), 10_000, 'tools/list after the burst');
    assert.equal(err.code, 429, `tools/list after the burst: ${err.stack}`);
    assert.match(err.message, /rate_limited/, 'the SDK error carries the server’s JSON');
    // The SDK also opens its standalone GET stream after connecting; it is refused as well, and
    // the SDK reports that through onerror.
    await eventually(() => assert.ok(s.wire.some((w) => w.method === 'GET')), 5_000, 'the SDK’s GET /mcp');
    await eventually(() => assert.ok(s.errors.some((e) => e.code === 429), s.errors.map(String).join('; ')), 5_000, 'onerror with 429');
    // Exactly the burst got through: the refused requests cost nothing and no token came back.
    const passed = s.wire.filter((w) => w.status !== 429);
    assert.equal(passed.length, SLOW_BURST, `answered: ${JSON.stringify(s.wire)}`);

    const refused = await raw(base, '/mcp', { method: 'POST', key: KEYS.slow, body: initializeBody() });
    assertRefused(refused, { status: 429, code: 'rate_limited', what: 'POST /mcp over the limit', presented: KEYS.slow });
    const retry = refused.headers['retry-after'];
    assert.match(String(retry), /^[1-9][0-9]*$/, `Retry-After: ${retry}`);
    assert.ok(Number(retry) <= Math.ceil(1 / SLOW_RATE), `Retry-After ${retry} s, want at most ${Math.ceil(1 / SLOW_RATE)}`);
    const refusedSSE = await raw(base, '/sse', { key: KEYS.slow, headers: { Accept: 'text/event-stream' } });
    assertRefused(refusedSSE, { status: 429, code: 'rate_limited', what: 'GET /sse over the limit', presented: KEYS.slow });
    assert.ok(refusedSSE.headers['retry-after'], 'GET /sse: Retry-After');

    const sseErr = await connectError(base, 'sse', KEYS.slow);
    assert.equal(sseErr.code, 429, `SSE connect over the limit: ${sseErr.stack}`);

    // The limit is the slow key's own: the full key is not affected.
    const fine = await raw(base, '/mcp', { method: 'POST', key: KEYS.full, body: initializeBody() });
    assert.equal(fine.status, 200, show(fine));
  });

  test('6. /metrics, with an admin:read key, counts the calls and the refusals', { timeout: 10_000 }, async () => {
    const res = await raw(base, '/metrics', { key: KEYS.reader });
    assert.equal(res.status, 200, show(res));
    const m = res.text;
    assert.equal(metric(m, 'agents_mcp_tool_calls_total', { tool: 'store_insight', outcome: 'ok' }), storeInsightCalls, 'store_insight calls');
    assert.ok(metric(m, 'agents_mcp_tool_calls_total', { tool: 'search_tools' }) >= 10, 'search_tools calls');
    // Refused calls never reached a provider.
    for (const name of ['query_memory', 'run_task', 'get_task']) {
      assert.equal(metric(m, 'agents_mcp_tool_calls_total', { tool: name }) ?? 0, 0, `${name} was never called`);
    }
    // Every raw refusal of tests 2 and 3 is counted under its reason (the SDK's failed connects
    // come on top).
    for (const [reason, n] of Object.entries(refusals)) {
      const before = metric(metricsBefore, 'agents_mcp_auth_failures_total', { reason }) ?? 0;
      const now = metric(m, 'agents_mcp_auth_failures_total', { reason });
      assert.ok(now !== undefined, `agents_mcp_auth_failures_total{reason="${reason}"} missing`);
      assert.ok(now - before >= n, `auth failures (${reason}): ${now - before}, want at least ${n}`);
    }
    assert.ok(metric(m, 'agents_mcp_rate_limited_requests_total') >= 4, 'rate-limited requests');
    for (const k of Object.values(KEYS)) assert.ok(!m.includes(k), 'a key is in /metrics');
  });

  test('6b. raw refusals are counted exactly', { timeout: 10_000 }, async () => {
    const before = (await raw(base, '/metrics', { key: KEYS.reader })).text;
    for (let i = 0; i < 3; i++) await raw(base, '/mcp', { method: 'POST', body: initializeBody() });
    for (let i = 0; i < 2; i++) await raw(base, '/mcp', { method: 'POST', key: KEYS.wrong, body: initializeBody() });
    await raw(base, '/sse', { key: KEYS.reader, headers: { Accept: 'text/event-stream' } });
    const now = (await raw(base, '/metrics', { key: KEYS.reader })).text;
    const delta = (reason) => metric(now, 'agents_mcp_auth_failures_total', { reason }) - (metric(before, 'agents_mcp_auth_failures_total', { reason }) ?? 0);
    assert.equal(delta('missing_credentials'), 3);
    assert.equal(delta('invalid_credentials'), 2);
    assert.equal(delta('insufficient_scope'), 1);
  });

  test('7. every answer carries X-Request-Id; a valid one from the client is echoed', { timeout: 20_000 }, async () => {
    const cases = [
      { what: '/healthz', path: '/healthz', want: 200 },
      { what: '/readyz', path: '/readyz', want: 200 },
      { what: '/metrics', path: '/metrics', key: KEYS.reader, want: 200 },
      { what: 'POST /mcp, full key', method: 'POST', path: '/mcp', key: KEYS.full, body: initializeBody(), want: 200 },
      { what: 'GET /sse, full key', path: '/sse', key: KEYS.full, headers: { Accept: 'text/event-stream' }, want: 200 },
      { what: 'POST /messages, full key, unknown session', method: 'POST', path: '/messages?sessionId=e2e-no-such-session', key: KEYS.full, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' },
      { what: 'POST /mcp, no key', method: 'POST', path: '/mcp', body: initializeBody(), want: 401 },
      { what: 'POST /mcp, wrong key', method: 'POST', path: '/mcp', key: KEYS.wrong, body: initializeBody(), want: 401 },
      { what: 'POST /mcp, admin key', method: 'POST', path: '/mcp', key: KEYS.reader, body: initializeBody(), want: 403 },
      { what: 'POST /mcp, slow key', method: 'POST', path: '/mcp', key: KEYS.slow, body: initializeBody(), want: 429 },
      { what: 'GET /nowhere', path: '/nowhere' },
    ];
    const generated = new Set();
    for (const [i, c] of cases.entries()) {
      const mine = `e2e-${RUN}-${i}`;
      const echoed = await raw(base, c.path, { method: c.method, key: c.key, headers: { ...c.headers, 'X-Request-Id': mine }, body: c.body });
      if (c.want) assert.equal(echoed.status, c.want, `${c.what}: ${show(echoed)}`);
      assert.equal(echoed.headers['x-request-id'], mine, `${c.what}: the client's request id is echoed (${show(echoed)})`);
      const fresh = await raw(base, c.path, { method: c.method, key: c.key, headers: c.headers, body: c.body });
      const id = fresh.headers['x-request-id'];
      assert.match(String(id), REQUEST_ID_RE, `${c.what}: a request id of the server`);
      assert.ok(!generated.has(id), `${c.what}: request id ${id} given twice`);
      generated.add(id);
    }
    // Ids the server must not take: replaced by one of its own.
    for (const bad of ['has space', 'x'.repeat(129), 'tab\there', 'ünïcode']) {
      const res = await raw(base, '/healthz', { headers: { 'X-Request-Id': bad } });
      const id = res.headers['x-request-id'];
      assert.ok(id && id !== bad, `request id ${JSON.stringify(bad)} was echoed`);
      assert.match(id, REQUEST_ID_RE, `replacement for ${JSON.stringify(bad)}`);
    }

    // The SDK clients: every answer they got had a request id; the one that sent its own got it back.
    const mineSDK = `e2e-sdk-${RUN}`;
    for (const kind of TRANSPORTS) {
      const s = await open(kind, KEYS.full, { requestId: mineSDK });
      await toolNames(s.client);
      assert.ok(s.wire.length >= 2, `${kind}: wire ${JSON.stringify(s.wire)}`);
      for (const w of s.wire) {
        assert.equal(w.sentRequestId, mineSDK, `${kind}: ${w.method} ${w.url} sent the id`);
        assert.equal(w.requestId, mineSDK, `${kind}: ${w.method} ${w.url} (HTTP ${w.status}) echoed the id`);
      }
    }
    let seen = 0;
    assert.ok(refusedWires.some((w) => w.status === 401) && refusedWires.some((w) => w.status === 403) && refusedWires.some((w) => w.status === 429), `refused SDK connects: ${JSON.stringify(refusedWires)}`);
    for (const s of [...sessions, { wire: refusedWires }]) {
      for (const w of s.wire) {
        assert.match(String(w.requestId), REQUEST_ID_RE, `${w.method} ${w.url} (HTTP ${w.status}): X-Request-Id`);
        seen++;
      }
    }
    assert.ok(seen >= 20, `only ${seen} SDK exchanges recorded`);
  });

  test('8. SIGTERM: exit 0, a JSON log without any key', { timeout: 20_000 }, async () => {
    for (const s of sessions.splice(0)) await s.close();
    const t0 = Date.now();
    const exit = await stop(agents.p, 'SIGTERM', 10_000);
    const took = Date.now() - t0;
    assert.deepEqual(exit, { code: 0, signal: null }, `agents-mcp exit:\n${agents.p.output().slice(-3000)}`);
    // No client holds a stream open any more, so nothing should hold the shutdown up.
    assert.ok(took < SHUTDOWN_MS, `shutdown took ${took} ms, want < ${SHUTDOWN_MS}:\n${agents.p.output().slice(-3000)}`);
    const out = agents.p.output();
    for (const [name, k] of Object.entries(KEYS)) assert.ok(!out.includes(k), `the ${name} key is in the server's log`);
    const lines = out.split('\n').filter((l) => l.trim());
    const bad = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object';
      } catch {
        return true;
      }
    });
    assert.deepEqual(bad.slice(0, 5), [], 'every log line is JSON');
    assert.ok(lines.some((l) => l.includes('"msg":"stopped"')), 'the server logged that it stopped');
  });
});
