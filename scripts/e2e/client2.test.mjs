// End-to-end tests of agents-mcp with the TypeScript SDK 2.x client (`@modelcontextprotocol/client`,
// pinned in package.json), which is what new hosts are built on. client.test.mjs holds the 1.x
// client (`@modelcontextprotocol/sdk`) to the same server; this file checks the 2.x client over
// every transport it has, in both eras it speaks:
//
//   - 2026-07-28 (`versionNegotiation: { mode: { pin } }`): streamable HTTP (/mcp) and stdio
//     (a spawned `agents-mcp stdio`); no initialize, the per-request _meta envelope;
//   - 2025-11-25 (its default, `legacy`): streamable HTTP and legacy SSE (/sse).
//
// On each: tools/list, a local tool call (search_tools), our custom method tools/validate (on
// 2026-07-28 its result must carry resultType: the 2.x client refused it without one),
// and run_task on a request whose plan needs no input ("get tool performance": the builtin planner,
// as no LLM is configured, picks the local tool get_tool_performance; local tools, so that the
// stdio child needs no fixtures or upstreams). On 2026-07-28, run_task on a request whose plan needs
// an input ("store insight …": store_insight needs `text`) answers input_required; the 2.x client
// fulfils it through its elicitation/create handler and retries, and the task succeeds.
//
// Every message the client receives is recorded off the transport, so the raw wire shape (not the
// client's parsed view) is asserted where it matters.
//
// Run through scripts/e2e/run.sh (it starts `serve --conformance-fixtures` and sets AGENTS_MCP_URL
// and AGENTS_MCP_BIN).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import * as z from 'zod/v4';

import { BASE_URL, BIN, SEARCH_TOOLS_SCHEMA, withTimeout } from './lib/harness.mjs';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const INSIGHT = 'client2-e2e-insight-7c1d';
const CLIENT_INFO = { name: 'agents-mcp-e2e-client2', version: '1.0.0' };

/** tools/validate's result, loose: the 2.x client validates the custom result against it. */
const ValidateResult = z.looseObject({
  tool: z.string(),
  valid: z.boolean(),
  errors: z.array(z.looseObject({ path: z.string(), keyword: z.string(), message: z.string() })),
  missing: z.array(z.string()),
});

function fmt(v) {
  return JSON.stringify(v, null, 1).slice(0, 3000);
}

const CASES = [
  {
    name: `streamable HTTP (/mcp) at ${MODERN}`,
    era: MODERN,
    make: () => ({ transport: new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`)) }),
  },
  {
    name: `stdio (agents-mcp stdio) at ${MODERN}`,
    era: MODERN,
    stdio: true,
    make: () => stdioTransport(),
  },
  {
    name: `streamable HTTP (/mcp) at ${LEGACY}`,
    era: LEGACY,
    make: () => ({ transport: new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`)) }),
  },
  {
    name: `legacy SSE (/sse) at ${LEGACY}`,
    era: LEGACY,
    make: () => ({ transport: new SSEClientTransport(new URL(`${BASE_URL}/sse`)) }),
  },
];

