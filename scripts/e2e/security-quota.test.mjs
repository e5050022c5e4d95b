// Quotas per principal, end to end against the real binary: one key
// can no longer fill the store (200 × 16 KB insights in 2.4 s, kept forever), nor make the server
// poll tasks for it without bound.
//
// The test starts its own `agents-mcp serve --config` (temp data dir, the embedded SQLite store)
// with small quotas: 5 insights per principal, 1 task, 1 task id watched by listen streams. Keys:
//   - alice: scopes [mcp]; her client declares sampling and plays the LLM (AGENTS_MCP_LLM=sampling,
//     a scripted thought and plan, as security-tasks.test.mjs does);
//   - bob:   scopes [mcp];
//   - admin: every scope.
//
//   1. alice floods store_insight with 16 KB insights: the 6th is an isError result naming
//      quotas.insights.max_count; bob still stores; the REST bridge answers alice 429
//      quota_exceeded; the admin API answers the admin's own 6th insight 429 quota_exceeded;
//   2. alice's first run_task creates a task, her second is refused naming quotas.tasks.max_count;
//   3. alice's listen stream for her task is acknowledged; a second stream naming one more task id
//      is refused with HTTP 429 and JSON-RPC -32030 naming quotas.listen_task_ids.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { startAgents, stop } from './lib/procs.mjs';
import { raw, show } from './lib/raw.mjs';

const hex = (n) => randomBytes(n).toString('hex');
const KEYS = { alice: `e2e-alice-${hex(16)}`, bob: `e2e-bob-${hex(16)}`, admin: `e2e-admin-${hex(16)}` };
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const ALICE = principalOf(KEYS.alice);
const ADMIN = principalOf(KEYS.admin);

const MAX_INSIGHTS = 5;
const BIG = 'x'.repeat(16 * 1024 - 16); // the report's 16 KB insights

const THOUGHT = {
  subGoals: ['find the cache tools'],
  reasoning: 'search',
  approaches: ['search'],
  constraints: [],
  assumptions: [],
  uncertainties: [],
  confidence: 0.8,
  recommendedTools: [{ tool: 'search_tools', reason: 'find tools' }],
};
const PLAN = {
  goal: 'find the cache tools',
  steps: [{ id: 'look', tool: 'search_tools', arguments: { query: 'cache' }, dependsOn: [], description: 'find cache tools' }],
};

function scriptedLLM(req) {
  const sys = req.params.systemPrompt ?? '';
  const answer = sys.startsWith('You are the thought agent') ? THOUGHT : sys.startsWith('You are the planner') ? PLAN : 'unexpected';
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

/**
 * Opens a 2026-07-28 subscriptions/listen stream for taskIds as key: resolves with
 * { status, first } where first is the first event of a stream (the acknowledgement) or the JSON
 * body of a refusal, and close() ends the stream.
 */
function listen(base, key, taskIds) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'listen-1',
    method: 'subscriptions/listen',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      },
      notifications: { taskIds },
    },
  });
  const url = new URL('/mcp', base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: url.pathname,
        agent: false,
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'subscriptions/listen',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let buf = '';
        const close = () => req.destroy();
        res.on('data', (c) => {
          buf += c.toString();
          if (res.statusCode !== 200) return;
          const m = buf.match(/data: (.*)\n/);
          if (m) resolve({ status: res.statusCode, first: JSON.parse(m[1]), close });
        });
        res.on('end', () => {
          if (res.statusCode !== 200) resolve({ status: res.statusCode, first: JSON.parse(buf), close });
        });
        res.on('error', () => {});
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error('listen timed out')));
    req.on('error', (err) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(body);
  });
}

