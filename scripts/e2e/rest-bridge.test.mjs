// The REST bridge: POST /mcp-json {"tool", "params"} calls a tool without an MCP
// session, and answers what a tools/call answers.
//
// The test starts its own `agents-mcp serve --config` (temp data dir) with a real upstream,
// @modelcontextprotocol/server-everything over stdio, named `everything`, and two keys:
//   - full:   AGENTS_MCP_API_KEYS, every scope, no allowlist;
//   - narrow: scopes [mcp], tools ["everything__echo"].
//
//   1. the official TypeScript SDK client (over /mcp) and the bridge call the same tools, an upstream
//      one with text, one with structuredContent, and a local one, and get the same answer: the
//      bridge's "result" is the structuredContent, else the text;
//   2. invalid params: 400 with the JSON pointers tools/validate reports for the same arguments;
//   3. the narrow key: its tool works; another one is 404 listing only its tool, the same answer as
//      for a tool that does not exist;
//   4. no credential: 401;
//   5. the discovery prompts, read by the TS SDK client, name the upstream's tools, and help-with-api's
//      argument completes to the upstream's name.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, newClient, ValidateResultSchema, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
const EVERYTHING = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const UP = 'everything';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const KEYS = { full: secret('e2e-full'), narrow: secret('e2e-narrow') };

/** POST /mcp-json with key; returns { status, body }. */
async function bridge(base, key, body, { contentType = 'application/json' } = {}) {
  const headers = { 'Content-Type': contentType };
  if (key) headers.Authorization = `Bearer ${key}`;
  const res = await withTimeout(
    fetch(`${base}/mcp-json`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    20_000,
    'POST /mcp-json',
  );
  const text = await res.text();
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `POST /mcp-json answered ${res.status} ${text}`);
  return { status: res.status, body: JSON.parse(text) };
}

/** What the bridge's "result" must be for an MCP tools/call result. */
function expectedResult(res) {
  if (res.structuredContent !== undefined) return res.structuredContent;
  if (res.content.every((c) => c.type === 'text')) return res.content.map((c) => c.text).join('\n');
  return res.content;
}

describe('REST bridge: POST /mcp-json', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-rest-bridge-'));
  let agents; // { p, base }
  let client;
  let transport;

  before(
    async () => {
      const config = {
        upstreams: [{ name: UP, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout: '20s' }],
        auth: { api_keys: [{ name: 'narrow', key: KEYS.narrow, scopes: ['mcp'], tools: [`${UP}__echo`] }] },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), { env: { AGENTS_MCP_API_KEYS: KEYS.full }, readyMs: 60_000 });
      client = newClient();
      transport = new StreamableHTTPClientTransport(new URL(`${agents.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEYS.full}` } } });
      await withTimeout(client.connect(transport), 15_000, 'connect over /mcp');
      await eventually(
        async () => assert.ok((await client.listTools()).tools.some((t) => t.name === `${UP}__get-sum`), 'upstream tools listed'),
        30_000,
        'the upstream tools are listed',
      );
    },
    { timeout: 120_000 },
  );

  after(
    async () => {
      if (transport) await transport.terminateSession().catch(() => {});
      if (client) await client.close().catch(() => {});
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  for (const [tool, params] of [
    [`${UP}__echo`, { message: 'hello over two faces' }],
    [`${UP}__get-sum`, { a: 2, b: 40 }],
    [`${UP}__get-structured-content`, { location: 'Chicago' }],
    ['search_tools', { query: 'add two numbers' }],
  ]) {
    test(`the TS SDK client and the bridge get the same answer from ${tool}`, async () => {
      const viaMCP = await withTimeout(client.callTool({ name: tool, arguments: params }), 20_000, `tools/call ${tool}`);
      assert.ok(!viaMCP.isError, `tools/call ${tool}: ${JSON.stringify(viaMCP)}`);
      const { status, body } = await bridge(agents.base, KEYS.full, { tool, params });
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.isError, false);
      assert.deepEqual(body.result, expectedResult(viaMCP));
    });
  }

  test('invalid params: 400 with the pointers of tools/validate', async () => {
    const params = { a: 'two', b: 40 };
    const validated = await client.request({ method: 'tools/validate', params: { name: `${UP}__get-sum`, arguments: params } }, ValidateResultSchema);
    assert.equal(validated.valid, false);
    const { status, body } = await bridge(agents.base, KEYS.full, { tool: `${UP}__get-sum`, params });
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error.code, 'invalid_params');
    assert.deepEqual(body.errors, validated.errors);
  });

  test('the allowlist: a hidden tool is answered as an unknown one', async () => {
    const mine = await bridge(agents.base, KEYS.narrow, { tool: `${UP}__echo`, params: { message: 'narrow' } });
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.result, 'Echo: narrow');
    const hidden = await bridge(agents.base, KEYS.narrow, { tool: `${UP}__get-sum`, params: { a: 1, b: 2 } });
    const unknown = await bridge(agents.base, KEYS.narrow, { tool: `${UP}__no-such-tool`, params: {} });
    for (const r of [hidden, unknown]) {
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'unknown_tool');
      assert.deepEqual(r.body.tools, [`${UP}__echo`]);
    }
  });

  test('the discovery prompts name the live tools, and complete the upstream name', async () => {
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    for (const want of ['help-me-start', 'help-with-api', 'help-me-learn']) assert.ok(names.includes(want), `prompts/list: ${names}`);
    const text = (res) => res.messages.map((m) => m.content.text).join('\n');
    const start = text(await client.getPrompt({ name: 'help-me-start' }));
    assert.match(start, new RegExp(`- ${UP} \\(\\d+ tools, ready\\):.* ${UP}__echo`), start);
    const api = text(await client.getPrompt({ name: 'help-with-api', arguments: { api: UP } }));
    assert.match(api, new RegExp(`- ${UP}__get-sum`), api);
    assert.doesNotMatch(api, /search_tools/, api);
    const done = await client.complete({ ref: { type: 'ref/prompt', name: 'help-with-api' }, argument: { name: 'api', value: 'ev' } });
    assert.deepEqual(done.completion.values, [UP]);
  });

  test('credentials and bodies', async () => {
    assert.equal((await bridge(agents.base, '', { tool: `${UP}__echo`, params: { message: 'x' } })).status, 401);
    assert.equal((await bridge(agents.base, KEYS.full, '{"tool":')).status, 400);
    assert.equal((await bridge(agents.base, KEYS.full, { tool: `${UP}__echo` }, { contentType: 'text/plain' })).status, 415);
  });
});
