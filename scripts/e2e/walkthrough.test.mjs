// The newcomer walkthrough the README promises, as one script:
//
//   `make run`; connect an MCP client with an API key; run a task; `curl -H 'Authorization: Bearer …'
//   localhost:8080/admin/v1/learnings?q=…` and see it; find the call in /admin/v1/audit with secrets
//   redacted; see its metrics in /metrics.
//
// The server is what `make run` starts (`agents-mcp serve`, no config file, no model, no upstreams,
// the embedded SQLite store under ./data of its working directory) plus one key in
// AGENTS_MCP_API_KEYS, on a free loopback port instead of 8080, in a temp working directory, with the
// caller's AGENTS_MCP_*/OPENAI_*/… settings removed (hermeticEnv). The client is the official
// TypeScript SDK over streamable HTTP; it offers no sampling, so AGENTS_MCP_LLM=auto (the default)
// falls back to the builtin offline planner.
//
//   1. start: serving, data under ./data, the key nowhere in the log;
//   2. the SDK client connects with `Authorization: Bearer <key>` and lists run_task;
//   3. run_task: a request that stores an insight whose text holds `password=<secret>` (the builtin
//      planner puts the quoted text into store_insight's `text`), with a plan input `api_key` holding a
//      second secret; the task succeeds with one store_insight step whose output is that insight, both
//      shown with the secret redacted;
//   4. /admin/v1/learnings?q=<words of the request> with the key lists the task's learning;
//   5. /admin/v1/audit (by requestId, principal, kind, target) holds the run_task call and the
//      executor's store_insight call under the key's principal and the run_task request's id, with both
//      secrets replaced by the redaction marker; neither secret is anywhere in the audit, nor in the log;
//   6. /metrics, with the key (keys are configured: without one it is 401), counts the two tool calls
//      and the succeeded task;
//   7. without a key, or with a wrong one, /admin/v1/learnings is 401 (and the refusal is audited);
//      SIGTERM: exit 0, a JSON log without a secret.
//
// Both answers of the admin API are also checked against the OpenAPI document the server serves.

import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, freePort, hermeticEnv, start, stop } from './lib/procs.mjs';

const RUN = `${process.pid}-${Date.now().toString(36)}`;
/** Random lower-case letters: no digits, so that only the rule under test can hide them. */
const letters = (n) => Array.from({ length: n }, () => String.fromCharCode(97 + randomInt(26))).join('');

const KEY = `e2e-walk-${randomBytes(24).toString('base64url')}`;
const WRONG_KEY = `e2e-wrong-${randomBytes(24).toString('base64url')}`;
// Hidden by pattern (password=…) in free text, and by key name (api_key) in an object.
const SECRET_TEXT = `pw${letters(22)}`;
const SECRET_INPUT = `in${letters(22)}`;
const SECRETS = { KEY, WRONG_KEY, SECRET_TEXT, SECRET_INPUT };
// The principal of a key: "key:" and the first 12 hex digits of its SHA-256 (docs/operations.md, Security defaults).
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const PRINCIPAL = principalOf(KEY);
const MARK = '[redacted]';

const INSIGHT = `the staging deploy password=${SECRET_TEXT} rotates every month`;
const REQUEST = `Store an insight "${INSIGHT}"`;
const QUERY = 'staging deploy password rotates'; // words of the request, not the secret
const REQUEST_ID = `e2e-walkthrough-${RUN}`; // the X-Request-Id of the run_task POST

// ---------------------------------------------------------------------------------------------

