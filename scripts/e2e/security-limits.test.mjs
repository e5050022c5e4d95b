// Answer size and readiness details, each attack performed against the real binary.
//
// The upstream is a real HTTP server in this process that speaks just enough of MCP's streamable HTTP
// (2025-11-25) to be added as an upstream (`big`), and answers:
//   - huge:      a 200 MiB text result as JSON, written slowly (1 MiB chunks, a pause between them);
//   - huge_sse:  the same as an event stream;
//   - trickle:   a result that never ends, a few KiB a second;
//   - small:     a short result at once.
// It counts the bytes of each answer it managed to write and notes when its connection was closed.
//
// agents-mcp runs with keys: full (AGENTS_MCP_API_KEYS, every scope), reader (admin:read), scraper
// (metrics) and bot (mcp). The bound on answers is the default (16 MiB).
//
// Item 5, unbounded upstream answers:
//   1. the REST bridge: POST /mcp-json of big__huge is 502 upstream_error naming the limit; the upstream
//      wrote no more than the limit plus socket buffers before its connection was closed; agents-mcp's
//      peak RSS (VmHWM) grew by far less than the answer;
//   2. a 2026-07-28 stateless request (no session, the _meta envelope) of big__huge_sse: JSON-RPC
//      -32603 naming the limit, the same bounds;
//   3. a 2025-11-25 session (the TypeScript SDK client) and a legacy SSE one: -32603 naming the limit;
//   4. a REST bridge call of big__trickle that the client abandons after a second: the upstream sees
//      its connection closed within seconds; big__small still answers (the upstream's session lives on).
// Item 11, /readyz and /metrics:
//   5. without a credential, /healthz is 200 and /readyz the status alone: no check, no upstream name,
//      no path; a key without admin:read gets the same; a wrong key 401; admin:read gets every check;
//   6. /metrics: 401 without a credential, 403 for scope mcp, 200 for scope metrics and for admin:read;
//      the metrics key opens nothing else (the admin API is 403);
//   7. without keys (make run's loopback defaults) /readyz has its checks and /metrics needs nothing.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { BIN, CLIENT_INFO, withTimeout } from './lib/harness.mjs';
import { readyz, startAgents, stop } from './lib/procs.mjs';
import { raw, show } from './lib/raw.mjs';

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const KEYS = { full: secret('lim-full'), reader: secret('lim-reader'), scraper: secret('lim-scraper'), bot: secret('lim-bot') };
const MiB = 1 << 20;
const LIMIT = 16 * MiB; // limits.max_result_bytes, the default
const ANSWER = 200 * MiB;
// What an upstream may write past what was read: the kernel's socket buffers on loopback and the
// readers' own buffers.
const SLACK = 12 * MiB;

// ---------------------------------------------------------------------------------------------
// The upstream

/** Starts the upstream on a free loopback port: { url, answers, close }. */
async function startBigUpstream() {
  const answers = []; // one per huge/trickle call: { tool, written, closedAt, done }
  const server = http.createServer((req, res) => {
    if (req.method === 'DELETE') return res.end();
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let msg;
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const answer = (result, headers = {}) => {
        res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      };
      if (msg.method === 'initialize') {
        answer({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } }, { 'Mcp-Session-Id': 'big-session' });
      } else if (msg.id === undefined) {
        res.writeHead(202).end();
      } else if (msg.method === 'tools/list') {
        answer({ tools: ['huge', 'huge_sse', 'trickle', 'small'].map((name) => ({ name, description: `the ${name} answer`, inputSchema: { type: 'object' } })) });
      } else if (msg.method === 'ping') {
        answer({});
      } else if (msg.method === 'tools/call' && msg.params?.name === 'small') {
        answer({ content: [{ type: 'text', text: 'small answer' }] });
      } else if (msg.method === 'tools/call') {
        const tool = msg.params?.name;
        const a = { tool, written: 0, closedAt: undefined, done: false };
        answers.push(a);
        stream(res, msg.id, a, tool === 'huge_sse', tool === 'trickle' ? { chunk: 4096, pause: 100, size: Infinity } : { chunk: MiB, pause: 5, size: ANSWER });
      } else {
        answer(undefined);
      }
    });
  });
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    answers,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(resolve);
      }),
  };
}

/** Writes a text result of size bytes (Infinity: never ending) in chunks, respecting backpressure. */
async function stream(res, id, a, sse, { chunk, pause, size }) {
  res.on('close', () => {
    if (!res.writableFinished) a.closedAt = Date.now();
  });
  res.writeHead(200, { 'Content-Type': sse ? 'text/event-stream' : 'application/json' });
  const head = `${sse ? 'event: message\ndata: ' : ''}{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
  const block = Buffer.alloc(chunk, 'x');
  const write = (b) =>
    new Promise((resolve) => {
      if (res.destroyed) return resolve(false);
      a.written += b.length;
      if (res.write(b)) return resolve(true);
      const done = (ok) => {
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
  if (!(await write(Buffer.from(head)))) return;
  for (let left = size; left > 0; left -= chunk) {
    if (!(await write(left >= chunk ? block : block.subarray(0, left)))) return;
    await new Promise((r) => setTimeout(r, pause));
  }
  await write(Buffer.from(`"}]}}${sse ? '\n\n' : ''}`));
  a.done = true;
  res.end();
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Peak and current resident memory of a process, in bytes (/proc/PID/status). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { peak: kib('VmHWM'), now: kib('VmRSS') };
}

