// End-to-end tests of agents-mcp with the official TypeScript SDK client, over each transport:
// legacy SSE (/sse), streamable HTTP (/mcp) and stdio (a spawned `agents-mcp stdio`).
//
// Run through scripts/e2e/run.sh (it starts the server and sets AGENTS_MCP_URL / AGENTS_MCP_BIN).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

import { FIXTURES, SEARCH_TOOLS_SCHEMA, TRANSPORTS, ValidateResultSchema, open } from './lib/harness.mjs';

const UNKNOWN_TOOL = 'no_such_tool_e2e_7f3a';

/** Asserts that `promise` rejects with an McpError carrying JSON-RPC `code`. */
async function assertMcpErrorCode(promise, code, what) {
  let result;
  try {
    result = await promise;
  } catch (err) {
    assert.ok(err instanceof McpError, `${what}: expected McpError, got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.code, code, `${what}: expected JSON-RPC error ${code}, got ${err.code} (${err.message})`);
    return err;
  }
  assert.fail(`${what}: expected JSON-RPC error ${code}, got a result: ${JSON.stringify(result).slice(0, 800)}`);
}

function validate(client, name, args) {
  return client.request({ method: 'tools/validate', params: { name, arguments: args } }, ValidateResultSchema);
}

const ANNOTATIONS = new Set(['description', 'title', 'examples', '$comment']);

/** A copy of a JSON Schema without annotation keywords (property names are kept as they are). */
function stripAnnotations(schema) {
  if (Array.isArray(schema)) return schema.map(stripAnnotations);
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) continue; // keys here are keywords; property names are handled below
    if (k === 'properties' || k === '$defs' || k === 'definitions' || k === 'patternProperties') {
      out[k] = Object.fromEntries(Object.entries(v ?? {}).map(([name, sub]) => [name, stripAnnotations(sub)]));
    } else if (k === 'enum' || k === 'const' || k === 'required' || k === 'default') {
      out[k] = v; // literal values
    } else {
      out[k] = stripAnnotations(v);
    }
  }
  return out;
}

function fmt(v) {
  return JSON.stringify(v, null, 1).slice(0, 2000);
}

for (const tdef of TRANSPORTS) {
  describe(`over ${tdef.name}`, () => {
    let conn;

    before(async () => {
      conn = await open(tdef);
    });

    after(async () => {
      await conn?.close();
    });

    test('initialize succeeds and serverInfo.name is "agents-mcp"', () => {
      const info = conn.client.getServerVersion();
      assert.ok(info, 'no serverInfo after initialize');
      assert.equal(info.name, 'agents-mcp', `serverInfo: ${fmt(info)}`);
      assert.equal(typeof info.version, 'string', `serverInfo.version: ${fmt(info)}`);
      const caps = conn.client.getServerCapabilities();
      assert.ok(caps?.tools, `server capabilities lack "tools": ${fmt(caps)}`);
    });

    test('tools/list contains search_tools with the exact input schema (annotations aside)', async () => {
      const { tools } = await conn.client.listTools();
      assert.ok(Array.isArray(tools) && tools.length > 0, `no tools: ${fmt(tools)}`);
      const names = tools.map((t) => t.name);
      assert.equal(new Set(names).size, names.length, `duplicate tool names: ${names.join(', ')}`);
      const st = tools.find((t) => t.name === 'search_tools');
      assert.ok(st, `search_tools missing from tools/list: ${names.join(', ')}`);
      assert.ok(st.description && st.description.length > 0, 'search_tools has no description');
      // Every validation keyword must match exactly; only the annotation keywords (description,
      // title, examples, $comment) may be added, since they help models pick arguments.
      assert.deepEqual(stripAnnotations(st.inputSchema), SEARCH_TOOLS_SCHEMA);
    });

    test('tools/call search_tools {query:"search"} returns ranked non-error content', async () => {
      // listTools first so the SDK client validates structuredContent against any outputSchema.
      await conn.client.listTools();
      const res = await conn.client.callTool({ name: 'search_tools', arguments: { query: 'search' } });
      assert.notEqual(res.isError, true, `isError result: ${fmt(res)}`);
      assert.ok(Array.isArray(res.content) && res.content.length > 0, `empty content: ${fmt(res)}`);
      const text = res.content.find((c) => c.type === 'text');
      assert.ok(text && text.text.trim().length > 0, `no non-empty text content: ${fmt(res)}`);
      const found = res.structuredContent?.tools;
      assert.ok(Array.isArray(found), `structuredContent.tools is not an array: ${fmt(res.structuredContent)}`);
      const self = found.find((t) => t.name === 'search_tools');
      assert.ok(self, `searching "search" did not find search_tools: ${fmt(found)}`);
      for (const t of found) {
        assert.equal(typeof t.name, 'string', `result without name: ${fmt(t)}`);
        assert.equal(typeof t.score, 'number', `result without numeric score: ${fmt(t)}`);
      }
      for (let i = 1; i < found.length; i++) {
        assert.ok(found[i - 1].score >= found[i].score, `results not ranked by score: ${fmt(found)}`);
      }
    });

    test('tools/call search_tools honours limit', async () => {
      const res = await conn.client.callTool({ name: 'search_tools', arguments: { query: 'test', limit: 1 } });
      assert.notEqual(res.isError, true, `isError result: ${fmt(res)}`);
      const found = res.structuredContent?.tools;
      assert.ok(Array.isArray(found), `structuredContent.tools is not an array: ${fmt(res.structuredContent)}`);
      assert.ok(found.length <= 1, `limit 1 returned ${found.length} tools: ${fmt(found)}`);
    });

    test('tools/validate accepts valid arguments', async () => {
      const r = await validate(conn.client, 'search_tools', { query: 'find files', limit: 5, scope: 'local' });
      assert.equal(r.tool, 'search_tools', fmt(r));
      assert.equal(r.valid, true, fmt(r));
      assert.deepEqual(r.errors, [], fmt(r));
      assert.deepEqual(r.missing, [], fmt(r));
    });

    test('tools/validate reports missing, type and enum errors', async () => {
      const r = await validate(conn.client, 'search_tools', { limit: 'ten', scope: 'everywhere' });
      assert.equal(r.tool, 'search_tools', fmt(r));
      assert.equal(r.valid, false, fmt(r));
      assert.ok(r.missing.includes('query'), `missing does not contain "query": ${fmt(r)}`);
      assert.ok(
        r.errors.some((e) => e.path === '/limit' && e.keyword === 'type'),
        `no error {path:"/limit", keyword:"type"}: ${fmt(r)}`,
      );
      assert.ok(
        r.errors.some((e) => e.path === '/scope' && e.keyword === 'enum'),
        `no error {path:"/scope", keyword:"enum"}: ${fmt(r)}`,
      );
      assert.ok(
        r.errors.some((e) => e.keyword === 'required'),
        `no error with keyword "required" for the missing query: ${fmt(r)}`,
      );
      for (const e of r.errors) {
        assert.ok(e.message.length > 0, `error without message: ${fmt(e)}`);
      }
    });

    test('tools/validate reports minimum violations with a JSON-pointer path', async () => {
      const r = await validate(conn.client, 'search_tools', { query: 'x', limit: 0 });
      assert.equal(r.valid, false, fmt(r));
      assert.deepEqual(r.missing, [], fmt(r));
      assert.ok(
        r.errors.some((e) => e.path === '/limit' && e.keyword === 'minimum'),
        `no error {path:"/limit", keyword:"minimum"}: ${fmt(r)}`,
      );
    });

    test('tools/validate of an unknown tool is JSON-RPC error -32602', async () => {
      await assertMcpErrorCode(
        validate(conn.client, UNKNOWN_TOOL, { query: 'x' }),
        ErrorCode.InvalidParams,
        'tools/validate of an unknown tool',
      );
    });

    test('tools/call of an unknown tool is JSON-RPC error -32602', async () => {
      await assertMcpErrorCode(
        conn.client.callTool({ name: UNKNOWN_TOOL, arguments: {} }),
        ErrorCode.InvalidParams,
        'tools/call of an unknown tool',
      );
    });

    test('20 concurrent tools/call on one session all get their own answers', async () => {
      const queries = Array.from({ length: 20 }, (_, i) => `search ${i}`);
      const results = await Promise.all(
        queries.map((q, i) =>
          conn.client.callTool({ name: 'search_tools', arguments: { query: q, limit: 1 + (i % 5) } }),
        ),
      );
      results.forEach((res, i) => {
        assert.notEqual(res.isError, true, `call ${i}: ${fmt(res)}`);
        const found = res.structuredContent?.tools;
        assert.ok(Array.isArray(found), `call ${i}: ${fmt(res)}`);
        assert.ok(found.length <= 1 + (i % 5), `call ${i} (limit ${1 + (i % 5)}) returned ${found.length}`);
      });
    });

    test('the session still works after the errors (ping + tools/list)', async () => {
      await conn.client.ping();
      const { tools } = await conn.client.listTools();
      assert.ok(tools.some((t) => t.name === 'search_tools'));
    });

    test('no transport-level errors were seen on this session', () => {
      assert.deepEqual(
        conn.errors.map((e) => String(e?.message ?? e)),
        [],
        `transport errors${conn.stderr() ? `; child stderr tail:\n${conn.stderr().slice(-2000)}` : ''}`,
      );
    });
  });
}

describe('stdio process lifecycle', () => {
  test('agents-mcp stdio exits by itself with status 0 when its stdin closes', async () => {
    const tdef = TRANSPORTS.find((t) => t.key === 'stdio');
    const conn = await open(tdef);
    const child = conn.transport._process; // the SDK keeps the ChildProcess here
    assert.ok(child?.pid, 'no child process');
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await conn.client.listTools();
    // The SDK closes stdin, waits 2 s, then sends SIGTERM (and later SIGKILL).
    const t0 = Date.now();
    await conn.close();
    const { code, signal } = await exited;
    const ms = Date.now() - t0;
    assert.equal(signal, null, `stdio server had to be killed (${signal}) after stdin closed`);
    assert.equal(code, 0, `stdio server exit status ${code} after stdin closed; stderr tail:\n${conn.stderr().slice(-2000)}`);
    assert.ok(ms < 1900, `stdio server took ${ms} ms to exit after stdin closed`);
  });
});

// Server -> client messages during tools/call: sampling and elicitation requests, progress and
// logging notifications. Legacy SSE is included on purpose: these travel on the GET /sse stream and
// the client's answers come back as POSTs to /messages.
for (const tdef of TRANSPORTS.filter((t) => t.key === 'sse' || t.key === 'streamable')) {
  describe(`server-to-client messages over ${tdef.name}`, { skip: !FIXTURES && 'server runs without --conformance-fixtures' }, () => {
    let conn;
    const sampled = [];
    const elicited = [];
    const logs = [];
    const token = `e2e-sampled-${tdef.key}-${process.pid}`;

    before(async () => {
      conn = await open(tdef, { sampling: true, elicitation: true });
      conn.client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        sampled.push(req.params);
        return {
          model: 'e2e-test-model',
          role: 'assistant',
          content: { type: 'text', text: token },
          stopReason: 'endTurn',
        };
      });
      conn.client.setRequestHandler(ElicitRequestSchema, async (req) => {
        elicited.push(req.params);
        return { action: 'accept', content: { username: `e2e-user-${tdef.key}` } };
      });
      conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params);
      });
    });

    after(async () => {
      await conn?.close();
    });

    test('test_sampling sends sampling/createMessage and returns the client answer', async () => {
      const prompt = `What is 2+2? (${tdef.key})`;
      const res = await conn.client.callTool({ name: 'test_sampling', arguments: { prompt } });
      assert.notEqual(res.isError, true, `isError result: ${fmt(res)}`);
      assert.equal(sampled.length, 1, `expected exactly one sampling/createMessage, got ${sampled.length}`);
      const msg = sampled[0].messages?.[0];
      assert.equal(msg?.role, 'user', fmt(sampled[0]));
      assert.equal(msg?.content?.type, 'text', fmt(sampled[0]));
      assert.equal(msg?.content?.text, prompt, fmt(sampled[0]));
      assert.ok(sampled[0].maxTokens > 0, `maxTokens: ${fmt(sampled[0])}`);
      const text = res.content?.find((c) => c.type === 'text')?.text ?? '';
      assert.ok(text.includes(token), `tool result does not carry the sampled text ${token}: ${fmt(res)}`);
    });

    test('test_elicitation sends elicitation/create and returns the user answer', async () => {
      const message = `Pick a user name (${tdef.key})`;
      const res = await conn.client.callTool({ name: 'test_elicitation', arguments: { message } });
      assert.notEqual(res.isError, true, `isError result: ${fmt(res)}`);
      assert.equal(elicited.length, 1, `expected exactly one elicitation/create, got ${elicited.length}`);
      assert.equal(elicited[0].message, message, fmt(elicited[0]));
      assert.equal(elicited[0].requestedSchema?.type, 'object', fmt(elicited[0]));
      const text = res.content?.find((c) => c.type === 'text')?.text ?? '';
      assert.ok(text.includes('accept'), `tool result does not carry the action: ${fmt(res)}`);
      assert.ok(text.includes(`e2e-user-${tdef.key}`), `tool result does not carry the answer: ${fmt(res)}`);
    });

    test('test_tool_with_progress delivers progress notifications for the call', async () => {
      const progress = [];
      const res = await conn.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
        onprogress: (p) => progress.push(p),
      });
      assert.notEqual(res.isError, true, `isError result: ${fmt(res)}`);
      assert.deepEqual(
        progress.map((p) => [p.progress, p.total]),
        [
          [0, 100],
          [50, 100],
          [100, 100],
        ],
        `progress notifications: ${fmt(progress)}`,
      );
    });

    test('test_tool_with_logging delivers log notifications at the level set by the client', async () => {
      await conn.client.setLoggingLevel('info');
      logs.length = 0;
      const res = await conn.client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      assert.notEqual(res.isError, true, `isError result: ${fmt(res)}`);
      // Notifications sent before the response must arrive before it on the same stream.
      const data = logs.map((l) => l.data);
      for (const want of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
        assert.ok(data.includes(want), `log "${want}" missing: ${fmt(logs)}`);
      }
      assert.ok(logs.every((l) => l.level === 'info'), fmt(logs));
    });

    test('no transport-level errors were seen on this session', () => {
      assert.deepEqual(conn.errors.map((e) => String(e?.message ?? e)), []);
    });
  });
}
