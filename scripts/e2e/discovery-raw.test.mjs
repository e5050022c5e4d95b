// Catalog discovery mode driven by a hand-written JSON-RPC client over streamable HTTP (fetch only, no
// SDK), the way a minimal client of any language (the Python SDK's flow) speaks to the server at
// 2025-11-25:
//
//   1. initialize (declaring elicitation), notifications/initialized, Mcp-Session-Id on every request;
//   2. tools/list shows only find_tools and call_tool;
//   3. find_tools finds a fixture tool by a need in plain words;
//   4. call_tool of test_tool_with_progress with a progressToken: the progress notifications come on
//      the POST's SSE stream under that token, then the result;
//   5. call_tool of test_elicitation: the elicitation/create request comes on the POST's SSE stream,
//      the client answers it with a POST of the JSON-RPC response, and the result comes on the first
//      stream with the answer in it;
//   6. the audit trail names the real tools, never call_tool.
//
// The client reads each POST's answer as it arrives (a JSON body, or an SSE stream parsed event by
// event), so that it sees a request the server sends while the call is still open. A client that
// first reads the whole body (`await res.text()`, even of a clone, as an assertion message that is
// built eagerly does) never sees the elicitation: the server keeps the stream open until it has the
// answer, and the two wait for each other. The server sends the request on the POST's stream at once
// (no GET stream needed). Every step is bounded.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { BIN } from './lib/harness.mjs';
import { eventually, freePort, hermeticEnv, start, stop } from './lib/procs.mjs';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const USER = secret('e2e-raw-user');
const ADMIN = secret('e2e-raw-admin');
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const STEP_MS = 20_000;
const fmt = (v) => JSON.stringify(v).slice(0, 2000);

/** Yields the JSON-RPC messages of a response body: one JSON body, or the data of each SSE event. */
async function* messagesOf(res) {
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) {
    const text = await res.text();
    if (text.trim()) yield* [JSON.parse(text)].flat();
    return;
  }
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
      const event = buf.slice(0, end);
      buf = buf.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield JSON.parse(data);
    }
  }
}

/** A minimal streamable HTTP JSON-RPC client: a session id, ids, and a handler for server requests. */
class RawClient {
  constructor(url, key) {
    this.url = url;
    this.key = key;
    this.nextId = 1;
    this.sessionId = undefined;
    this.protocolVersion = undefined;
    this.onRequest = async (msg) => {
      throw new Error(`unexpected server request ${fmt(msg)}`);
    };
  }

