// Tasks belong to their creator, end to end: an attacker with a valid key of
// its own must not read, cancel or resume another principal's task, the steps of a task are
// audited in the name of the principal that created it, and the secrets a task was given are not
// stored in clear.
//
// The test starts its own `agents-mcp serve --config` (temp data dir, the embedded SQLite store)
// with three API keys:
//   - alice: scopes [mcp]; her client declares sampling and plays the LLM (AGENTS_MCP_LLM=sampling,
//     a scripted thought and plan, as agents.test.mjs does); it declares no elicitation, so a step
//     that needs a confirmation pauses the task;
//   - bob:   scopes [mcp], the attacker;
//   - admin: every scope, to read the audit trail and the admin API.
//
//   1. alice runs a task with an `api_key` input and a `password=` in another: it pauses on a step
//      planned with needsConfirmation; get_task shows her as its principal, the secrets redacted;
//   2. bob: list_tasks does not show it; get_task, cancel_task and resume_task (confirming the
//      paused step) get exactly the answer of a task id that does not exist; the task is still
//      paused and its step never ran;
//   3. alice confirms; the task succeeds; /admin/v1/audit names alice (not "executor", not bob) for
//      every call of the task's steps; /admin/v1/tasks?principal= lists it, redacted;
//   4. after SIGTERM, no file of the data dir (the SQLite database, its WAL) holds either secret.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const hex = (n) => randomBytes(n).toString('hex');
const KEYS = { alice: `e2e-alice-${hex(16)}`, bob: `e2e-bob-${hex(16)}`, admin: `e2e-admin-${hex(16)}` };
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const ALICE = principalOf(KEYS.alice);
const BOB = principalOf(KEYS.bob);

// The secrets alice gives her task: one under a secret name, one as name=value in a plain string.
const API_KEY = `ak${hex(12)}`;
const PASSWORD = `pw${hex(10)}`;
const INPUTS = { api_key: API_KEY, note: `the db password=${PASSWORD} is rotated weekly` };

const RUN = `${process.pid}-${Date.now().toString(36)}`;
const REQUEST = `Look up cache tools, then clear the cache with my key (run ${RUN})`;
const THOUGHT = {
  subGoals: ['find the cache tools', 'clear the cache'],
  reasoning: 'search first, then act once the user agrees',
  approaches: ['search then act'],
  constraints: ['ask before clearing'],
  assumptions: [],
  uncertainties: [],
  confidence: 0.8,
  recommendedTools: [{ tool: 'search_tools', reason: 'find tools' }],
};
const PLAN = {
  goal: 'clear the cache',
  steps: [
    { id: 'look', tool: 'search_tools', arguments: { query: 'cache' }, dependsOn: [], description: 'find cache tools' },
    { id: 'clear', tool: 'search_tools', arguments: { query: 'clear cache' }, dependsOn: ['look'], description: 'clear it', needsConfirmation: true },
  ],
  inputs: { type: 'object', properties: { api_key: { type: 'string' }, note: { type: 'string' } } },
};

function scriptedLLM(req) {
  const sys = req.params.systemPrompt ?? '';
  const kind = sys.startsWith('You are the thought agent') ? 'thought' : sys.startsWith('You are the planner') ? 'plan' : 'unknown';
  const answer = kind === 'thought' ? THOUGHT : kind === 'plan' ? PLAN : 'unexpected';
  return { model: 'e2e-scripted', role: 'assistant', content: { type: 'text', text: JSON.stringify(answer) }, stopReason: 'endTurn' };
}

