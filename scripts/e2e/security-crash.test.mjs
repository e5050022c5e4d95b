// One request must never crash the server. A key with scope mcp sent
// store_insight (or tools/validate) with {"text":"x","confidence":1e9999999}: the JSON Schema
// validator (santhosh-tekuri/jsonschema v6.0.3) dereferenced the nil big.Rat that math/big returns
// for an exponent beyond 10^6, on a go-sdk goroutine without recover, and the process exited.
//
// The test starts its own `agents-mcp serve --config` (temp data dir, the embedded SQLite store,
// one API key "alice" with scope mcp) and sends the number, as raw JSON (a JavaScript number
// cannot hold it), on every way in:
//   1. a 2025-11-25 session on /mcp: tools/call store_insight and tools/validate;
//   2. MCP 2026-07-28 on /mcp (stateless): tools/call and tools/validate;
//   3. POST /sse without a session (the compatibility endpoint) and a legacy SSE session
//      (GET /sse + POST /messages): tools/call and tools/validate;
//   4. the REST bridge (POST /mcp-json);
//   5. `agents-mcp stdio`.
// Each answer is -32602 naming the number (400 invalid_params on the bridge), the same session
// then stores an insight, and after each test (a server of its own) the server still runs, answers
// /healthz, and logged no panic.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, test } from 'node:test';

import { BIN, sseMessages, withTimeout } from './lib/harness.mjs';
import { hermeticEnv, startAgents, stop } from './lib/procs.mjs';
import { raw, show } from './lib/raw.mjs';

const KEY = `e2e-crash-${randomBytes(16).toString('hex')}`;
const HUGE = '{"text":"x","confidence":1e9999999}';
const WANT = 'the number 1e9999999 at /confidence is out of range';
const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' };
const SESSIONLESS_META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' +
  '"io.modelcontextprotocol/clientInfo":{"name":"crash-e2e","version":"1"}}';

/** A JSON-RPC request as text, with params given as JSON text (so that they can hold 1e9999999). */
const request = (id, method, params) => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
const callHuge = (id) => request(id, 'tools/call', `{"name":"store_insight","arguments":${HUGE}}`);
const validateHuge = (id) => request(id, 'tools/validate', `{"name":"store_insight","arguments":${HUGE}}`);
const callFine = (id) => request(id, 'tools/call', '{"name":"store_insight","arguments":{"text":"still serving"}}');

/** The JSON-RPC answer in a raw response (a JSON body or an event stream). */
function answerOf(res) {
  if (String(res.headers['content-type']).includes('text/event-stream')) {
    const msgs = sseMessages(res.text);
    return msgs[msgs.length - 1];
  }
  return res.json;
}

function assertInvalidParams(answer, what) {
  assert.equal(answer?.error?.code, -32602, `${what}: ${JSON.stringify(answer)}`);
  assert.match(answer.error.message, new RegExp(WANT), `${what}: ${JSON.stringify(answer)}`);
}

function assertStored(answer, what) {
  assert.ok(answer?.result && !answer.result.isError, `${what}: ${JSON.stringify(answer)}`);
}