/** GET base+p with the key (or none): { status, headers, text, json }. */
async function get(base, p, key) {
  const headers = key === undefined ? {} : { Authorization: `Bearer ${key}` };
  const res = await fetch(new URL(p, base), { headers, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, json };
}

const show = (res) => `HTTP ${res.status} ${res.text.slice(0, 800)}`;

/** The sum of the samples of a Prometheus metric whose labels include labels; undefined if none. */
function metric(text, name, labels = {}) {
  let sum;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

function assertNoSecret(text, where, which = Object.keys(SECRETS)) {
  for (const name of which) assert.ok(!text.includes(SECRETS[name]), `${where} holds ${name} (${SECRETS[name]}):\n${text.slice(0, 3000)}`);
}

/**
 * `agents-mcp serve --addr 127.0.0.1:<free port>` with cwd as its working directory (so the data
 * lands in cwd/data, as with `make run`) and the one key; another port when that one was taken.
 */
async function serve(cwd) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const p = start(path.resolve(BIN), ['serve', '--addr', `127.0.0.1:${port}`], { name: 'agents-mcp', cwd, baseEnv: hermeticEnv(), env: { AGENTS_MCP_API_KEYS: KEY } });
    try {
      await p.waitFor(/"msg":"serving"/, 20_000, 'agents-mcp serving');
      return { p, base: `http://127.0.0.1:${port}` };
    } catch (err) {
      await stop(p, 'SIGKILL');
      if (attempt >= 3 || !/address already in use/.test(p.output())) {
        err.message += `\n--- agents-mcp output ---\n${p.output().slice(-4000)}`;
        throw err;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

describe('the newcomer walkthrough: make run, a key, a task, learnings, audit, metrics', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-walkthrough-'));
  let agents; // { p, base }
  let base;
  let client;
  let transport;
  let openapi; // the served OpenAPI document
  let task; // run_task's task
  const wire = []; // { method, requestId } of every POST the SDK sent

  /** Validates an admin API answer against a schema of the served OpenAPI document. */
  function checkSchema(name, value) {
    const validate = new AjvJsonSchemaValidator().getValidator({ $ref: `#/components/schemas/${name}`, components: openapi.components });
    const r = validate(value);
    assert.ok(r.valid, `not a ${name}: ${r.errorMessage}\n${JSON.stringify(value).slice(0, 1500)}`);
  }

  before(
    async () => {
      agents = await serve(work);
      base = agents.base;
    },
    { timeout: 70_000 },
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

  test('1. `make run` plus a key: serving on the defaults, data under ./data, the key not logged', async () => {
    const ready = await get(base, '/readyz');
    assert.equal(ready.status, 200, show(ready));
    assert.ok(existsSync(path.join(work, 'data', 'agents-mcp.db')), `no ./data/agents-mcp.db in the working directory ${work}`);
    const out = agents.p.output();
    assert.match(out, /"msg":"setting"/, 'the effective settings are logged');
    assertNoSecret(out, 'the start-up log', ['KEY']);
  });

  test('2. an MCP client connects over streamable HTTP with the key', { timeout: 20_000 }, async () => {
    // Every POST of the session is recorded; the run_task call carries a request id of ours, so that
    // the audit can be searched by it.
    const recording = async (url, init = {}) => {
      const headers = new Headers(init.headers);
      let msg;
      try {
        msg = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
      } catch {
        /* not JSON */
      }
      if (msg?.method === 'tools/call' && msg.params?.name === 'run_task') headers.set('X-Request-Id', REQUEST_ID);
      const res = await fetch(url, { ...init, headers });
      if ((init.method ?? 'GET') === 'POST') wire.push({ method: msg?.method, requestId: res.headers.get('x-request-id'), status: res.status, auth: headers.get('authorization') });
      return res;
    };
    client = newClient(); // no sampling: the builtin planner plans
    transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } }, fetch: recording });
    await withTimeout(client.connect(transport), 10_000, 'connect with the key');
    const { tools } = await withTimeout(client.listTools(), 10_000, 'tools/list');
    const names = tools.map((t) => t.name);
    for (const n of ['run_task', 'store_insight']) assert.ok(names.includes(n), `${n} is listed: ${names}`);
    assert.ok(wire.length >= 3, `POSTs: ${JSON.stringify(wire)}`);
    for (const w of wire) assert.equal(w.auth, `Bearer ${KEY}`, `${w.method} sent without the key`);
  });

  test('3. run_task: the builtin planner stores the insight; the task succeeds', { timeout: 30_000 }, async () => {
    assert.ok(client, 'test 2 connected');
    const res = await withTimeout(
      client.callTool({ name: 'run_task', arguments: { request: REQUEST, inputs: { api_key: SECRET_INPUT } } }),
      25_000,
      'run_task',
    );
    assert.notEqual(res.isError, true, `run_task: ${JSON.stringify(res).slice(0, 2000)}`);
    task = res.structuredContent?.task;
    assert.match(task?.id ?? '', /^tsk_/, `run_task result: ${JSON.stringify(res).slice(0, 2000)}`);
    assert.equal(task.status, 'succeeded', `task: ${JSON.stringify(task).slice(0, 2000)}`);
    // Task views show secrets redacted: the request, and the step's output too.
    assert.equal(task.request, REQUEST.replace(SECRET_TEXT, MARK));
    assert.ok(!JSON.stringify(task).includes(SECRET_TEXT) && !JSON.stringify(task).includes(SECRET_INPUT), `the task shows a secret: ${JSON.stringify(task).slice(0, 2000)}`);
    assert.equal(res.structuredContent.waiting ?? false, false, 'run_task waited for the end');
    // One step: store_insight, with the quoted text of the request.
    assert.deepEqual(task.steps.map((s) => [s.status, s.output?.insight?.text]), [['succeeded', INSIGHT.replace(SECRET_TEXT, MARK)]], `steps: ${JSON.stringify(task.steps).slice(0, 2000)}`);
    assert.match(task.steps[0].output.insight.id, /^ins_/);
    assert.equal(wire.find((w) => w.method === 'tools/call')?.requestId, REQUEST_ID, `the run_task POST kept its request id: ${JSON.stringify(wire)}`);
  });

  test('4. /admin/v1/learnings?q=… with the key lists the task', { timeout: 20_000 }, async () => {
    assert.ok(task, 'test 3 ran the task');
    const doc = await get(base, '/admin/v1/openapi.json', KEY);
    assert.equal(doc.status, 200, show(doc));
    openapi = doc.json;
    assert.ok(openapi?.components?.schemas?.LearningPage && openapi.components.schemas.AuditPage, 'the OpenAPI document has LearningPage and AuditPage');

    const q = `/admin/v1/learnings?q=${encodeURIComponent(QUERY)}`;
    // Learnings are written when the task ends, and indexed in the background: poll.
    const res = await eventually(
      async () => {
        const r = await get(base, q, KEY);
        assert.equal(r.status, 200, show(r));
        assert.ok(r.json.items.some((l) => l.taskId === task.id), `task ${task.id} not among ${JSON.stringify(r.json.items.map((l) => l.taskId))}`);
        return r;
      },
      10_000,
      `GET ${q}`,
    );
    checkSchema('LearningPage', res.json);
    assert.match(String(res.headers.get('content-type')), /^application\/json/);
    const l = res.json.items.find((x) => x.taskId === task.id);
    // The learning is of the request, with the secret redacted as in the audit: learnings are read by
    // everyone with memory access.
    assert.equal(l.query, REQUEST.replace(SECRET_TEXT, MARK), `the learning's query`);
    assert.equal(l.outcome, 'success');
    assert.deepEqual(l.tools, ['store_insight']);
    assert.deepEqual(l.steps, ['store_insight']);
    assert.equal(typeof l.score, 'number', 'a ranked answer has scores');
    assert.ok(['semantic', 'lexical'].includes(res.json.mode), `mode: ${res.json.mode}`);
    // The learning is also found by its own id.
    const one = await get(base, `/admin/v1/learnings/${encodeURIComponent(l.id)}`, KEY);
    assert.equal(one.status, 200, show(one));
    assert.equal(one.json.taskId, task.id);
  });

  test('5. /admin/v1/audit: both calls, under the key and the request id, with the secrets redacted', { timeout: 20_000 }, async () => {
    assert.ok(task && openapi, 'tests 3 and 4 ran');
    const byRequest = `/admin/v1/audit?requestId=${encodeURIComponent(REQUEST_ID)}&kind=tool_call`;
    // The audit trail is written in batches, off the calls' path: poll.
    const res = await eventually(
      async () => {
        const r = await get(base, byRequest, KEY);
        assert.equal(r.status, 200, show(r));
        const targets = r.json.items.map((e) => e.target).sort();
        assert.deepEqual(targets, ['run_task', 'store_insight'], `audit entries of request ${REQUEST_ID}`);
        return r;
      },
      10_000,
      `GET ${byRequest}`,
    );
    checkSchema('AuditPage', res.json);
    const entry = (t) => res.json.items.find((e) => e.target === t);
    for (const e of res.json.items) {
      assert.equal(e.requestId, REQUEST_ID);
      assert.equal(e.principal, PRINCIPAL, `${e.target}: the principal is the key's id, never the key`);
      assert.equal(e.kind, 'tool_call');
      assert.equal(e.outcome, 'ok', `${e.target}: ${JSON.stringify(e)}`);
    }
    // The client's call: the request with its password redacted by pattern, the input by key name.
    const run = entry('run_task');
    assert.equal(run.arguments?.request, REQUEST.replace(SECRET_TEXT, MARK), `run_task arguments: ${JSON.stringify(run.arguments)}`);
    assert.deepEqual(run.arguments?.inputs, { api_key: MARK }, `run_task inputs: ${JSON.stringify(run.arguments)}`);
    // The executor's step, called in-process for the same caller.
    const step = entry('store_insight');
    assert.equal(step.arguments?.text, INSIGHT.replace(SECRET_TEXT, MARK), `store_insight arguments: ${JSON.stringify(step.arguments)}`);

    // The other filters find the same entries, and only entries that match them.
    const byTarget = await get(base, `/admin/v1/audit?principal=${encodeURIComponent(PRINCIPAL)}&target=store_insight`, KEY);
    assert.equal(byTarget.status, 200, show(byTarget));
    assert.ok(byTarget.json.items.length >= 1 && byTarget.json.items.every((e) => e.principal === PRINCIPAL && e.target === 'store_insight'), show(byTarget));
    assert.ok(byTarget.json.items.some((e) => e.id === step.id), `store_insight entry ${step.id} by principal and target: ${show(byTarget)}`);
    const all = await get(base, '/admin/v1/audit?kind=tool_call&limit=100', KEY);
    assert.equal(all.status, 200, show(all));
    assert.ok(all.json.items.some((e) => e.id === run.id) && all.json.items.every((e) => e.kind === 'tool_call'), show(all));

    // Neither secret (nor the key) anywhere in the audit trail, and the marker where they were.
    for (const r of [res, byTarget, all]) {
      assertNoSecret(r.text, 'the audit trail');
      assert.ok(r.text.includes(MARK), `no ${MARK} in ${show(r)}`);
    }
    assertNoSecret(agents.p.output(), "the server's log");
  });

  test('6. /metrics, with the key: the tool calls and the succeeded task', { timeout: 20_000 }, async () => {
    assert.ok(task, 'test 3 ran the task');
    const anonymous = await get(base, '/metrics');
    assert.equal(anonymous.status, 401, `/metrics without a key: ${show(anonymous)}`);
    const res = await get(base, '/metrics', KEY);
    assert.equal(res.status, 200, show(res));
    // A fresh server: exactly the one run_task call and the one step it ran.
    assert.equal(metric(res.text, 'agents_mcp_tool_calls_total', { tool: 'run_task', source: 'local', outcome: 'ok' }), 1, 'run_task calls');
    assert.equal(metric(res.text, 'agents_mcp_tool_calls_total', { tool: 'store_insight', source: 'local', outcome: 'ok' }), 1, 'store_insight calls');
    assert.equal(metric(res.text, 'agents_mcp_tool_call_errors_total') ?? 0, 0, 'no tool call failed');
    for (const tool of ['run_task', 'store_insight']) {
      assert.equal(metric(res.text, 'agents_mcp_tool_call_duration_seconds_count', { tool }), 1, `${tool} duration observed`);
    }
    // Tasks by status are read from the store at most every few seconds: poll.
    await eventually(
      async () => {
        const m = (await get(base, '/metrics', KEY)).text;
        assert.equal(metric(m, 'agents_mcp_tasks', { status: 'succeeded' }), 1, 'agents_mcp_tasks{status="succeeded"}');
        for (const status of ['failed', 'running', 'pending', 'paused', 'cancelled']) assert.equal(metric(m, 'agents_mcp_tasks', { status }) ?? 0, 0, status);
      },
      15_000,
      'the succeeded task in /metrics',
    );
    assertNoSecret(res.text, '/metrics');
  });

  test('7. without the key, /admin/v1/learnings is 401; SIGTERM exits 0 with a clean log', { timeout: 30_000 }, async () => {
    const q = `/admin/v1/learnings?q=${encodeURIComponent(QUERY)}`;
    for (const [what, key] of [['no key', undefined], ['a wrong key', WRONG_KEY]]) {
      const res = await get(base, q, key);
      assert.equal(res.status, 401, `${what}: ${show(res)}`);
      assert.equal(res.json?.error?.code, 'unauthenticated', `${what}: ${show(res)}`);
      assert.match(String(res.headers.get('www-authenticate')), /^Bearer /, `${what}: WWW-Authenticate`);
      assert.ok(!res.text.includes(task?.id ?? 'tsk_'), `${what}: the answer shows the learning`);
      assertNoSecret(res.text, `the 401 to ${what}`);
    }
    // The wrong key's refusal is in the audit trail under its principal, not as the key.
    const denied = await eventually(
      async () => {
        const r = await get(base, `/admin/v1/audit?kind=auth_failure&principal=${encodeURIComponent(principalOf(WRONG_KEY))}`, KEY);
        assert.equal(r.status, 200, show(r));
        assert.equal(r.json.items.length, 1, show(r));
        return r;
      },
      10_000,
      'the wrong key in the audit trail',
    );
    assert.equal(denied.json.items[0].outcome, 'denied', show(denied));
    assertNoSecret(denied.text, 'the audit of the refusal');

    await transport.terminateSession().catch(() => {});
    await client.close();
    client = undefined;
    transport = undefined;
    const exit = await stop(agents.p, 'SIGTERM', 10_000);
    assert.deepEqual(exit, { code: 0, signal: null }, `agents-mcp exit:\n${agents.p.output().slice(-3000)}`);
    const out = agents.p.output();
    assertNoSecret(out, "the server's log");
    const lines = out.split('\n').filter((l) => l.trim());
    const notJSON = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object';
      } catch {
        return true;
      }
    });
    assert.deepEqual(notJSON.slice(0, 5), [], 'every log line is JSON');
    assert.ok(lines.some((l) => l.includes('"msg":"stopped"')), 'the server logged that it stopped');
  });
});
