// The protocol bridge, 2026 client to 2025 upstream (ADR 0010 D4): clients of MCP 2026-07-28 (raw
// JSON-RPC with the per-request _meta envelope, and the official TypeScript SDK 2.x client pinned to
// 2026-07-28) use, through agents-mcp, @modelcontextprotocol/server-everything, an upstream of
// 2025-11-25 (its SDK, 1.x, knows no later revision) run over stdio.
//
//   1. What works without any bridging: server/discover is answered by agents-mcp; the upstream's
//      tools, resources and prompts are listed, called, read and got.
//   2. Bridged calls: server-everything's trigger-elicitation-request and trigger-sampling-request
//      send elicitation/create and sampling/createMessage in the middle of the call, which a 2026
//      client cannot receive. agents-mcp holds the upstream call and answers input_required, under
//      key call.1, with a sealed requestState ("brg.…"); the retry with the answer gets the tool's
//      result. The 2.x client does the rounds itself (its elicitation and sampling handlers);
//      the raw client checks the wire, a retry without the answer, a forged state and a client that
//      did not declare elicitation.
//
// The test starts its own agents-mcp. run.sh builds it and sets AGENTS_MCP_BIN.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { BIN, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
const EVERYTHING = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const MODERN = '2026-07-28';
const UP = 'everything';
const ELICIT_TOOL = `${UP}__trigger-elicitation-request`;
const SAMPLE_TOOL = `${UP}__trigger-sampling-request`;

function fmt(v) {
  return JSON.stringify(v, null, 1).slice(0, 3000);
}

/**
 * One 2026-07-28 request as a conforming client sends it (the _meta envelope, Mcp-Method and
 * Mcp-Name headers), read from a JSON or SSE answer. caps are the client capabilities it declares.
 */
async function rpc26(base, method, params = {}, { caps = {} } = {}) {
  const body = {
    jsonrpc: '2.0',
    id: Math.floor(Math.random() * 1e9),
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': caps,
        'io.modelcontextprotocol/clientInfo': { name: 'bridge2026-e2e', version: '1' },
      },
    },
  };
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': MODERN, 'Mcp-Method': method };
  const name = params.name ?? params.uri ?? params.taskId;
  if (typeof name === 'string') headers['Mcp-Name'] = name;
  const res = await withTimeout(fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) }), 30_000, method);
  let text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').filter((l) => l.startsWith('data:') && l.includes('"id"'));
    text = data.length ? data.at(-1).slice(5).trim() : text;
  }
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    assert.fail(`${method}: HTTP ${res.status}, not JSON-RPC: ${text.slice(0, 500)}`);
  }
  return { status: res.status, ...msg };
}