async function connect(base, key, { sampling = false } = {}) {
  const client = newClient({ sampling });
  if (sampling) client.setRequestHandler(CreateMessageRequestSchema, async (req) => scriptedLLM(req));
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

async function admin(base, p) {
  const res = await fetch(`${base}${p}`, { headers: { Authorization: `Bearer ${KEYS.admin}` } });
  const body = await res.text();
  assert.equal(res.status, 200, `${p}: ${res.status} ${body}`);
  return JSON.parse(body);
}

function assertNoSecret(what, s) {
  assert.ok(!s.includes(API_KEY), `${what} holds the api_key in clear`);
  assert.ok(!s.includes(PASSWORD), `${what} holds the password in clear`);
}

describe('security: tasks belong to their creator', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-sectasks-'));
  const dataDir = path.join(work, 'data');
  let agents;
  let alice;
  let bob;
  let taskId;

  before(
    async () => {
      const config = {
        auth: {
          api_keys: [
            { name: 'alice', key: KEYS.alice, scopes: ['mcp'] },
            { name: 'bob', key: KEYS.bob, scopes: ['mcp'] },
            { name: 'admin', key: KEYS.admin, scopes: ['mcp', 'admin:read', 'admin:write'] },
          ],
        },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, dataDir, { env: { AGENTS_MCP_LLM: 'sampling' }, readyMs: 30_000 });
      alice = await connect(agents.base, KEYS.alice, { sampling: true });
      bob = await connect(agents.base, KEYS.bob);
    },
    { timeout: 60_000 },
  );

  after(
    async () => {
      await alice?.close();
      await bob?.close();
      if (agents && !agents.p.exitInfo()) await stop(agents.p, 'SIGTERM', 15_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 30_000 },
  );

  test('1. alice runs a task with secret inputs; it pauses for her confirmation', { timeout: 40_000 }, async () => {
    const out = ok(await call(alice.client, 'run_task', { request: REQUEST, inputs: INPUTS }), 'run_task');
    const task = out.task;
    assert.equal(task.status, 'paused', JSON.stringify(task).slice(0, 2000));
    taskId = task.id;
    const got = ok(await call(alice.client, 'get_task', { taskId }), 'get_task').task;
    assert.equal(got.principal, ALICE);
    assert.equal(got.steps.find((s) => s.stepId === 'clear').status, 'waiting_confirmation');
    assert.deepEqual(Object.keys(got.inputs).sort(), ['api_key', 'note']);
    assertNoSecret('run_task result', JSON.stringify(out));
    assertNoSecret('get_task result', JSON.stringify(got));
  });

  test('2. bob cannot list, get, cancel or resume it: the answer of an unknown id', { timeout: 30_000 }, async () => {
    assert.ok(taskId, 'test 1 ran');
    const listed = ok(await call(bob.client, 'list_tasks', {}), 'list_tasks').tasks;
    assert.deepEqual(listed.map((t) => t.id), [], 'bob lists no task of alice');
    const unknown = `tsk_${'0'.repeat(26)}`;
    for (const [tool, extra] of [['get_task', {}], ['cancel_task', {}], ['resume_task', { confirm: ['clear'] }]]) {
      const mine = await call(bob.client, tool, { taskId, ...extra });
      const none = await call(bob.client, tool, { taskId: unknown, ...extra });
      assert.equal(mine.isError, true, `${tool} of alice's task as bob: ${text(mine)}`);
      assert.equal(text(mine).replaceAll(taskId, 'ID'), text(none).replaceAll(unknown, 'ID'), `${tool}: another's task must look like a missing one`);
      assertNoSecret(`${tool} answer to bob`, JSON.stringify(mine));
    }
    const still = ok(await call(alice.client, 'get_task', { taskId }), 'get_task').task;
    assert.equal(still.status, 'paused', 'bob changed alice\'s task');
    const clear = still.steps.find((s) => s.stepId === 'clear');
    assert.equal(clear.status, 'waiting_confirmation');
    assert.equal(clear.attempts, 0, 'the step bob confirmed ran');
  });

  test('3. alice confirms; every step is audited in her name; the admin API shows her as the owner', { timeout: 30_000 }, async () => {
    assert.ok(taskId, 'test 1 ran');
    ok(await call(alice.client, 'resume_task', { taskId, confirm: ['clear'] }), 'resume_task');
    await eventually(
      async () => {
        const t = ok(await call(alice.client, 'get_task', { taskId }), 'get_task').task;
        assert.equal(t.status, 'succeeded', JSON.stringify(t.steps));
      },
      15_000,
      'the task succeeded',
      200,
    );
    // The steps' calls of search_tools: two, both alice's. Audit entries are written in batches.
    await eventually(
      async () => {
        const page = await admin(agents.base, '/admin/v1/audit?kind=tool_call&target=search_tools&limit=100');
        const principals = page.items.map((e) => e.principal);
        assert.equal(principals.length, 2, JSON.stringify(page.items));
        assert.deepEqual([...new Set(principals)], [ALICE], `search_tools calls audited for ${principals}`);
      },
      10_000,
      'the step calls in the audit trail',
      200,
    );
    const mine = await admin(agents.base, `/admin/v1/tasks?principal=${encodeURIComponent(ALICE)}`);
    assert.deepEqual(mine.items.map((t) => [t.id, t.principal]), [[taskId, ALICE]]);
    const bobs = await admin(agents.base, `/admin/v1/tasks?principal=${encodeURIComponent(BOB)}`);
    assert.deepEqual(bobs.items, []);
    const detail = await admin(agents.base, `/admin/v1/tasks/${taskId}`);
    assert.equal(detail.principal, ALICE);
    assertNoSecret('GET /admin/v1/tasks/{id}', JSON.stringify(detail));
  });

  test('4. no file of the data dir holds the secrets in clear', { timeout: 30_000 }, async () => {
    assert.ok(taskId, 'test 1 ran');
    await alice.close();
    await bob.close();
    alice = bob = undefined;
    await stop(agents.p, 'SIGTERM', 15_000);
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
    for (const f of files) {
      const bytes = readFileSync(f).toString('latin1');
      assertNoSecret(f, bytes);
    }
    // The generated secrets key is private to the server's user.
    const keyFile = files.find((f) => path.basename(f) === 'secrets.key');
    assert.ok(keyFile, `a secrets key was generated in ${files}`);
    assert.equal(statSync(keyFile).mode & 0o077, 0, 'secrets.key is readable by others');
  });
});
