// Memory visibility end to end: with several API keys, one key's memory
// tools must not return what another key's calls stored, unless the server shares memory.
//
// The test starts two `agents-mcp serve --config` of its own (temp data dirs), each with three random
// keys: alice and bob (scope mcp), and admin (admin:read). The first runs with the default
// visibility; the second with AGENTS_MCP_MEMORY_VISIBILITY=shared. Clients are the official
// TypeScript SDK over streamable HTTP.
//
//   1. default: alice stores an insight with store_insight and finds it again by meaning
//      (query_memory, mode semantic, so the vector index holds it); bob stores one of his own,
//      then bob's query_memory, get_similar_tasks and get_successful_plans with alice's words
//      never return alice's insight, by meaning or by words (a query that only alice's text
//      matches), while bob finds his own;
//   2. default: the admin API still lists alice's insight, with her principal, and ?principal=
//      selects one key's insights;
//   3. shared: bob's query_memory returns alice's insight;
//   4. SIGTERM: both servers exit 0.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const KEYS = { alice: secret('e2e-alice'), bob: secret('e2e-bob'), admin: secret('e2e-admin') };
// The principal id of a key, as the server names it: "key:" and 12 hex digits of its SHA-256.
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const RUN = `${process.pid}${Date.now().toString(36)}`;
// Words only alice's insight holds: a lexical search with them matches nothing else.
const ALICE_WORDS = `zanzibar payroll export ${RUN}`;
const ALICE_TEXT = `the ${ALICE_WORDS} of acme lives in the finance vault`;
const BOB_TEXT = `the quarterly payroll report of globex goes to the finance channel ${RUN}`;

/** A TS SDK client over streamable HTTP presenting key; resolves with { client, call, close }. */
async function connect(base, key) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await withTimeout(client.connect(transport), 10_000, 'connect');
  const call = async (name, args) => {
    const res = await withTimeout(client.callTool({ name, arguments: args }), 20_000, `call ${name}`);
    assert.equal(res.isError, undefined, `${name}: ${JSON.stringify(res)}`);
    return res.structuredContent;
  };
  const close = async () => {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  };
  return { client, call, close };
}

/** Starts a server with the three keys and extra env; resolves with { agents, work }. */
async function serve(name, env = {}) {
  const work = mkdtempSync(path.join(tmpdir(), `agents-mcp-e2e-memvis-${name}-`));
  const config = {
    auth: {
      api_keys: [
        { name: 'alice', key: KEYS.alice, scopes: ['mcp'] },
        { name: 'bob', key: KEYS.bob, scopes: ['mcp'] },
        { name: 'admin', key: KEYS.admin, scopes: ['admin:read'] },
      ],
    },
  };
  const configPath = path.join(work, 'config.yaml');
  writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
  const agents = await startAgents(BIN, configPath, path.join(work, 'data'), { env, readyMs: 30_000 });
  return { agents, work };
}

/** Stores an insight as s and waits until s finds it again by meaning. Returns it. */
async function storeAndFind(s, text) {
  const { insight } = await s.call('store_insight', { text, type: 'observation' });
  await eventually(
    async () => {
      const res = await s.call('query_memory', { query: text, kinds: ['insights'], limit: 5 });
      assert.equal(res.mode, 'semantic');
      assert.ok(res.items.some((it) => it.id === insight.id), `not found yet: ${JSON.stringify(res)}`);
    },
    15_000,
    `the owner finds ${insight.id} by meaning`,
  );
  return insight;
}

/** Every id the memory tools return to s for query (all kinds, and each reading tool). */
async function idsSeen(s, query) {
  const ids = new Set();
  const texts = [];
  const qm = await s.call('query_memory', { query, limit: 50 });
  for (const it of qm.items) {
    ids.add(it.id);
    texts.push(JSON.stringify(it));
  }
  const st = await s.call('get_similar_tasks', { query, limit: 50 });
  for (const t of st.tasks) ids.add(t.learning.id);
  const sp = await s.call('get_successful_plans', { goal: query, limit: 50 });
  for (const p of sp.plans) ids.add(p.pattern.id);
  return { ids, texts, mode: qm.mode };
}