function textOf(result) {
  return (result?.content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('bridge: 2026-07-28 clients use a 2025-11-25 upstream (server-everything)', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-bridge2026-'));
  let agents; // { p, base }

  before(
    async () => {
      const configPath = path.join(work, 'config.yaml');
      const upstream = { name: UP, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout: '30s' };
      writeFileSync(configPath, JSON.stringify({ upstreams: [upstream] }, null, 2));
      agents = await startAgents(BIN, configPath, path.join(work, 'data'));
      await eventually(
        () => assert.match(agents.p.output(), /"msg":"upstream ready","upstream":"everything"[^\n]*"protocol_version":"2025-11-25"/),
        30_000,
        'the pool reached server-everything at 2025-11-25',
        100,
      );
    },
    { timeout: 60_000 },
  );

  after(
    async () => {
      if (agents) await stop(agents.p, 'SIGTERM', 20_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 30_000 },
  );

  test('server/discover is answered by agents-mcp, at 2026-07-28, with tools, resources and prompts', async () => {
    const res = await rpc26(agents.base, 'server/discover');
    assert.equal(res.status, 200, fmt(res));
    const r = res.result;
    assert.ok(r, fmt(res));
    assert.equal(r.supportedVersions?.[0], MODERN, fmt(r));
    assert.equal(r._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'agents-mcp', fmt(r));
    assert.ok(r.supportedVersions.includes('2025-11-25'), fmt(r));
    for (const cap of ['tools', 'resources', 'prompts']) assert.ok(r.capabilities?.[cap], `capability ${cap}: ${fmt(r.capabilities)}`);
  });

  test('raw 2026 requests: the upstream’s tools, resources and prompts', { timeout: 30_000 }, async () => {
    const tools = await rpc26(agents.base, 'tools/list');
    const names = (tools.result?.tools ?? []).map((t) => t.name);
    for (const n of [`${UP}__echo`, `${UP}__get-sum`, ELICIT_TOOL, SAMPLE_TOOL]) assert.ok(names.includes(n), `${n} missing: ${names.join(', ')}`);

    const echo = await rpc26(agents.base, 'tools/call', { name: `${UP}__echo`, arguments: { message: 'hi from 2026' } });
    assert.equal(echo.result?.resultType, 'complete', fmt(echo));
    assert.equal(textOf(echo.result), 'Echo: hi from 2026', fmt(echo));
    const sum = await rpc26(agents.base, 'tools/call', { name: `${UP}__get-sum`, arguments: { a: 2, b: 40 } });
    assert.match(textOf(sum.result), /42/, fmt(sum));

    const resources = await rpc26(agents.base, 'resources/list');
    const uris = (resources.result?.resources ?? []).map((r) => r.uri).filter((u) => u.startsWith(`upstream://${UP}/`));
    assert.ok(uris.length > 0, fmt(resources));
    const read = await rpc26(agents.base, 'resources/read', { uri: uris[0] });
    assert.equal(read.result?.resultType, 'complete', fmt(read));
    assert.ok(read.result.contents?.length > 0, fmt(read));
    const templated = await rpc26(agents.base, 'resources/read', { uri: `upstream://${UP}/demo://resource/dynamic/text/7` });
    assert.match(JSON.stringify(templated.result?.contents), /7/, fmt(templated));

    const prompts = await rpc26(agents.base, 'prompts/list');
    assert.ok((prompts.result?.prompts ?? []).some((p) => p.name === `${UP}__args-prompt`), fmt(prompts));
    const prompt = await rpc26(agents.base, 'prompts/get', { name: `${UP}__args-prompt`, arguments: { city: 'Lisbon', state: 'none' } });
    assert.equal(prompt.result?.resultType, 'complete', fmt(prompt));
    assert.match(JSON.stringify(prompt.result?.messages), /Lisbon/, fmt(prompt));
  });

  test('raw 2026 requests: an elicitation mid-call is asked as input_required, and the retry completes the call', { timeout: 40_000 }, async () => {
    const caps = { elicitation: { form: {} } };
    const first = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {} }, { caps });
    const r1 = first.result;
    assert.equal(r1?.resultType, 'input_required', fmt(first));
    assert.deepEqual(Object.keys(r1.inputRequests), ['call.1'], fmt(r1));
    const q = r1.inputRequests['call.1'];
    assert.equal(q.method, 'elicitation/create', fmt(q));
    assert.equal(q.params.message, 'Please provide inputs for the following fields:', fmt(q));
    assert.deepEqual(q.params.requestedSchema.required, ['name'], fmt(q));
    assert.match(r1.requestState, /^brg\./, fmt(r1));
    assert.ok(!r1.content?.length, `input_required carries content: ${fmt(r1)}`);

    // A retry without the answer is asked the same question again, under the same key.
    const again = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {}, requestState: r1.requestState }, { caps });
    assert.equal(again.result?.resultType, 'input_required', fmt(again));
    assert.equal(again.result.inputRequests['call.1']?.params?.message, q.params.message, fmt(again));

    // A forged state is refused.
    const forged = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {}, requestState: `${r1.requestState}x` }, { caps });
    assert.equal(forged.error?.code, -32602, fmt(forged));

    const done = await rpc26(
      agents.base,
      'tools/call',
      { name: ELICIT_TOOL, arguments: {}, requestState: r1.requestState, inputResponses: { 'call.1': { action: 'accept', content: { name: 'Ada Lovelace', check: true } } } },
      { caps },
    );
    assert.equal(done.result?.resultType, 'complete', fmt(done));
    assert.notEqual(done.result.isError, true, fmt(done));
    assert.match(textOf(done.result), /User provided the requested information/, fmt(done));
    assert.match(textOf(done.result), /Name: Ada Lovelace/, fmt(done));

    // The call ended; its state still reads the stored result (the call is a stored task).
    const late = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {}, requestState: r1.requestState }, { caps });
    assert.match(textOf(late.result), /Name: Ada Lovelace/, fmt(late));
  });

  test('raw 2026 requests with the Tasks extension: the bridged call is a task, answered with tasks/update', { timeout: 40_000 }, async () => {
    const caps = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const created = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {} }, { caps });
    const c = created.result;
    assert.equal(c?.resultType, 'task', fmt(created));
    assert.match(c.taskId, /^tsk_/, fmt(c));
    for (const k of ['result', 'inputRequests', 'requestState', 'content']) assert.equal(c[k], undefined, `CreateTaskResult carries ${k}: ${fmt(c)}`);

    const got = await rpc26(agents.base, 'tasks/get', { taskId: c.taskId }, { caps });
    assert.equal(got.result?.status, 'input_required', fmt(got));
    assert.equal(got.result.inputRequests?.['call.1']?.method, 'elicitation/create', fmt(got));

    const ack = await rpc26(agents.base, 'tasks/update', { taskId: c.taskId, inputResponses: { 'call.1': { action: 'accept', content: { name: 'Katherine Johnson' } } } }, { caps });
    assert.equal(ack.result?.resultType, 'complete', fmt(ack));
    let done;
    await eventually(
      async () => {
        done = await rpc26(agents.base, 'tasks/get', { taskId: c.taskId }, { caps });
        assert.equal(done.result?.status, 'completed', fmt(done));
      },
      20_000,
      'the bridged task to complete',
      200,
    );
    assert.match(textOf(done.result.result), /Name: Katherine Johnson/, fmt(done));

    // Another one, cancelled: the holder stops waiting and the task stays cancelled.
    const second = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {} }, { caps });
    assert.equal(second.result?.resultType, 'task', fmt(second));
    const cancelled = await rpc26(agents.base, 'tasks/cancel', { taskId: second.result.taskId }, { caps });
    assert.equal(cancelled.result?.resultType, 'complete', fmt(cancelled));
    const after = await rpc26(agents.base, 'tasks/get', { taskId: second.result.taskId }, { caps });
    assert.equal(after.result?.status, 'cancelled', fmt(after));
    // The holder notices the cancel at its next read of the store (every 500 ms) and ends the
    // upstream call; until then a question of another call to the same upstream could not be told
    // apart from this one's (remote/forward.go attributes them only when one client has calls in
    // flight).
    await new Promise((r) => setTimeout(r, 1500));
  });

  test('raw 2026 request without the elicitation capability: not asked; the upstream is refused and the call fails', { timeout: 30_000 }, async () => {
    const res = await rpc26(agents.base, 'tools/call', { name: ELICIT_TOOL, arguments: {} });
    assert.notEqual(res.result?.resultType, 'input_required', fmt(res));
    const text = res.error ? res.error.message : textOf(res.result);
    assert.ok(res.error || res.result?.isError, fmt(res));
    assert.match(text, /does not support elicitation/, fmt(res));
  });

  test('TS SDK 2.x client pinned to 2026-07-28: elicitation and sampling are answered by its handlers', { timeout: 60_000 }, async () => {
    const client = new Client({ name: 'bridge2026-e2e-client2', version: '1' }, { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: { pin: MODERN } } });
    const asked = [];
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { name: 'Grace Hopper' } };
    });
    client.setRequestHandler('sampling/createMessage', async (req) => {
      asked.push(req.params.messages[0].content.text);
      return { model: 'e2e-model', role: 'assistant', content: { type: 'text', text: 'sampled by the 2026 client' } };
    });
    const errors = [];
    client.onerror = (err) => errors.push(err);
    const transport = new StreamableHTTPClientTransport(new URL(`${agents.base}/mcp`));
    await withTimeout(client.connect(transport), 20_000, 'connect');
    const wire = [];
    const inner = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      wire.push(msg);
      return inner?.call(transport, msg, extra);
    };
    try {
      assert.equal(client.getServerVersion()?.name, 'agents-mcp');

      const echo = await withTimeout(client.callTool({ name: `${UP}__echo`, arguments: { message: 'via 2.x' } }), 20_000, 'echo');
      assert.equal(textOf(echo), 'Echo: via 2.x', fmt(echo));
      const prompt = await withTimeout(client.getPrompt({ name: `${UP}__simple-prompt` }), 20_000, 'prompts/get');
      assert.ok(prompt.messages?.length > 0, fmt(prompt));
      const read = await withTimeout(client.readResource({ uri: `upstream://${UP}/demo://resource/dynamic/text/3` }), 20_000, 'resources/read');
      assert.match(JSON.stringify(read.contents), /3/, fmt(read));

      const elicited = await withTimeout(client.callTool({ name: ELICIT_TOOL, arguments: {} }), 30_000, 'elicitation tool');
      assert.notEqual(elicited.isError, true, fmt(elicited));
      assert.match(textOf(elicited), /Name: Grace Hopper/, fmt(elicited));

      const sampled = await withTimeout(client.callTool({ name: SAMPLE_TOOL, arguments: { prompt: 'say hi', maxTokens: 20 } }), 30_000, 'sampling tool');
      assert.notEqual(sampled.isError, true, fmt(sampled));
      assert.match(textOf(sampled), /sampled by the 2026 client/, fmt(sampled));

      assert.deepEqual(asked, ['Please provide inputs for the following fields:', `Resource trigger-sampling-request context: say hi`], fmt(asked));
      // On the wire: two input_required answers (one per bridged call), never a server-to-client
      // request.
      const ir = wire.filter((m) => m.result?.resultType === 'input_required');
      assert.equal(ir.length, 2, fmt(ir));
      assert.deepEqual(ir.map((m) => Object.values(m.result.inputRequests).map((q) => q.method)), [['elicitation/create'], ['sampling/createMessage']], fmt(ir));
      assert.equal(wire.filter((m) => m.method && 'id' in m).length, 0, `server-to-client requests: ${fmt(wire.filter((m) => m.method))}`);
      assert.deepEqual(errors.map((e) => e.message), []);
    } finally {
      await client.close();
    }
  });
});
