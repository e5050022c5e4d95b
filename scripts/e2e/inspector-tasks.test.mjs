// The MCP Inspector CLI 2.x (`@modelcontextprotocol/inspector`, pinned in package.json; Node 22) calls
// `run_task` on a request whose plan needs an input the request lacks ("store insight …": the builtin
// planner's store_insight step needs `text`), over every transport the CLI speaks (stdio: a spawned
// `agents-mcp stdio`; legacy SSE: /sse; streamable HTTP: /mcp) and in both protocol eras the CLI can be
// told with `--protocol-era` (legacy: initialize at 2025-11-25; modern: 2026-07-28, server/discover and
// no initialize). The CLI cannot answer an elicitation, so the call must come back: a paused task
// whose message says how to answer (resume_task), or a result; never a hang. Each case is bounded by
// INSPECTOR_TASK_BOUND_MS (default 40 s; the cases run concurrently) and fails with the CLI's output
// (and, over HTTP, the last tasks/get answer) when the bound is exceeded.
//
// Over /sse in modern mode the CLI refuses before any call: /sse is a 2024-11-05 transport and does
// not offer 2026-07-28 through server/discover, and the CLI pins the version with no fallback. That
// clear, immediate refusal is accepted here (the call is never made; docs/interface.md says what /sse
// answers to server/discover).
//
// In modern mode over streamable HTTP and stdio the CLI (which declares the Tasks extension but not
// elicitation) gets a task in input_required (inputRequests, a status message naming tasks/update and
// resume_task, and a ttlMs that ends with the wait) and polls tasks/get until a terminal state. The
// server bounds that wait (tasks.input_wait, here INPUT_WAIT): past it the task ends completed with
// run_task's answer for a paused task, which the CLI prints, and a status message saying how it could
// have been answered and how to go on. The test's server and the stdio server get that short wait.
//
// HTTP cases go through a loopback recording proxy so that the test can say which revision the CLI
// negotiated (the `MCP-Protocol-Version` headers and initialize's `protocolVersion`).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { startAgents, stop } from './lib/procs.mjs';

const BIN = process.env.AGENTS_MCP_BIN;
// run.sh gives each test file 60 s (--test-timeout): the cases run concurrently, each bounded well
// inside it, so that hanging cases still report their own failure with the CLI's output.
const BOUND_MS = Number(process.env.INSPECTOR_TASK_BOUND_MS || 40_000);
const LAUNCHER = fileURLToPath(
  new URL('./node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url),
);
const REQUEST = 'store insight about the inspector cli';
// tasks.input_wait of the servers: short, so that a task nobody answers ends well inside BOUND_MS (the
// CLI polls every 5 s).
const INPUT_WAIT = '6s';

/**
 * A loopback HTTP proxy to `target` that records every request's `mcp-protocol-version` header and
 * the `protocolVersion` of initialize requests, streaming answers (SSE included) through unchanged.
 */
function recordingProxy(target) {
  const seen = { headers: new Set(), initialize: new Set(), methods: new Set(), lastTasksGet: undefined };
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const v = req.headers['mcp-protocol-version'];
    if (v) seen.headers.add(v);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let isTasksGet = false;
      try {
        const msgs = [JSON.parse(body.toString('utf8'))].flat();
        for (const m of msgs) {
          if (m?.method) seen.methods.add(m.method);
          if (m?.method === 'tasks/get') isTasksGet = true;
          if (m?.method === 'initialize' && m.params?.protocolVersion) seen.initialize.add(m.params.protocolVersion);
        }
      } catch {
        /* not JSON (GET, empty): nothing to record */
      }
      const out = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (up) => {
          res.writeHead(up.statusCode, up.headers);
          if (isTasksGet) {
            // The last tasks/get answer, for the failure message of a CLI that polls forever.
            let text = '';
            up.on('data', (c) => (text = (text + c).slice(-200_000)));
            up.on('end', () => (seen.lastTasksGet = text));
          }
          up.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        seen,
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
      }),
    ),
  );
}

/** Runs the Inspector CLI with `args`, killed (SIGKILL) after BOUND_MS; resolves with its output. */
function inspector(args) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    // Its own process group, so that a kill on timeout also reaches what the CLI spawned (the stdio
    // server, which would otherwise hold the pipes open).
    const child = spawn(process.execPath, [LAUNCHER, '--cli', ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const killGroup = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, BOUND_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(); // a stdio server left behind by a CLI that exited
      let json;
      for (const text of [stdout, stderr.trim().split('\n').pop() ?? '']) {
        try {
          json = JSON.parse(text); // the result on stdout, or the error envelope on stderr
          break;
        } catch {
          /* reported by show() */
        }
      }
      resolve({ code, signal, stdout, stderr, json, timedOut, ms: Date.now() - started });
    });
  });
}

