// The commands of the README's "A first session with a key", run as a reader would copy them.
//
// walkthrough.test.mjs runs the same path with the TypeScript SDK; this file runs the README's own
// text: each `sh` block of that section (but the `make run` line, which is what the test starts
// itself) goes to bash as written, with 127.0.0.1:8080 and localhost:8080 pointed at a server of
// this test's own. The server is `agents-mcp serve` as `make run` starts it, plus the key the README
// names in `AGENTS_MCP_API_KEYS=<key> make run`, in a temp working directory with the caller's
// AGENTS_MCP_*/OPENAI_*/… settings removed.
//
//   1. the `POST /sse` one-liner answers a JSON-RPC result whose task succeeded, request redacted;
//   2. the streamable HTTP block (initialize, notifications/initialized, tools/call run_task with the
//      session id) answers the call as a server-sent event whose task succeeded;
//   3. the admin and metrics block shows the learning (query redacted), the audit entries (redacted)
//      and the tool-call counters;
//   4. the redaction list of docs/operations.md ("What a task keeps") holds: no `hunter2` in the audit trail, the learnings or the
//      insight that `store_insight` stored, which reads `password=[redacted]`;
//   5. without the key, /mcp, /sse and /admin answer 401 with the JSON body the README shows.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { BIN } from './lib/harness.mjs';
import { eventually, freePort, hermeticEnv, start, stop } from './lib/procs.mjs';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');
const SECTION = '## A first session with a key';