/** Waits (at most ms) for the upstream to see the connection of answer a closed. */
async function closedWithin(a, ms) {
  const deadline = Date.now() + ms;
  while (a.closedAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return a.closedAt;
}

/** The bounds every refused huge answer must keep. */
async function assertCut(a, what) {
  assert.ok(a, `${what}: the upstream got no call`);
  assert.ok(await closedWithin(a, 10_000), `${what}: the upstream's connection is still open (it wrote ${a.written} bytes)`);
  assert.ok(!a.done, `${what}: the whole answer was read`);
  assert.ok(a.written <= LIMIT + SLACK, `${what}: the upstream wrote ${(a.written / MiB).toFixed(1)} MiB, want at most ${(LIMIT + SLACK) / MiB}`);
}

const limitMessage = (text) => /larger than 16777216 bytes/.test(text) && /limits\.max_result_bytes/.test(text);

/** POST /mcp-json with the full key. */
function bridge(base, tool, { signal } = {}) {
  return fetch(`${base}/mcp-json`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEYS.full}` },
    body: JSON.stringify({ tool, params: {} }),
    signal: signal ?? AbortSignal.timeout(60_000),
  });
}

/** One 2026-07-28 request as a conforming client sends it: no session, the _meta envelope. */
async function rpc2026(base, method, params) {
  const body = {
    jsonrpc: '2.0',
    id: 7,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'security-limits-e2e', version: '1' },
      },
    },
  };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${KEYS.full}`,
    'Mcp-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    'Mcp-Name': params.name,
  };
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
  let text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    text = text.split('\n').filter((l) => l.startsWith('data:') && l.includes('"id"')).at(-1)?.slice(5).trim() ?? text;
  }
  return { status: res.status, msg: JSON.parse(text) };
}

async function sdkClient(base, kind) {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const headers = { Authorization: `Bearer ${KEYS.full}` };
  const transport =
    kind === 'sse'
      ? new SSEClientTransport(new URL(`${base}/sse`), { requestInit: { headers } })
      : new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
  await withTimeout(client.connect(transport), 15_000, `${kind} connect`);
  return client;
}

// ---------------------------------------------------------------------------------------------