async function adminGet(base, p) {
  const res = await fetch(`${base}/admin/v1${p}`, { headers: { Authorization: `Bearer ${KEYS.admin}` }, signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200, `GET ${p}: ${res.status}`);
  return res.json();
}

describe('memory visibility with two API keys', () => {
  const servers = [];
  const sessions = [];
  let principal; // the default server
  let shared; // AGENTS_MCP_MEMORY_VISIBILITY=shared
  let aliceInsight;

  const open = async (srv, key) => {
    const s = await connect(srv.agents.base, key);
    sessions.push(s);
    return s;
  };

  before(
    async () => {
      principal = await serve('principal');
      servers.push(principal);
      shared = await serve('shared', { AGENTS_MCP_MEMORY_VISIBILITY: 'shared' });
      servers.push(shared);
    },
    { timeout: 70_000 },
  );

  after(
    async () => {
      for (const s of sessions) await s.close();
      for (const srv of servers) {
        await stop(srv.agents.p, 'SIGTERM', 10_000);
        rmSync(srv.work, { recursive: true, force: true });
      }
    },
    { timeout: 30_000 },
  );

  test('1. by default, bob never sees what alice stored, by meaning or by words', { timeout: 60_000 }, async () => {
    const alice = await open(principal, KEYS.alice);
    const bob = await open(principal, KEYS.bob);
    aliceInsight = await storeAndFind(alice, ALICE_TEXT);
    assert.equal(aliceInsight.principal, principalOf(KEYS.alice), 'the insight records alice as its principal');
    const bobInsight = await storeAndFind(bob, BOB_TEXT);

    // By meaning: alice's own text, the nearest thing in the index to the query.
    const byMeaning = await idsSeen(bob, ALICE_TEXT);
    assert.equal(byMeaning.mode, 'semantic');
    assert.ok(!byMeaning.ids.has(aliceInsight.id), `bob's semantic search returned alice's insight: ${byMeaning.texts.join('\n')}`);
    assert.ok(!byMeaning.texts.some((t) => t.includes('zanzibar')), `alice's text leaked: ${byMeaning.texts.join('\n')}`);
    assert.ok(byMeaning.ids.has(bobInsight.id), `bob does not see his own insight: ${byMeaning.texts.join('\n')}`);

    // By words: words that only alice's insight holds.
    const byWords = await idsSeen(bob, ALICE_WORDS);
    assert.ok(!byWords.ids.has(aliceInsight.id), `bob's search by alice's words returned her insight: ${byWords.texts.join('\n')}`);

    // Alice still sees her own, and not bob's.
    const aliceSees = await idsSeen(alice, BOB_TEXT);
    assert.ok(!aliceSees.ids.has(bobInsight.id), `alice sees bob's insight: ${aliceSees.texts.join('\n')}`);
    assert.ok(aliceSees.ids.has(aliceInsight.id), `alice does not see her own insight: ${aliceSees.texts.join('\n')}`);
  });

  test('2. the admin API sees every principal and filters by one', { timeout: 20_000 }, async () => {
    assert.ok(aliceInsight, 'test 1 stored alice insight');
    const base = principal.agents.base;
    const all = await adminGet(base, `/insights?limit=50`);
    const found = all.items.find((it) => it.id === aliceInsight.id);
    assert.ok(found, `the admin does not list alice's insight: ${JSON.stringify(all)}`);
    assert.equal(found.principal, principalOf(KEYS.alice));
    const bobs = await adminGet(base, `/insights?principal=${encodeURIComponent(principalOf(KEYS.bob))}`);
    assert.ok(bobs.items.length >= 1 && bobs.items.every((it) => it.principal === principalOf(KEYS.bob)), JSON.stringify(bobs));
    const alices = await adminGet(base, `/insights?q=${encodeURIComponent(ALICE_TEXT)}&principal=${encodeURIComponent(principalOf(KEYS.alice))}`);
    assert.deepEqual(
      alices.items.map((it) => it.principal),
      alices.items.map(() => principalOf(KEYS.alice)),
    );
    assert.ok(alices.items.some((it) => it.id === aliceInsight.id), JSON.stringify(alices));
  });

  test('3. with AGENTS_MCP_MEMORY_VISIBILITY=shared, bob sees what alice stored', { timeout: 60_000 }, async () => {
    const alice = await open(shared, KEYS.alice);
    const bob = await open(shared, KEYS.bob);
    const insight = await storeAndFind(alice, ALICE_TEXT);
    await eventually(
      async () => {
        const seen = await idsSeen(bob, ALICE_TEXT);
        assert.ok(seen.ids.has(insight.id), `bob does not see alice's insight: ${seen.texts.join('\n')}`);
      },
      15_000,
      'bob finds alice insight under shared memory',
    );
    const byWords = await idsSeen(bob, ALICE_WORDS);
    assert.ok(byWords.ids.has(insight.id), `bob does not find alice's insight by her words: ${byWords.texts.join('\n')}`);
  });

  test('4. SIGTERM: both servers exit 0', { timeout: 30_000 }, async () => {
    for (const s of sessions.splice(0)) await s.close();
    for (const srv of servers) {
      const exit = await stop(srv.agents.p, 'SIGTERM', 10_000);
      assert.deepEqual(exit, { code: 0, signal: null }, `${srv.work}: ${srv.agents.p.output().slice(-2000)}`);
      for (const k of Object.values(KEYS)) assert.ok(!srv.agents.p.output().includes(k), 'a key is in the log');
    }
  });
});
