// What one call leaves behind must not show a shared credential, another principal's arguments, or a
// password the request gave, against the real binary.
//
// The test starts its own `agents-mcp serve --config` (temp data dir, the embedded SQLite store) with
// three API keys: alice and bob (scope mcp) and admin (every scope). Its HTTP tools:
//   - `shop` in front of a loopback port that accepts connections and closes them at once, and `dead`
//     in front of a loopback port nobody listens on; both get a shared `api_key` credential sent in
//     the query parameter `k`, a name no list of usual names knows;
//   - `blog` in front of a small loopback API (DELETE and GET /posts/{id}).
//
//   1. alice calls shop__get_item and dead__get_item with values of her own: each answers isError,
//      naming the operation (GET /items/{id}), never the URL, the key or her values;
//   2. bob reads get_tool_performance: its commonErrors are classes ("connection refused"…), with
//      neither the key nor alice's values; nor do /admin/v1/tools/performance and the audit trail;
//   3. alice asks generate_thoughts and generate_plan for "Delete post 5 password=…" and "…, my
//      password is …": the thought's reasoning and the plan's goal (GET /admin/v1/plans/{id},
//      /admin/v1/thoughts/{id}) hold "<secret>", never the password;
//   4. after SIGTERM, no file of the data dir (the SQLite database, its WAL) holds the key or a
//      password.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { freePort, startAgents, stop } from './lib/procs.mjs';

const hex = (n) => randomBytes(n).toString('hex');
const KEYS = { alice: `e2e-alice-${hex(16)}`, bob: `e2e-bob-${hex(16)}`, admin: `e2e-admin-${hex(16)}` };
// The shared key has no shape a pattern would catch (letters only): only its parameter's name says
// what it is.
const SHARED_KEY = `plainsharedkey${randomBytes(6).toString('base64').replace(/[^a-z]/gi, '').toLowerCase()}x`;
const ALICE_ID = `aliceprivate${hex(4)}`;
const ALICE_NOTE = `alicenote${hex(4)}`;
const PASSWORDS = [`hunter${hex(4)}`, `opensesame${hex(3)}`];
const REQUESTS = [`Delete post 5 password=${PASSWORDS[0]}`, `Delete post 8, my password is ${PASSWORDS[1]}`];

async function connect(base, key) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await withTimeout(client.connect(transport), 15_000, 'connect');
  return {
    client,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

async function call(client, name, args) {
  return withTimeout(
    client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, { timeout: 30_000 }),
    40_000,
    `call ${name}`,
  );
}

const text = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

function ok(res, what) {
  assert.notEqual(res.isError, true, `${what} failed: ${text(res)}`);
  return res.structuredContent;
}