describe('security: answer size and readiness details (issue 25, items 5 and 11)', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-limits-'));
  const dataDir = path.join(work, 'data');
  let up;
  let agents;
  let base;
  const clients = [];

  before(
    async () => {
      up = await startBigUpstream();
      const config = {
        upstreams: [{ name: 'big', transport: 'streamable', url: up.url, protocol_version: '2025-11-25', timeout: '60s' }],
        auth: {
          api_keys: [
            { name: 'reader', key: KEYS.reader, scopes: ['admin:read'] },
            { name: 'scraper', key: KEYS.scraper, scopes: ['metrics'] },
            { name: 'bot', key: KEYS.bot, scopes: ['mcp'] },
          ],
        },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, dataDir, {
        env: { AGENTS_MCP_API_KEYS: KEYS.full, AGENTS_MCP_AUTH_FAILURE_BURST: '10000' },
        readyMs: 30_000,
      });
      base = agents.base;
    },
    { timeout: 60_000 },
  );

  after(
    async () => {
      for (const c of clients) await c.close().catch(() => {});
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      await up?.close();
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 30_000 },
  );

  test('1. the REST bridge refuses a 200 MiB answer at the limit: 502, the upstream cut off, memory bounded', { timeout: 120_000 }, async () => {
    const before = memory(agents.p.pid);
    const n = up.answers.length;
    const res = await bridge(base, 'big__huge');
    const body = await res.json();
    assert.equal(res.status, 502, `POST /mcp-json: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
    assert.equal(body.error?.code, 'upstream_error', JSON.stringify(body));
    assert.ok(limitMessage(body.error.message), `the refusal does not name the limit: ${body.error.message}`);
    await assertCut(up.answers[n], 'REST bridge');
    const after = memory(agents.p.pid);
    const grew = (after.peak - before.peak) / MiB;
    assert.ok(grew < 120, `agents-mcp's peak RSS grew by ${grew.toFixed(0)} MiB for a refused answer (before ${(before.peak / MiB).toFixed(0)} MiB)`);
  });

  test('2. a 2026-07-28 stateless call refuses it too (-32603 naming the limit)', { timeout: 120_000 }, async () => {
    const before = memory(agents.p.pid);
    const n = up.answers.length;
    const { msg } = await rpc2026(base, 'tools/call', { name: 'big__huge_sse', arguments: {} });
    assert.equal(msg.error?.code, -32603, JSON.stringify(msg).slice(0, 500));
    assert.ok(limitMessage(msg.error.message), msg.error.message);
    await assertCut(up.answers[n], '2026-07-28 call');
    const grew = (memory(agents.p.pid).peak - before.peak) / MiB;
    assert.ok(grew < 120, `agents-mcp's peak RSS grew by ${grew.toFixed(0)} MiB`);
  });

  for (const kind of ['streamable', 'sse']) {
    test(`3. a 2025-11-25 session over ${kind} gets -32603 naming the limit`, { timeout: 120_000 }, async () => {
      const client = await sdkClient(base, kind);
      clients.push(client);
      const n = up.answers.length;
      await assert.rejects(
        client.callTool({ name: 'big__huge', arguments: {} }, undefined, { timeout: 60_000 }),
        (err) => err instanceof McpError && err.code === -32603 && limitMessage(err.message),
      );
      await assertCut(up.answers[n], `${kind} session`);
      const small = await client.callTool({ name: 'big__small', arguments: {} });
      assert.equal(small.content?.[0]?.text, 'small answer', JSON.stringify(small));
    });
  }

  test('4. a call the client abandons stops being read: the upstream sees its connection closed', { timeout: 60_000 }, async () => {
    const n = up.answers.length;
    const abandoned = Date.now() + 1000;
    await assert.rejects(bridge(base, 'big__trickle', { signal: AbortSignal.timeout(1000) }));
    const a = up.answers[n];
    assert.ok(a, 'the upstream got no call');
    const closedAt = await closedWithin(a, 10_000);
    assert.ok(closedAt, `the upstream's connection is still open 10 s after the client left (it wrote ${a.written} bytes)`);
    assert.ok(closedAt - abandoned < 5000, `closed ${closedAt - abandoned} ms after the client left`);
    const res = await bridge(base, 'big__small');
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.result, 'small answer', JSON.stringify(body));
  });

  test('5. /healthz and the status of /readyz are open; the checks need admin:read', { timeout: 20_000 }, async () => {
    const health = await raw(base, '/healthz');
    assert.equal(health.status, 200, show(health));
    for (const [what, key] of [['no credential', undefined], ['scope mcp', KEYS.bot], ['scope metrics', KEYS.scraper]]) {
      const res = await raw(base, '/readyz', { key });
      assert.equal(res.status, 200, `${what}: ${show(res)}`);
      assert.deepEqual(res.json, { status: 'ready' }, `${what}: /readyz shows more than its status: ${res.text}`);
      for (const s of ['big', dataDir, 'sqlite', 'checks']) assert.ok(!res.text.includes(s), `${what}: /readyz shows ${s}: ${res.text}`);
    }
    const wrong = await raw(base, '/readyz', { key: secret('wrong') });
    assert.equal(wrong.status, 401, show(wrong));
    const { status, body } = await readyz(base, KEYS.reader);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.checks?.upstreams?.detail?.total, 1, JSON.stringify(body));
    assert.ok(JSON.stringify(body.checks.database).includes(dataDir), `admin:read sees the database check: ${JSON.stringify(body.checks.database)}`);
  });

  test('6. /metrics needs scope metrics or admin:read; the metrics key opens nothing else', { timeout: 20_000 }, async () => {
    for (const [what, key, want] of [['no credential', undefined, 401], ['a wrong key', secret('wrong'), 401], ['scope mcp', KEYS.bot, 403]]) {
      const res = await raw(base, '/metrics', { key });
      assert.equal(res.status, want, `${what}: ${show(res)}`);
      assert.ok(!res.text.includes('big__'), `${what}: /metrics shows tool names: ${res.text.slice(0, 300)}`);
    }
    for (const [what, key] of [['scope metrics', KEYS.scraper], ['admin:read', KEYS.reader]]) {
      const res = await raw(base, '/metrics', { key });
      assert.equal(res.status, 200, `${what}: ${show(res)}`);
      assert.match(res.text, /agents_mcp_tool_calls_total\{[^}]*tool="big__small"/, `${what}: /metrics lacks the calls`);
    }
    const admin = await raw(base, '/admin/v1/upstreams', { key: KEYS.scraper });
    assert.equal(admin.status, 403, `the admin API with scope metrics: ${show(admin)}`);
  });
});

describe('security: without keys (loopback) /readyz and /metrics stay open', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-limits-open-'));
  let agents;
  before(
    async () => {
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, '{}\n');
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), { readyMs: 30_000 });
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  test('7. make run defaults: /readyz with its checks, /metrics without a credential', { timeout: 20_000 }, async () => {
    const { status, body } = await readyz(agents.base);
    assert.equal(status, 200, JSON.stringify(body));
    assert.ok(body.checks?.database && body.checks?.router, `no checks: ${JSON.stringify(body)}`);
    const m = await raw(agents.base, '/metrics');
    assert.equal(m.status, 200, show(m));
    assert.match(m.text, /agents_mcp_build_info/);
  });
});