describe('security: quotas per principal', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-secquota-'));
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
        quotas: { insights: { max_count: MAX_INSIGHTS }, tasks: { max_count: 1 }, listen_task_ids: 1 },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), { env: { AGENTS_MCP_LLM: 'sampling' }, readyMs: 30_000 });
      alice = await connect(agents.base, KEYS.alice, { sampling: true });
      bob = await connect(agents.base, KEYS.bob);
    },
    { timeout: 60_000 },
  );

  after(
    async () => {
      await alice?.close();
      await bob?.close();
      if (agents) await stop(agents.p);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 30_000 },
  );

  test('a flood of store_insight stops at the quota, on every face', { timeout: 120_000 }, async () => {
    let stored = 0;
    let refusal;
    for (let i = 0; i < 4 * MAX_INSIGHTS; i++) {
      const res = await call(alice.client, 'store_insight', { text: `${BIG} ${i}` });
      if (res.isError) {
        refusal = text(res);
        break;
      }
      stored++;
    }
    assert.equal(stored, MAX_INSIGHTS, `alice stored ${stored} insights before the refusal`);
    assert.match(refusal, /quota exceeded/);
    assert.ok(refusal.includes(ALICE) && refusal.includes('quotas.insights.max_count'), `refusal: ${refusal}`);

    // Bob has a quota of his own.
    const bobs = await call(bob.client, 'store_insight', { text: 'bob is not affected' });
    assert.notEqual(bobs.isError, true, text(bobs));

    // The REST bridge answers alice's next one 429, as an HTTP client expects.
    const bridged = await raw(agents.base, '/mcp-json', {
      method: 'POST',
      key: KEYS.alice,
      body: JSON.stringify({ tool: 'store_insight', params: { text: 'one more' } }),
    });
    assert.equal(bridged.status, 429, show(bridged));
    assert.equal(bridged.json?.error?.code, 'quota_exceeded', show(bridged));

    // The admin API stores insights as its caller's: the admin's own quota, 429 past it.
    let status;
    let created = 0;
    for (let i = 0; i < 2 * MAX_INSIGHTS; i++) {
      const res = await raw(agents.base, '/admin/v1/insights', { method: 'POST', key: KEYS.admin, body: JSON.stringify({ text: `admin's ${i}` }) });
      status = res.status;
      if (res.status !== 201) {
        assert.equal(res.status, 429, show(res));
        assert.equal(res.json?.error?.code, 'quota_exceeded', show(res));
        assert.ok(res.json.error.message.includes(ADMIN), show(res));
        break;
      }
      created++;
    }
    assert.equal(status, 429);
    assert.equal(created, MAX_INSIGHTS);

    // What the store holds for alice is exactly her quota.
    const page = await raw(agents.base, `/admin/v1/insights?principal=${encodeURIComponent(ALICE)}&limit=50`, { key: KEYS.admin });
    assert.equal(page.status, 200, show(page));
    assert.equal(page.json.items.length, MAX_INSIGHTS);
  });

  test('run_task past the task quota is refused', { timeout: 120_000 }, async () => {
    const first = await call(alice.client, 'run_task', { request: 'find the cache tools' });
    assert.notEqual(first.isError, true, text(first));
    taskId = first.structuredContent?.task?.id;
    assert.match(taskId ?? '', /^tsk_/, JSON.stringify(first.structuredContent));

    const second = await call(alice.client, 'run_task', { request: 'find the cache tools again' });
    assert.equal(second.isError, true, `a second task was created: ${JSON.stringify(second.structuredContent)}`);
    assert.ok(text(second).includes('quotas.tasks.max_count'), text(second));
  });

  test('listen streams: a quota of task ids watched per principal', { timeout: 60_000 }, async () => {
    assert.ok(taskId, 'the task of the previous test');
    const first = await listen(agents.base, KEYS.alice, [taskId]);
    try {
      assert.equal(first.status, 200);
      assert.equal(first.first.method, 'notifications/subscriptions/acknowledged', JSON.stringify(first.first));
      assert.deepEqual(first.first.params.notifications.taskIds, [taskId]);

      // The same task again costs nothing more; one more id is past the quota of 1.
      const again = await listen(agents.base, KEYS.alice, [taskId]);
      assert.equal(again.status, 200, JSON.stringify(again.first));
      again.close();
      const over = await listen(agents.base, KEYS.alice, [taskId, 'tsk_01ZZZZZZZZZZZZZZZZZZZZZZZZ']);
      assert.equal(over.status, 429, JSON.stringify(over.first));
      assert.equal(over.first.id, 'listen-1');
      assert.equal(over.first.error.code, -32030);
      assert.match(over.first.error.message, /quotas\.listen_task_ids/);
    } finally {
      first.close();
    }
  });
});