function show(r) {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''} after ${r.ms} ms\nstderr:\n${r.stderr.slice(-3000)}\nstdout:\n${r.stdout.slice(0, 3000)}`;
}

const toolCall = ['--method', 'tools/call', '--tool-name', 'run_task', '--tool-arg', `request=${REQUEST}`, '--format', 'json'];

/** Checks that `r` holds run_task's answer: a paused task asking for `text` with how to answer, or a finished one. */
function assertAnswered(r) {
  const res = r.json?.result;
  assert.ok(res, `no result: ${show(r)}`);
  assert.notEqual(res.isError, true, `run_task answered isError: ${show(r)}`);
  const task = res.structuredContent?.task;
  assert.ok(task && typeof task.id === 'string', `no structuredContent.task: ${show(r)}`);
  if (task.status === 'succeeded') return task;
  assert.equal(task.status, 'paused', show(r));
  const step = task.steps?.find((s) => s.status === 'waiting_input');
  assert.ok(step, `no step waiting for input: ${show(r)}`);
  assert.match(step.error ?? '', /text/, `the waiting step does not name the missing input: ${show(r)}`);
  const paused = (task.history ?? []).filter((h) => h.type === 'paused').pop();
  assert.match(paused?.message ?? '', /resume_task/, `the pause does not say how to answer: ${show(r)}`);
  return task;
}

const ERAS = [
  ['legacy', '2025-11-25'],
  ['modern', '2026-07-28'],
];

describe('MCP Inspector CLI 2.x: run_task that needs input returns on every transport and era', { concurrency: true }, () => {
  let dataDir;
  let agents;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'inspector-tasks-'));
    const config = join(dataDir, 'config.yaml');
    writeFileSync(config, '{}\n');
    agents = await startAgents(BIN, config, join(dataDir, 'serve'), { env: { AGENTS_MCP_TASK_INPUT_WAIT: INPUT_WAIT } });
  });
  after(async () => {
    if (agents) await stop(agents.p);
    rmSync(dataDir, { recursive: true, force: true });
  });

  for (const [era, revision] of ERAS) {
    for (const [transport, path] of [
      ['http', '/mcp'],
      ['sse', '/sse'],
    ]) {
      test(`${transport} (${path}), --protocol-era ${era}`, { timeout: BOUND_MS + 10_000 }, async (t) => {
        const proxy = await recordingProxy(agents.base);
        let r;
        try {
          r = await inspector([`${proxy.url}${path}`, '--transport', transport, '--protocol-era', era, ...toolCall]);
        } finally {
          await proxy.close();
        }
        const negotiated = { headers: [...proxy.seen.headers], initialize: [...proxy.seen.initialize], methods: [...proxy.seen.methods] };
        t.diagnostic(`${transport} ${era}: ${JSON.stringify(negotiated)}; exit ${r.code} in ${r.ms} ms`);
        assert.ok(
          !r.timedOut,
          `the CLI did not return within ${BOUND_MS} ms (${JSON.stringify(negotiated)}; last tasks/get answer: ${proxy.seen.lastTasksGet?.slice(0, 2000) ?? 'none'}):\n${show(r)}`,
        );
        if (transport === 'sse' && era === 'modern' && r.json?.error) {
          // The CLI pins 2026-07-28 and /sse does not offer it: a clear refusal before any call.
          assert.match(r.json.error.message, /did not offer pinned protocol version 2026-07-28/, show(r));
          assert.ok(!negotiated.methods.includes('tools/call'), `tools/call sent after a failed negotiation: ${show(r)}`);
          return;
        }
        assertAnswered(r);
        if (era === 'legacy') assert.deepEqual(negotiated.initialize, [revision], show(r));
        else assert.ok(negotiated.headers.includes(revision), `the CLI did not speak ${revision}: ${JSON.stringify(negotiated)}`);
        if (era === 'modern' && transport === 'http') {
          // It went through a task that nobody answered: the wait ended it, saying how to go on.
          assert.ok(negotiated.methods.includes('tasks/get'), `no task was polled: ${JSON.stringify(negotiated)}`);
          const last = proxy.seen.lastTasksGet ?? '';
          assert.match(last, /"status":"completed"/, `last tasks/get: ${last.slice(0, 2000)}`);
          assert.match(last, /"statusMessage":"no answer within 6s[^"]*tasks\/update[^"]*resume_task/, `last tasks/get: ${last.slice(0, 2000)}`);
        }
      });
    }

    test(`stdio (agents-mcp stdio), --protocol-era ${era}`, { timeout: BOUND_MS + 10_000 }, async () => {
      const r = await inspector(['--transport', 'stdio', '--protocol-era', era, '-e', `AGENTS_MCP_TASK_INPUT_WAIT=${INPUT_WAIT}`, ...toolCall, '--', BIN, 'stdio', '--data-dir', join(dataDir, era)]);
      assert.ok(!r.timedOut, `the CLI did not return within ${BOUND_MS} ms:\n${show(r)}`);
      assertAnswered(r);
    });
  }
});