/** The `sh` blocks of the README's section, in order. */
function sectionBlocks() {
  const text = readFileSync(README, 'utf8');
  const from = text.indexOf(`\n${SECTION}\n`);
  assert.ok(from >= 0, `README.md has no "${SECTION}" section`);
  const rest = text.slice(from + SECTION.length + 2);
  const end = rest.search(/\n#{2,3} /);
  const section = end >= 0 ? rest.slice(0, end) : rest;
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

const blocks = sectionBlocks();
const runBlock = blocks.find((b) => /make run/.test(b));
const KEY = /AGENTS_MCP_API_KEYS=(\S+) make run/.exec(runBlock ?? '')?.[1];
const commandBlocks = blocks.filter((b) => b !== runBlock);

/** Runs a README block with bash against base (an http://127.0.0.1:port URL): { status, stdout, stderr }. */
function bash(block, base) {
  const hostport = new URL(base).host;
  const script = block.replaceAll('127.0.0.1:8080', hostport).replaceAll('localhost:8080', `localhost:${new URL(base).port}`);
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', script };
}

/** The JSON values among lines (an SSE `data:` line counts as its value). */
function jsonLines(text) {
  const out = [];
  for (let line of text.split('\n')) {
    line = line.replace(/^data: /, '').trim();
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      /* not a whole JSON line */
    }
  }
  return out;
}

async function get(base, p, key) {
  const res = await fetch(new URL(p, base), { headers: key ? { Authorization: `Bearer ${key}` } : {}, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, json };
}

describe("the README's first session with a key, as written", { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-readme-'));
  let agents;
  let base;

  before(
    async () => {
      assert.ok(KEY, `no "AGENTS_MCP_API_KEYS=<key> make run" line in the section:\n${blocks.join('\n---\n')}`);
      assert.equal(commandBlocks.length, 3, `the section's command blocks:\n${commandBlocks.join('\n---\n')}`);
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        const p = start(path.resolve(BIN), ['serve', '--addr', `127.0.0.1:${port}`], { name: 'agents-mcp', cwd: work, baseEnv: hermeticEnv(), env: { AGENTS_MCP_API_KEYS: KEY } });
        try {
          await p.waitFor(/"msg":"serving"/, 20_000, 'agents-mcp serving');
          agents = p;
          base = `http://127.0.0.1:${port}`;
          return;
        } catch (err) {
          await stop(p, 'SIGKILL');
          if (attempt >= 3 || !/address already in use/.test(p.output())) throw err;
        }
      }
    },
    { timeout: 70_000 },
  );

  after(
    async () => {
      if (agents) await stop(agents, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  /** The task of a tools/call run_task answer among the JSON values of out. */
  function taskOf(out, id) {
    const answer = jsonLines(out).find((m) => m.jsonrpc === '2.0' && m.id === id);
    assert.ok(answer, `no JSON-RPC answer with id ${id} in:\n${out.slice(0, 2000)}`);
    assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    assert.notEqual(answer.result?.isError, true, JSON.stringify(answer.result).slice(0, 2000));
    return answer.result?.structuredContent?.task;
  }

  test('1. the POST /sse one-liner runs the task', { timeout: 40_000 }, () => {
    const r = bash(commandBlocks[0], base);
    assert.equal(r.status, 0, `${r.script}\n${r.stderr}`);
    const task = taskOf(r.stdout, 1);
    assert.equal(task?.status, 'succeeded', JSON.stringify(task).slice(0, 2000));
    assert.match(task.request, /password=\[redacted\]/);
    assert.ok(!r.stdout.includes('hunter2'), 'the answer shows the password');
  });

  test('2. the streamable HTTP block: initialize, initialized, run_task with the session id', { timeout: 40_000 }, () => {
    const r = bash(commandBlocks[1], base);
    assert.equal(r.status, 0, `${r.script}\n${r.stderr}`);
    assert.match(r.stdout, /^event: message$/m, `the call is answered as a server-sent event:\n${r.stdout.slice(0, 2000)}`);
    const task = taskOf(r.stdout, 2);
    assert.equal(task?.status, 'succeeded', JSON.stringify(task).slice(0, 2000));
    assert.deepEqual(
      task.steps.map((s) => s.stepId),
      ['store_insight'],
    );
  });

  test('3. the admin and metrics block shows the learning, the audit entries and the counters', { timeout: 40_000 }, async () => {
    // Learnings and the audit trail are written off the call's path: wait for them as a reader would.
    await eventually(
      async () => {
        const a = await get(base, '/admin/v1/audit?kind=tool_call', KEY);
        assert.equal(a.json?.items?.length, 4, a.text.slice(0, 500));
        const l = await get(base, '/admin/v1/learnings?q=staging+deploy', KEY);
        assert.equal(l.json?.items?.length, 2, l.text.slice(0, 500));
      },
      15_000,
      'two learnings and four audit entries',
    );
    const r = bash(commandBlocks[2], base);
    assert.equal(r.status, 0, `${r.script}\n${r.stderr}`);
    const [learnings, audit] = jsonLines(r.stdout);
    assert.ok(learnings?.items?.every((l) => l.query === 'Store an insight "the staging deploy password=[redacted] rotates monthly"'), JSON.stringify(learnings).slice(0, 1500));
    assert.deepEqual(audit?.items?.map((e) => e.target).sort(), ['run_task', 'run_task', 'store_insight', 'store_insight']);
    assert.ok(audit.items.every((e) => JSON.stringify(e.arguments).includes('password=[redacted]')), JSON.stringify(audit).slice(0, 1500));
    assert.match(r.stdout, /^agents_mcp_tool_calls_total\{outcome="ok",source="local",tool="run_task"\} 2$/m, r.stdout.slice(-1500));
    assert.match(r.stdout, /^agents_mcp_tool_calls_total\{outcome="ok",source="local",tool="store_insight"\} 2$/m);
  });

  test('4. what is redacted where, as docs/operations.md lists it', { timeout: 20_000 }, async () => {
    for (const p of ['/admin/v1/audit?kind=tool_call&limit=100', '/admin/v1/learnings?limit=100']) {
      const res = await get(base, p, KEY);
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.ok(!res.text.includes('hunter2'), `${p} shows the password: ${res.text.slice(0, 1500)}`);
    }
    // docs/operations.md: insights are stored redacted, whoever writes them.
    const insights = await get(base, '/admin/v1/insights', KEY);
    assert.equal(insights.status, 200, insights.text.slice(0, 500));
    assert.ok(!insights.text.includes('hunter2'), `the insights show the password: ${insights.text.slice(0, 1500)}`);
    assert.ok(
      insights.json.items.some((i) => i.text === 'the staging deploy password=[redacted] rotates monthly'),
      `docs/operations.md says the insight is stored redacted; the insights are: ${insights.text.slice(0, 1500)}`,
    );
  });

  test('5. without the key: 401 with the JSON body the README shows', { timeout: 20_000 }, async () => {
    for (const p of ['/mcp', '/sse', '/admin/v1/learnings']) {
      const res = await get(base, p);
      assert.equal(res.status, 401, `${p}: ${res.text}`);
      assert.match(String(res.headers.get('content-type')), /^application\/json/);
      assert.deepEqual(res.json, { error: { code: 'unauthenticated', message: 'missing bearer token' } }, p);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="agents-mcp"');
    }
  });
});