async function admin(base, method, p, body) {
  const res = await fetch(`${base}/admin/v1${p}`, {
    method,
    headers: { Authorization: `Bearer ${KEYS.admin}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, text: await res.text() };
}

function assertNone(what, s, secrets) {
  for (const secret of secrets) assert.ok(!s.includes(secret), `${what} holds ${secret}: ${s.slice(0, 2000)}`);
}

/** A loopback server that accepts connections and closes them at once; resolves with { url, close }. */
async function closingServer() {
  const sockets = new Set();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.destroy();
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${srv.address().port}`, close: () => new Promise((resolve) => srv.close(resolve)) };
}

/** A small blog API on loopback: DELETE /posts/{id} answers 204, GET /posts/{id} the post. */
async function blogServer() {
  const srv = http.createServer((req, res) => {
    if (req.method === 'DELETE') {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: req.url.split('/').pop(), title: 'hello' }));
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${srv.address().port}`, close: () => new Promise((resolve) => srv.close(resolve)) };
}

describe('security: no shared credential, other caller\'s arguments or password in what a call leaves', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-secredact-'));
  const dataDir = path.join(work, 'data');
  let agents, closing, blog;
  const sessions = [];
  const open = async (key) => {
    const s = await connect(agents.base, key);
    sessions.push(s);
    return s.client;
  };

  before(
    async () => {
      closing = await closingServer();
      blog = await blogServer();
      const refused = `http://127.0.0.1:${await freePort()}`;
      const items = [{ name: 'get_item', method: 'GET', path: '/items/{id}', query: { note: 'a note' } }];
      const config = {
        auth: {
          api_keys: [
            { name: 'alice', key: KEYS.alice, scopes: ['mcp'] },
            { name: 'bob', key: KEYS.bob, scopes: ['mcp'] },
            { name: 'admin', key: KEYS.admin, scopes: ['mcp', 'admin:read', 'admin:write'] },
          ],
        },
        http_tools: [
          { name: 'shop', base_url: closing.url, endpoints: items },
          { name: 'dead', base_url: refused, endpoints: items },
          {
            name: 'blog',
            base_url: blog.url,
            endpoints: [
              { name: 'delete_post', description: 'Delete a blog post by its id', method: 'DELETE', path: '/posts/{id}' },
              { name: 'get_post', description: 'Get a blog post by its id', method: 'GET', path: '/posts/{id}' },
            ],
          },
        ],
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, dataDir, { readyMs: 60_000 });
      for (const integration of ['shop', 'dead']) {
        const res = await admin(agents.base, 'POST', '/credentials', { integration, kind: 'api_key', query: 'k', value: SHARED_KEY });
        assert.equal(res.status, 201, res.text);
      }
    },
    { timeout: 90_000 },
  );

  after(
    async () => {
      for (const s of sessions) await s.close();
      if (agents) await stop(agents.p, 'SIGKILL');
      await closing?.close();
      await blog?.close();
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 30_000 },
  );

  test('1. a failed HTTP tool call names the operation, never the URL, the key or the values', { timeout: 60_000 }, async () => {
    const alice = await open(KEYS.alice);
    for (const [tool, want] of [['shop__get_item', /^GET \/items\/\{id\}: /], ['dead__get_item', /^GET \/items\/\{id\}: .*connection refused/]]) {
      const res = await call(alice, tool, { id: ALICE_ID, note: ALICE_NOTE });
      assert.equal(res.isError, true, `${tool}: ${JSON.stringify(res)}`);
      assert.match(text(res), want);
      assertNone(`${tool}'s error`, text(res), [SHARED_KEY, 'k=', ALICE_ID, ALICE_NOTE, '/items/aliceprivate']);
    }
  });

  test('2. another principal sees error classes, never the key nor the first caller\'s values', { timeout: 60_000 }, async () => {
    const bob = await open(KEYS.bob);
    const perf = ok(await call(bob, 'get_tool_performance', {}), 'get_tool_performance');
    const byTool = Object.fromEntries(perf.tools.map((t) => [t.tool, t]));
    assert.deepEqual(byTool.dead__get_item?.commonErrors, { 'connection refused': 1 }, JSON.stringify(perf));
    assert.equal(Object.keys(byTool.shop__get_item?.commonErrors ?? {}).length, 1, JSON.stringify(perf));
    assertNone("bob's get_tool_performance", JSON.stringify(perf), [SHARED_KEY, ALICE_ID, ALICE_NOTE, '/items/']);
    for (const p of ['/tools/performance', '/audit?kind=tool_call']) {
      const res = await admin(agents.base, 'GET', p);
      assert.equal(res.status, 200, res.text);
      assertNone(`GET /admin/v1${p}`, res.text, [SHARED_KEY]);
    }
    assertNone('GET /admin/v1/tools/performance', (await admin(agents.base, 'GET', '/tools/performance')).text, [ALICE_ID, ALICE_NOTE]);
  });

  test('3. a password in a request stays out of the family, the thought and the plan', { timeout: 60_000 }, async () => {
    const alice = await open(KEYS.alice);
    for (const request of REQUESTS) {
      const th = ok(await call(alice, 'generate_thoughts', { request }), 'generate_thoughts');
      assert.match(th.thought.reasoning, /<secret>/, th.thought.reasoning);
      assertNone('generate_thoughts', JSON.stringify(th), PASSWORDS);
      const pl = ok(await call(alice, 'generate_plan', { thoughtId: th.thought.id }), 'generate_plan');
      assertNone('generate_plan', JSON.stringify(pl), PASSWORDS);
      const plan = await admin(agents.base, 'GET', `/plans/${pl.plan.id}`);
      assert.equal(plan.status, 200, plan.text);
      assert.equal(JSON.parse(plan.text).goal, 'delete post <num> password <secret>', plan.text);
      assertNone(`GET /admin/v1/plans/${pl.plan.id}`, plan.text, PASSWORDS);
      const thought = await admin(agents.base, 'GET', `/thoughts/${th.thought.id}`);
      assert.equal(thought.status, 200, thought.text);
      assertNone(`GET /admin/v1/thoughts/${th.thought.id}`, thought.text, PASSWORDS);
    }
  });

  test('4. after SIGTERM, no file of the data dir holds the key or a password', { timeout: 60_000 }, async () => {
    const exit = await stop(agents.p, 'SIGTERM', 15_000);
    assert.equal(exit?.code, 0, `${JSON.stringify(exit)}: ${agents.p.output().slice(-2000)}`);
    assertNone('the log', agents.p.output(), [SHARED_KEY, ...PASSWORDS]);
    const files = [];
    const walk = (dir) => {
      for (const name of readdirSync(dir)) {
        const p = path.join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(dataDir);
    assert.ok(files.some((f) => f.endsWith('.db')), `the SQLite file is in ${files}`);
    for (const f of files) assertNone(f, readFileSync(f).toString('latin1'), [SHARED_KEY, ...PASSWORDS]);
  });
});