  post(body, signal) {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${this.key}`,
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  }

  /** Sends a request; returns its result, calling onNotification and answering server requests on the way. */
  async request(method, params, { onNotification = () => {} } = {}) {
    const id = this.nextId++;
    const signal = AbortSignal.timeout(STEP_MS);
    const seen = [];
    try {
      return await this.exchange(id, method, params, signal, onNotification, seen);
    } catch (err) {
      throw new Error(`${method} ${fmt(params).slice(0, 200)}: ${err.name}: ${err.message}; messages seen: ${fmt(seen)}`, { cause: err });
    }
  }

  async exchange(id, method, params, signal, onNotification, seen) {
    const res = await this.post({ jsonrpc: '2.0', id, method, params }, signal);
    // Never read the whole body first (as `await res.text()` would): the stream stays open until the
    // client has answered the requests the server sent on it.
    if (res.status !== 200) throw new Error(`HTTP ${res.status} ${await res.text()}`);
    if (method === 'initialize') this.sessionId = res.headers.get('mcp-session-id') ?? undefined;
    for await (const msg of messagesOf(res)) {
      seen.push(msg);
      if (msg.id === id && (msg.result !== undefined || msg.error !== undefined)) {
        if (msg.error) throw Object.assign(new Error(`${method}: ${msg.error.message}`), { rpc: msg.error });
        return msg.result;
      }
      if (msg.method && msg.id !== undefined) {
        // A request of the server, on this POST's stream: answered by a POST of the response.
        const result = await this.onRequest(msg);
        const ack = await this.post({ jsonrpc: '2.0', id: msg.id, result }, AbortSignal.timeout(STEP_MS));
        if (ack.status !== 202) throw new Error(`answer to ${msg.method}: HTTP ${ack.status} ${await ack.text()}`);
      } else if (msg.method) {
        onNotification(msg);
      }
    }
    throw new Error(`${method}: the stream ended without the response`);
  }

  async notify(method, params) {
    const res = await this.post({ jsonrpc: '2.0', method, params }, AbortSignal.timeout(STEP_MS));
    if (res.status !== 202) throw new Error(`${method}: HTTP ${res.status} ${await res.text()}`);
  }
}

describe('catalog discovery mode with a hand-written JSON-RPC client', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-raw-'));
  let agents;

  before(
    async () => {
      const config = { catalog: { mode: 'discovery' }, auth: { api_keys: [{ name: 'user', key: USER, scopes: ['mcp'] }] } };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 }); // JSON is YAML
      const port = await freePort();
      const p = start(BIN, ['serve', '--addr', `127.0.0.1:${port}`, '--config', configPath, '--data-dir', path.join(work, 'data'), '--conformance-fixtures'], {
        name: 'agents-mcp',
        baseEnv: hermeticEnv(),
        env: { AGENTS_MCP_API_KEYS: ADMIN },
      });
      agents = { p, base: `http://127.0.0.1:${port}` };
      await p.waitFor(/"msg":"serving"/, 60_000, 'agents-mcp serving');
    },
    { timeout: 90_000 },
  );

  after(
    async () => {
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  test('initialize, find_tools, call_tool with progress and elicitation; the audit names the real tools', { timeout: 120_000 }, async () => {
    const c = new RawClient(`${agents.base}/mcp`, USER);
    const init = await c.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: {} },
      clientInfo: { name: 'raw-jsonrpc-e2e', version: '1' },
    });
    assert.equal(init.protocolVersion, '2025-11-25', fmt(init));
    assert.ok(c.sessionId, 'no Mcp-Session-Id');
    c.protocolVersion = init.protocolVersion;
    await c.notify('notifications/initialized');

    const listed = await c.request('tools/list', {});
    assert.deepEqual(listed.tools.map((t) => t.name).sort(), ['call_tool', 'find_tools'], fmt(listed));

    const found = await c.request('tools/call', { name: 'find_tools', arguments: { need: 'a tool that reports its progress while it works', limit: 3 } });
    assert.notEqual(found.isError, true, fmt(found));
    const hit = found.structuredContent.tools.find((t) => t.name === 'test_tool_with_progress');
    assert.ok(hit && hit.inputSchema?.type === 'object', `find_tools: ${fmt(found.structuredContent)}`);

    // Progress of the real tool, on the POST's stream, under the client's token.
    const progress = [];
    const prog = await c.request(
      'tools/call',
      { name: 'call_tool', arguments: { name: 'test_tool_with_progress', arguments: {} }, _meta: { progressToken: 'raw-progress-1' } },
      { onNotification: (m) => m.method === 'notifications/progress' && progress.push(m.params) },
    );
    assert.notEqual(prog.isError, true, fmt(prog));
    assert.deepEqual(
      progress.map((p) => [p.progressToken, p.progress, p.total]),
      [
        ['raw-progress-1', 0, 100],
        ['raw-progress-1', 50, 100],
        ['raw-progress-1', 100, 100],
      ],
      fmt(progress),
    );

    // Elicitation of the real tool: asked on the POST's stream, answered by a POST.
    const asked = [];
    c.onRequest = async (msg) => {
      assert.equal(msg.method, 'elicitation/create', fmt(msg));
      asked.push(msg.params.message);
      return { action: 'accept', content: { username: 'raw-user', name: 'raw-user' } };
    };
    const el = await c.request('tools/call', { name: 'call_tool', arguments: { name: 'test_elicitation', arguments: { message: 'Pick a user name (raw)' } } });
    assert.notEqual(el.isError, true, fmt(el));
    assert.deepEqual(asked, ['Pick a user name (raw)']);
    assert.match(el.content.find((x) => x.type === 'text')?.text ?? '', /raw-user/, fmt(el));

    // The audit trail names the real tools.
    await eventually(
      async () => {
        const res = await fetch(`${agents.base}/admin/v1/audit?kind=tool_call&principal=${encodeURIComponent(principalOf(USER))}&limit=50`, {
          headers: { Authorization: `Bearer ${ADMIN}` },
          signal: AbortSignal.timeout(5000),
        });
        const page = await res.json();
        const targets = page.items.map((e) => e.target);
        assert.ok(!targets.includes('call_tool'), fmt(targets));
        for (const want of ['find_tools', 'test_tool_with_progress', 'test_elicitation']) assert.ok(targets.includes(want), `${want} not audited: ${fmt(targets)}`);
      },
      10_000,
      'the audit trail has the calls',
    );
  });
});