/** A legacy SSE session: GET /sse read as it comes, POSTs to its endpoint; next(id) awaits that answer. */
function openLegacySse(base) {
  const url = new URL('/sse', base);
  return new Promise((resolve, reject) => {
    const waiting = new Map();
    const seen = new Map();
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, headers: { Accept: 'text/event-stream', Authorization: `Bearer ${KEY}` }, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET /sse: HTTP ${res.statusCode}`));
        return;
      }
      let buf = '';
      res.on('error', () => {});
      res.on('data', (chunk) => {
        buf += chunk.toString();
        const blocks = buf.split(/\r?\n\r?\n/);
        buf = blocks.pop();
        for (const block of blocks) {
          const endpoint = block.match(/event:\s*endpoint\r?\ndata:\s*(\S+)/);
          if (endpoint) {
            resolve({
              post: (body) => raw(base, new URL(endpoint[1], url).pathname + new URL(endpoint[1], url).search, { method: 'POST', key: KEY, body }),
              next: (id) => withTimeout(new Promise((r) => (seen.has(id) ? r(seen.get(id)) : waiting.set(id, r))), 10_000, `answer ${id} on GET /sse`),
              close: () => req.destroy(),
            });
            continue;
          }
          for (const msg of sseMessages(`${block}\n\n`)) {
            if (msg.id === undefined) continue;
            if (waiting.has(msg.id)) waiting.get(msg.id)(msg);
            else seen.set(msg.id, msg);
          }
        }
      });
    });
    req.end();
  });
}

/** Starts an agents-mcp of the test's own (one key, alice, scope mcp) for each test. */
async function startServer() {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-sec-crash-'));
  const configPath = path.join(work, 'config.yaml');
  writeFileSync(configPath, JSON.stringify({ auth: { api_keys: [{ name: 'alice', key: KEY, scopes: ['mcp'] }] } }), { mode: 0o600 });
  const agents = await startAgents(BIN, configPath, path.join(work, 'data'), { readyMs: 30_000 });
  return { ...agents, work };
}

/** Fails unless the server still runs, answers /healthz and logged no panic. */
async function assertAlive(server) {
  assert.equal(server.p.exitInfo(), undefined, `agents-mcp exited: ${JSON.stringify(server.p.exitInfo())}\n${server.p.output().slice(-3000)}`);
  const health = await raw(server.base, '/healthz');
  assert.equal(health.status, 200, show(health));
  assert.doesNotMatch(server.p.output(), /panic/, 'agents-mcp logged a panic');
}

// Each test has a server of its own, so that each fails on its own when the attack crashes it.
describe('security: one request cannot crash the server (issue 25, item 1)', () => {
  let server;
  let base;

  beforeEach(async () => {
    server = await startServer();
    base = server.base;
  }, { timeout: 40_000 });

  afterEach(async () => {
    try {
      await assertAlive(server);
    } finally {
      await stop(server.p, 'SIGTERM', 10_000);
      rmSync(server.work, { recursive: true, force: true });
    }
  });

  test('a 2025-11-25 session on /mcp: -32602 for tools/call and tools/validate, then served', async () => {
    const init = await raw(base, '/mcp', {
      method: 'POST', key: KEY, headers: MCP_ACCEPT,
      body: request(1, 'initialize', '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crash-e2e","version":"1"}}'),
    });
    const sid = init.headers['mcp-session-id'];
    assert.ok(init.status === 200 && sid, `initialize: ${show(init)}`);
    const headers = { ...MCP_ACCEPT, 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-11-25' };
    const ack = await raw(base, '/mcp', { method: 'POST', key: KEY, headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
    assert.equal(ack.status, 202, show(ack));
    const post = (body) => raw(base, '/mcp', { method: 'POST', key: KEY, headers, body });
    assertInvalidParams(answerOf(await post(callHuge(2))), 'tools/call');
    assertInvalidParams(answerOf(await post(validateHuge(3))), 'tools/validate');
    assertStored(answerOf(await post(callFine(4))), 'the next call in the session');
  });

  test('MCP 2026-07-28 on /mcp: -32602 for tools/call and tools/validate, then served', async () => {
    const headers = (method, name) => ({ ...MCP_ACCEPT, 'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}) });
    const post = (method, name, params) =>
      raw(base, '/mcp', { method: 'POST', key: KEY, headers: headers(method, name), body: request(7, method, `{${SESSIONLESS_META},${params}}`) });
    assertInvalidParams(answerOf(await post('tools/call', 'store_insight', `"name":"store_insight","arguments":${HUGE}`)), 'tools/call');
    assertInvalidParams(answerOf(await post('tools/validate', '', `"name":"store_insight","arguments":${HUGE}`)), 'tools/validate');
    assertStored(answerOf(await post('tools/call', 'store_insight', '"name":"store_insight","arguments":{"text":"still serving"}')), 'the next call');
  });

  test('POST /sse without a session: -32602 for tools/call and tools/validate, then served', async () => {
    const post = (body) => raw(base, '/sse', { method: 'POST', key: KEY, body });
    assertInvalidParams(answerOf(await post(callHuge(1))), 'tools/call');
    assertInvalidParams(answerOf(await post(validateHuge(2))), 'tools/validate');
    assertStored(answerOf(await post(callFine(3))), 'the next call');
  });

  test('a legacy SSE session (GET /sse + POST /messages): -32602 on the stream, then served', async () => {
    const s = await openLegacySse(base);
    try {
      const accepted = async (body) => {
        const res = await s.post(body);
        assert.equal(res.status, 202, show(res));
      };
      await accepted(request(1, 'initialize', '{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"crash-e2e","version":"1"}}'));
      assert.ok((await s.next(1)).result, 'initialize');
      await accepted('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      await accepted(callHuge(2));
      assertInvalidParams(await s.next(2), 'tools/call');
      await accepted(validateHuge(3));
      assertInvalidParams(await s.next(3), 'tools/validate');
      await accepted(callFine(4));
      assertStored(await s.next(4), 'the next call in the session');
    } finally {
      s.close();
    }
  });

  test('the REST bridge: 400 invalid_params naming the number, then served', async () => {
    const res = await raw(base, '/mcp-json', { method: 'POST', key: KEY, body: `{"tool":"store_insight","params":${HUGE}}` });
    assert.equal(res.status, 400, show(res));
    assert.equal(res.json?.error?.code, 'invalid_params', show(res));
    assert.match(res.json.error.message, new RegExp(WANT), show(res));
    const fine = await raw(base, '/mcp-json', { method: 'POST', key: KEY, body: '{"tool":"store_insight","params":{"text":"still serving"}}' });
    assert.equal(fine.status, 200, show(fine));
  });
});

describe('security: one request cannot crash agents-mcp stdio (issue 25, item 1)', () => {
  test('agents-mcp stdio: -32602 for tools/call and tools/validate, then served', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'agents-mcp-sec-crash-stdio-'));
    const child = spawn(BIN, ['stdio', '--data-dir', dataDir], { env: hermeticEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const answers = new Map();
    const waiting = new Map();
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if (msg.id === undefined) return;
      if (waiting.has(msg.id)) waiting.get(msg.id)(msg);
      else answers.set(msg.id, msg);
    });
    const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
    const died = exited.then((how) => {
      throw new Error(`agents-mcp stdio exited (${JSON.stringify(how)}); stderr:\n${stderr.slice(-3000)}`);
    });
    died.catch(() => {});
    const send = (line, id) => {
      child.stdin.write(`${line}\n`);
      if (id === undefined) return undefined;
      const answer = new Promise((r) => (answers.has(id) ? r(answers.get(id)) : waiting.set(id, r)));
      return withTimeout(Promise.race([answer, died]), 15_000, `stdio answer ${id}; stderr:\n${stderr.slice(-2000)}`);
    };
    try {
      const init = await send(request(1, 'initialize', '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crash-e2e","version":"1"}}'), 1);
      assert.ok(init.result, JSON.stringify(init));
      send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      assertInvalidParams(await send(callHuge(2), 2), 'tools/call');
      assertInvalidParams(await send(validateHuge(3), 3), 'tools/validate');
      assertStored(await send(callFine(4), 4), 'the next call');
      assert.equal(child.exitCode, null, `agents-mcp stdio exited; stderr:\n${stderr.slice(-2000)}`);
      assert.doesNotMatch(stderr, /panic/, 'agents-mcp stdio logged a panic');
    } finally {
      child.stdin.end();
      await withTimeout(exited, 10_000, 'agents-mcp stdio exit').catch(() => child.kill('SIGKILL'));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
