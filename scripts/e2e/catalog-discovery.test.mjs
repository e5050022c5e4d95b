// Catalog discovery mode end to end, with the TypeScript SDK clients 1.x (`@modelcontextprotocol/sdk`)
// and 2.x (`@modelcontextprotocol/client`, at 2025-11-25 and pinned to 2026-07-28).
//
// The test starts its own `agents-mcp serve --conformance-fixtures` (temp data dir) with
// `catalog.mode: discovery` and two keys: `user` (scope mcp, no catalog_mode: the server's default)
// and the admin key of AGENTS_MCP_API_KEYS (every scope: it reads the audit trail and the listing
// costs). For each client:
//
//   1. tools/list shows only find_tools and call_tool;
//   2. find_tools finds a fixture tool by a need in plain words, with its input schema and source;
//   3. call_tool calls test_tool_with_progress: the client gets the real tool's progress
//      notifications under its own progress token;
//   4. call_tool calls test_elicitation: the client is asked (elicitation/create) and the answer
//      reaches the real tool; at 2026-07-28 call_tool of test_input_required_result_elicitation is
//      answered input_required, which the 2.x client fulfils and retries through call_tool;
//   5. a direct tools/call of an unlisted tool still works;
//   6. the audit trail names the real tools, never call_tool.
//
// Then, at the virtual server /mcp/fixtures (catalog_mode: discovery, the fixture tools under the alias
// prefix fx_, test_tool_with_progress renamed slow_job and pinned, a description of its own), with a
// third key `vuser`: tools/list shows the meta-tools and slow_job; find_tools answers with the view's
// names and description; call_tool runs slow_job with progress and fx_test_elicitation with
// elicitation; a registry name is an unknown tool there; the audit names the real tools.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, withTimeout } from './lib/harness.mjs';
import { eventually, freePort, hermeticEnv, start, stop } from './lib/procs.mjs';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const USER = secret('e2e-discovery-user');
const ADMIN = secret('e2e-discovery-admin');
const VUSER = secret('e2e-discovery-vuser');
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const CLIENT_INFO = { name: 'agents-mcp-e2e-discovery', version: '1.0.0' };

const fmt = (v) => JSON.stringify(v, null, 1).slice(0, 3000);

const CLIENTS = [
  { name: 'TypeScript SDK 1.x at 2025-11-25', sdk: 1 },
  { name: 'TypeScript SDK 2.x at 2025-11-25', sdk: 2 },
  { name: 'TypeScript SDK 2.x at 2026-07-28', sdk: 2, pin: '2026-07-28' },
];

/** A client of c's SDK over /mcp presenting key, answering elicitations with elicit. */
async function connect(base, c, key, elicit, endpoint = '/mcp') {
  const requestInit = { headers: { Authorization: `Bearer ${key}` } };
  let client, transport;
  if (c.sdk === 1) {
    client = new Client1(CLIENT_INFO, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params));
    transport = new Transport1(new URL(`${base}${endpoint}`), { requestInit });
  } else {
    const opts = { capabilities: { elicitation: { form: {} } } };
    if (c.pin) opts.versionNegotiation = { mode: { pin: c.pin } };
    client = new Client2(CLIENT_INFO, opts);
    client.setRequestHandler('elicitation/create', async (req) => elicit(req.params));
    transport = new Transport2(new URL(`${base}${endpoint}`), { requestInit });
  }
  await withTimeout(client.connect(transport), 20_000, `connect (${c.name})`);
  return client;
}

/** callTool with a progress callback: 1.x takes (params, resultSchema, options), 2.x (params, options). */
function callWithProgress(c, client, params, onprogress) {
  return c.sdk === 1 ? client.callTool(params, undefined, { onprogress }) : client.callTool(params, { onprogress });
}