function stdioTransport() {
  if (!BIN) throw new Error('AGENTS_MCP_BIN is not set; run the e2e tests through scripts/e2e/run.sh');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-client2-'));
  const transport = new StdioClientTransport({ command: BIN, args: ['stdio', '--data-dir', dataDir], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d.toString();
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  return { transport, stderr: () => stderr, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/**
 * Connects a 2.x client. `wire` collects every JSON-RPC message the client receives after connect
 * (the transport's onmessage is wrapped once the client has installed its own). `elicit` and `sample`,
 * when given, declare elicitation or sampling and handle its requests.
 */
async function open(c, { elicit, sample } = {}) {
  const opts = { capabilities: {} };
  if (c.era === MODERN) opts.versionNegotiation = { mode: { pin: MODERN } };
  if (elicit) opts.capabilities.elicitation = { form: {} };
  if (sample) opts.capabilities.sampling = {};
  const client = new Client(CLIENT_INFO, opts);
  if (elicit) client.setRequestHandler('elicitation/create', elicit);
  if (sample) client.setRequestHandler('sampling/createMessage', sample);
  const made = c.make();
  const stderr = made.stderr ?? (() => '');
  const errors = [];
  client.onerror = (err) => errors.push(err);
  try {
    await withTimeout(client.connect(made.transport), 20_000, `connect over ${c.name}`);
  } catch (err) {
    made.cleanup?.();
    err.message = `connect over ${c.name} failed: ${err.message}${stderr() ? `\n--- child stderr ---\n${stderr().slice(-4000)}` : ''}`;
    throw err;
  }
  const wire = [];
  const inner = made.transport.onmessage;
  made.transport.onmessage = (msg, extra) => {
    wire.push(msg);
    return inner?.call(made.transport, msg, extra);
  };
  return {
    client,
    wire,
    errors,
    stderr,
    close: async () => {
      try {
        await client.close();
      } finally {
        made.cleanup?.();
      }
    },
  };
}

/** The last JSON-RPC response recorded in `wire` that `pred` accepts (found by its result's shape). */
function lastResponse(wire, pred) {
  for (let i = wire.length - 1; i >= 0; i--) {
    const m = wire[i];
    if (m && 'id' in m && ('result' in m || 'error' in m) && pred(m)) return m;
  }
  return undefined;
}

function runTaskResult(res) {
  assert.notEqual(res.isError, true, `run_task answered isError: ${fmt(res)}`);
  const task = res.structuredContent?.task;
  assert.ok(task && typeof task.id === 'string', `run_task result has no structuredContent.task: ${fmt(res)}`);
  return task;
}

for (const c of CASES) {
  describe(`TS SDK 2.x client over ${c.name}`, { skip: c.stdio && !BIN && 'AGENTS_MCP_BIN not set' }, () => {
    let conn;

    before(async () => {
      conn = await open(c);
    });

    after(async () => {
      await conn?.close();
    });

    test(`negotiates ${c.era} with agents-mcp`, () => {
      assert.equal(conn.client.getServerVersion()?.name, 'agents-mcp', `serverInfo: ${fmt(conn.client.getServerVersion())}`);
      const pv = conn.client.protocolVersion ?? conn.client.getNegotiatedProtocolVersion?.();
      assert.equal(pv, c.era, 'negotiated protocol version');
      assert.ok(conn.client.getServerCapabilities()?.tools, `no tools capability: ${fmt(conn.client.getServerCapabilities())}`);
    });

    test('tools/list holds search_tools (exact schema), run_task, get_tool_performance and store_insight', async () => {
      const { tools } = await conn.client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['search_tools', 'run_task', 'get_tool_performance', 'store_insight']) assert.ok(names.includes(n), `${n} missing: ${names.join(', ')}`);
      const st = tools.find((t) => t.name === 'search_tools');
      for (const [k, v] of Object.entries(SEARCH_TOOLS_SCHEMA)) {
        if (k === 'properties') {
          for (const [p, ps] of Object.entries(v)) {
            const got = { ...st.inputSchema.properties[p] };
            delete got.description;
            assert.deepEqual(got, ps, `search_tools.${p}`);
          }
        } else {
          assert.deepEqual(st.inputSchema[k], v, `search_tools inputSchema.${k}`);
        }
      }
    });

    test('tools/call search_tools finds itself', async () => {
      const res = await conn.client.callTool({ name: 'search_tools', arguments: { query: 'search' } });
      assert.notEqual(res.isError, true, fmt(res));
      const found = res.structuredContent?.tools;
      assert.ok(Array.isArray(found) && found.some((t) => t.name === 'search_tools'), `search_tools not found: ${fmt(res)}`);
      const raw = lastResponse(conn.wire, (m) => Array.isArray(m.result?.structuredContent?.tools));
      assert.ok(raw, 'the raw tools/call response was seen on the wire');
      if (c.era === MODERN) assert.equal(raw.result.resultType, 'complete', `tools/call resultType: ${fmt(raw.result)}`);
      else assert.equal(raw.result.resultType, undefined, `a ${LEGACY} result carries resultType: ${fmt(raw.result)}`);
    });

    test(`tools/validate (custom method) is accepted by the client; resultType ${c.era === MODERN ? 'complete' : 'absent'} on the wire`, async () => {
      const bad = await conn.client.request({ method: 'tools/validate', params: { name: 'search_tools', arguments: {} } }, ValidateResult);
      assert.equal(bad.tool, 'search_tools');
      assert.equal(bad.valid, false, fmt(bad));
      assert.deepEqual(bad.missing, ['query'], fmt(bad));
      const raw = lastResponse(conn.wire, (m) => m.result?.tool === 'search_tools' && 'valid' in m.result);
      assert.ok(raw, 'the raw tools/validate response was seen on the wire');
      if (c.era === MODERN) assert.equal(raw.result.resultType, 'complete', `tools/validate resultType: ${fmt(raw.result)}`);
      else assert.equal(raw.result.resultType, undefined, `a ${LEGACY} result carries resultType: ${fmt(raw.result)}`);

      const good = await conn.client.request({ method: 'tools/validate', params: { name: 'search_tools', arguments: { query: 'x', limit: 3 } } }, ValidateResult);
      assert.equal(good.valid, true, fmt(good));
      assert.deepEqual(good.errors, []);
    });

    test('run_task on a plan that needs no input succeeds (builtin planner: get_tool_performance)', { timeout: 30_000 }, async () => {
      const res = await withTimeout(conn.client.callTool({ name: 'run_task', arguments: { request: 'get tool performance' } }), 25_000, 'run_task');
      const task = runTaskResult(res);
      assert.equal(task.status, 'succeeded', fmt(task));
      assert.deepEqual(task.steps.map((s) => [s.stepId, s.status]), [['get_tool_performance', 'succeeded']], fmt(task));
    });

    test('no transport or protocol error was reported to the client', () => {
      assert.deepEqual(conn.errors.map((e) => e.message), [], `client errors${conn.stderr() ? `\n--- child stderr ---\n${conn.stderr().slice(-4000)}` : ''}`);
    });
  });
}

// run_task on a plan that needs an input, at 2026-07-28: the server answers input_required with an
// elicitation in inputRequests; the 2.x client fulfils it with its elicitation/create handler and
// retries with inputResponses and the requestState echoed, inside one callTool.
for (const c of CASES.filter((x) => x.era === MODERN)) {
  describe(`TS SDK 2.x client over ${c.name}: run_task asks through input_required`, { skip: c.stdio && !BIN && 'AGENTS_MCP_BIN not set' }, () => {
    let conn;
    const asked = [];

    before(async () => {
      conn = await open(c, {
        elicit: async (req) => {
          asked.push(req.params);
          return { action: 'accept', content: { text: INSIGHT } };
        },
      });
    });

    after(async () => {
      await conn?.close();
    });

    test('the elicitation handler is asked for `text`, and the task succeeds with it', { timeout: 30_000 }, async () => {
      const res = await withTimeout(conn.client.callTool({ name: 'run_task', arguments: { request: 'store insight about the 2.x client' } }), 25_000, 'run_task');
      const task = runTaskResult(res);
      assert.equal(asked.length, 1, `elicitation requests: ${fmt(asked)}`);
      assert.ok(asked[0].requestedSchema?.properties?.text, `the question does not ask for text: ${fmt(asked[0])}`);
      assert.equal(task.status, 'succeeded', fmt(task));
      assert.deepEqual(task.steps.map((s) => [s.stepId, s.status]), [['store_insight', 'succeeded']], fmt(task));
      // The answer reached the tool: the insight is stored under the elicited text.
      const found = await conn.client.callTool({ name: 'query_memory', arguments: { query: INSIGHT } });
      assert.match(JSON.stringify(found.structuredContent ?? found.content), new RegExp(INSIGHT), fmt(found));
      // On the wire: one input_required answer carrying the elicitation and a requestState, then
      // the completed result (the client never saw a server-to-client request).
      const ir = conn.wire.filter((m) => m.result?.resultType === 'input_required');
      assert.equal(ir.length, 1, `input_required answers: ${fmt(ir)}`);
      const reqs = Object.values(ir[0].result.inputRequests ?? {});
      assert.ok(reqs.length === 1 && reqs[0].method === 'elicitation/create', fmt(ir[0].result));
      assert.equal(typeof ir[0].result.requestState, 'string', fmt(ir[0].result));
      assert.equal(conn.wire.filter((m) => 'method' in m && 'id' in m).length, 0, `server-to-client requests: ${fmt(conn.wire.filter((m) => 'method' in m && 'id' in m))}`);
    });
  });
}

// run_task at 2026-07-28 from a client that declares sampling: the server (AGENTS_MCP_LLM auto)
// asks the client's model through input_required, one sampling/createMessage per round (the
// thought, then the plan; ADR 0009), never through a server-to-client request. The 2.x client
// fulfils each with its sampling/createMessage handler, here a fake model (`clientModel`), and
// retries inside one callTool; the task runs the model's plan, whose step id ("perf") the builtin
// planner would not choose.
function clientModel(params) {
  if (String(params.systemPrompt ?? '').includes('thought agent')) {
    return JSON.stringify({
      subGoals: ['get tool performance'],
      reasoning: 'one local tool reports it',
      approaches: ['ask the tool'],
      constraints: [],
      assumptions: [],
      uncertainties: [],
      confidence: 0.9,
      recommendedTools: [{ tool: 'get_tool_performance', reason: 'it reports tool performance' }],
    });
  }
  return JSON.stringify({
    goal: 'report tool performance',
    steps: [{ id: 'perf', tool: 'get_tool_performance', arguments: {}, description: 'get the performance of the tools' }],
  });
}

for (const c of CASES.filter((x) => x.era === MODERN)) {
  describe(`TS SDK 2.x client over ${c.name}: run_task asks the client's model through input_required`, { skip: c.stdio && !BIN && 'AGENTS_MCP_BIN not set' }, () => {
    let conn;
    const sampled = [];

    before(async () => {
      conn = await open(c, {
        sample: async (req) => {
          sampled.push(req.params);
          return { role: 'assistant', model: 'client2-fake-model', content: { type: 'text', text: clientModel(req.params) } };
        },
      });
    });

    after(async () => {
      await conn?.close();
    });

    test('the sampling handler is asked for the thought, then the plan, and the task runs that plan', { timeout: 30_000 }, async () => {
      const res = await withTimeout(conn.client.callTool({ name: 'run_task', arguments: { request: 'get tool performance' } }), 25_000, 'run_task');
      const task = runTaskResult(res);
      assert.equal(sampled.length, 2, `sampling requests: ${fmt(sampled)}`);
      assert.match(sampled[0].systemPrompt, /thought agent/, fmt(sampled[0]));
      assert.doesNotMatch(sampled[1].systemPrompt, /thought agent/, fmt(sampled[1]));
      assert.equal(task.status, 'succeeded', fmt(task));
      assert.deepEqual(task.steps.map((s) => [s.stepId, s.status]), [['perf', 'succeeded']], fmt(task));
      // On the wire: two input_required answers, each with one sampling request under sample.<n>
      // and a requestState, then the completed result; no server-to-client request.
      const ir = conn.wire.filter((m) => m.result?.resultType === 'input_required');
      assert.deepEqual(ir.map((m) => Object.keys(m.result.inputRequests ?? {})), [['sample.1'], ['sample.2']], fmt(ir));
      for (const m of ir) {
        assert.equal(m.result.inputRequests[Object.keys(m.result.inputRequests)[0]].method, 'sampling/createMessage', fmt(m.result));
        assert.equal(typeof m.result.requestState, 'string', fmt(m.result));
      }
      assert.equal(conn.wire.filter((m) => 'method' in m && 'id' in m).length, 0, `server-to-client requests: ${fmt(conn.wire.filter((m) => 'method' in m && 'id' in m))}`);
      assert.deepEqual(conn.errors.map((e) => e.message), [], 'client errors');
    });
  });
}