async function adminGet(base, p) {
  const res = await fetch(`${base}${p}`, { headers: { Authorization: `Bearer ${ADMIN}` }, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  assert.equal(res.status, 200, `GET ${p}: ${res.status} ${text}`);
  return JSON.parse(text);
}

describe('catalog discovery mode', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-discovery-'));
  let agents; // { p, base }

  before(
    async () => {
      const config = {
        catalog: { mode: 'discovery' },
        auth: {
          api_keys: [
            { name: 'user', key: USER, scopes: ['mcp'] },
            { name: 'vuser', key: VUSER, scopes: ['mcp'], catalog_mode: 'full' },
          ],
        },
        virtual_servers: [
          {
            name: 'fixtures',
            catalog_mode: 'discovery',
            tools: [{ upstream: 'local', names: ['test_*'], alias_prefix: 'fx_' }],
            rename: { test_tool_with_progress: 'slow_job' },
            descriptions: { test_tool_with_progress: 'A slow job that reports how far it has got' },
            pinned: ['slow_job'],
          },
        ],
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
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

  for (const c of CLIENTS) {
    test(`${c.name}: finds and calls tools through the meta-tools`, { timeout: 60_000 }, async () => {
      const asked = [];
      const client = await connect(agents.base, c, USER, (params) => {
        asked.push(params.message);
        return { action: 'accept', content: { username: `e2e-${c.sdk}`, name: `e2e-${c.sdk}` } };
      });
      try {
        // 1. Only the meta-tools are listed.
        const listed = await withTimeout(client.listTools(), 15_000, 'tools/list');
        assert.deepEqual(listed.tools.map((t) => t.name).sort(), ['call_tool', 'find_tools'], fmt(listed.tools.map((t) => t.name)));

        // 2. find_tools: a need in plain words gives the tool with its schema.
        const found = await withTimeout(
          client.callTool({ name: 'find_tools', arguments: { need: 'a tool that reports its progress while it works', limit: 3 } }),
          15_000,
          'find_tools',
        );
        assert.notEqual(found.isError, true, fmt(found));
        const hit = found.structuredContent.tools.find((t) => t.name === 'test_tool_with_progress');
        assert.ok(hit, `find_tools did not return test_tool_with_progress in its top 3: ${fmt(found.structuredContent)}`);
        assert.equal(hit.source, 'local');
        assert.equal(hit.inputSchema.type, 'object', fmt(hit));
        assert.ok(hit.why, fmt(hit));
        assert.ok(!found.structuredContent.tools.some((t) => t.name === 'call_tool' || t.name === 'find_tools'), fmt(found.structuredContent));

        // 3. Progress of the real tool, under the client's own token.
        const progress = [];
        const prog = await withTimeout(
          callWithProgress(c, client, { name: 'call_tool', arguments: { name: 'test_tool_with_progress', arguments: {} } }, (p) => progress.push(p)),
          20_000,
          'call_tool test_tool_with_progress',
        );
        assert.notEqual(prog.isError, true, fmt(prog));
        assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]], fmt(progress));

        // 4. Elicitation of the real tool reaches the client, and its answer the tool: by an
        // elicitation/create request before 2026-07-28 (which forbids it during a request), by
        // input_required at 2026-07-28.
        if (!c.pin) {
          const message = `Pick a user name (${c.name})`;
          const el = await withTimeout(client.callTool({ name: 'call_tool', arguments: { name: 'test_elicitation', arguments: { message } } }), 20_000, 'call_tool test_elicitation');
          assert.notEqual(el.isError, true, fmt(el));
          assert.deepEqual(asked, [message]);
          assert.match(el.content.find((x) => x.type === 'text')?.text ?? '', new RegExp(`e2e-${c.sdk}`), fmt(el));
        } else {
          // input_required: the 2.x client fulfils the request and retries call_tool.
          asked.length = 0;
          const ir = await withTimeout(client.callTool({ name: 'call_tool', arguments: { name: 'test_input_required_result_elicitation', arguments: {} } }), 20_000, 'call_tool input_required');
          assert.notEqual(ir.isError, true, fmt(ir));
          assert.equal(asked.length, 1, `the client was asked ${fmt(asked)}`);
          assert.match(ir.content.find((x) => x.type === 'text')?.text ?? '', /Hello, e2e-2!/, fmt(ir));
        }

        // 5. A direct call of an unlisted tool still works.
        const direct = await withTimeout(client.callTool({ name: 'test_simple_text', arguments: {} }), 15_000, 'direct call');
        assert.notEqual(direct.isError, true, fmt(direct));
      } finally {
        await client.close().catch(() => {});
      }
    });
  }

  test('the audit trail names the real tools, never call_tool', { timeout: 30_000 }, async () => {
    const principal = principalOf(USER);
    await eventually(
      async () => {
        const page = await adminGet(agents.base, `/admin/v1/audit?kind=tool_call&principal=${encodeURIComponent(principal)}&limit=200`);
        const targets = page.items.map((e) => e.target);
        assert.ok(!targets.includes('call_tool'), `call_tool in the audit trail: ${fmt(targets)}`);
        for (const want of ['find_tools', 'test_tool_with_progress', 'test_simple_text']) {
          assert.equal(targets.filter((t) => t === want).length, CLIENTS.length, `${want} audited ${fmt(targets)}`);
        }
        assert.equal(targets.filter((t) => t === 'test_elicitation').length, CLIENTS.filter((c) => !c.pin).length, fmt(targets));
        // Asked, then answered: the call and its retry with the answer.
        assert.equal(targets.filter((t) => t === 'test_input_required_result_elicitation').length, 2, fmt(targets));
      },
      10_000,
      'the audit trail has the calls',
    );
  });

  test('the admin API shows what tools/list costs per mode', { timeout: 15_000 }, async () => {
    const cost = await adminGet(agents.base, '/admin/v1/tools/listing-cost');
    const full = cost.modes.find((m) => m.mode === 'full');
    const disc = cost.modes.find((m) => m.mode === 'discovery');
    assert.ok(full && disc, fmt(cost));
    assert.equal(disc.tools, 2, fmt(disc));
    assert.ok(disc.tokens * 5 < full.tokens, `discovery ${disc.tokens} tokens, full ${full.tokens}`);
    assert.ok(disc.listed.pages >= CLIENTS.length, fmt(disc));
  });

  for (const c of CLIENTS.filter((c) => !c.pin)) {
    test(`${c.name}: a virtual server in discovery mode finds and calls its own names`, { timeout: 60_000 }, async () => {
      const asked = [];
      const client = await connect(
        agents.base,
        c,
        VUSER,
        (params) => {
          asked.push(params.message);
          return { action: 'accept', content: { username: `v-${c.sdk}`, name: `v-${c.sdk}` } };
        },
        '/mcp/fixtures',
      );
      try {
        // The key's own mode is full: the virtual server's discovery wins.
        const listed = await withTimeout(client.listTools(), 15_000, 'tools/list');
        assert.deepEqual(listed.tools.map((t) => t.name).sort(), ['call_tool', 'find_tools', 'slow_job'], fmt(listed.tools.map((t) => t.name)));

        const found = await withTimeout(
          client.callTool({ name: 'find_tools', arguments: { need: 'a tool that reports its progress while it works', limit: 5 } }),
          15_000,
          'find_tools',
        );
        assert.notEqual(found.isError, true, fmt(found));
        const names = found.structuredContent.tools.map((t) => t.name);
        const hit = found.structuredContent.tools.find((t) => t.name === 'slow_job');
        assert.ok(hit, `find_tools at /mcp/fixtures did not return slow_job: ${fmt(found.structuredContent)}`);
        assert.equal(hit.description, 'A slow job that reports how far it has got', fmt(hit));
        assert.equal(hit.inputSchema.type, 'object', fmt(hit));
        assert.ok(names.every((n) => n === 'slow_job' || n.startsWith('fx_test_')), `names outside the view: ${fmt(names)}`);

        const progress = [];
        const prog = await withTimeout(
          callWithProgress(c, client, { name: 'call_tool', arguments: { name: 'slow_job', arguments: {} } }, (p) => progress.push(p)),
          20_000,
          'call_tool slow_job',
        );
        assert.notEqual(prog.isError, true, fmt(prog));
        assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]], fmt(progress));

        const message = `Pick a user name (view, ${c.name})`;
        const el = await withTimeout(
          client.callTool({ name: 'call_tool', arguments: { name: 'fx_test_elicitation', arguments: { message } } }),
          20_000,
          'call_tool fx_test_elicitation',
        );
        assert.notEqual(el.isError, true, fmt(el));
        assert.deepEqual(asked, [message]);

        // A registry name is not the view's: unknown, as a tool that does not exist.
        await assert.rejects(
          withTimeout(client.callTool({ name: 'call_tool', arguments: { name: 'test_simple_text', arguments: {} } }), 15_000, 'call_tool test_simple_text'),
          (err) => /unknown tool "test_simple_text"/.test(String(err?.message ?? err)),
        );
      } finally {
        await client.close().catch(() => {});
      }
    });
  }

  test('the audit trail of the virtual server names the real tools', { timeout: 30_000 }, async () => {
    const principal = principalOf(VUSER);
    const viewClients = CLIENTS.filter((c) => !c.pin).length;
    await eventually(
      async () => {
        const page = await adminGet(agents.base, `/admin/v1/audit?kind=tool_call&principal=${encodeURIComponent(principal)}&limit=200`);
        const targets = page.items.map((e) => e.target);
        assert.ok(!targets.includes('call_tool') && !targets.includes('slow_job'), fmt(targets));
        assert.equal(targets.filter((t) => t === 'test_tool_with_progress').length, viewClients, fmt(targets));
        assert.equal(targets.filter((t) => t === 'test_elicitation').length, viewClients, fmt(targets));
      },
      10_000,
      'the audit trail has the calls',
    );
  });
});
