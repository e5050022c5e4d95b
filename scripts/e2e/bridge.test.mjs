// The protocol bridge to a 2026-07-28 upstream (ADR 0010 D1 and D2): clients call
// through agents-mcp a tool of a go-sdk upstream at 2026-07-28 (scripts/mrtrupstream) that answers
// input_required with an elicitation.
//
//   - The official TypeScript SDK 1.x client at 2025-11-25 knows nothing of input_required:
//     agents-mcp's pool (remote/mrtr.go) asks it with an elicitation/create request and retries the
//     upstream with inputResponses and the requestState echoed; the client gets the final result of
//     its one tools/call.
//   - The TS SDK 2.x client at 2026-07-28 cannot be sent requests: agents-mcp passes the
//     input_required through with the upstream's requestState sealed, and the client retries.
//
// The test starts its own upstream and agents-mcp. run.sh builds both binaries and sets
// AGENTS_MCP_BIN and MRTR_UPSTREAM_BIN.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client as Client2, StreamableHTTPClientTransport as StreamableHTTPClientTransport2 } from '@modelcontextprotocol/client';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, start, startAgents, stop } from './lib/procs.mjs';

const UPSTREAM_BIN = process.env.MRTR_UPSTREAM_BIN ?? '';
const TOOL = 'deployer__deploy_service';
const QUESTION = 'Deploy to production? Say who approves.';
const STATE = 'deploy-state-41'; // scripts/mrtrupstream's requestState

function fmt(v) {
  return JSON.stringify(v, null, 1).slice(0, 3000);
}

async function upstreamCalls(url) {
  const res = await fetch(`${url}/calls`);
  assert.equal(res.status, 200);
  return res.json();
}

describe('bridge: a 2026-07-28 upstream’s input_required, answered by 2025-11-25 and 2026-07-28 clients', { skip: (!BIN || !UPSTREAM_BIN) && 'AGENTS_MCP_BIN or MRTR_UPSTREAM_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-bridge-'));
  let upstream; // { p, url }
  let agents; // { p, base }

  before(
    async () => {
      const p = start(UPSTREAM_BIN, ['-addr', '127.0.0.1:0'], { name: 'mrtrupstream' });
      const [url] = await p.waitFor(/http:\/\/127\.0\.0\.1:\d+/, 20_000, 'mrtrupstream listening');
      upstream = { p, url };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify({ upstreams: [{ name: 'deployer', transport: 'streamable', url: `${url}/mcp`, timeout: '10s', max_backoff: '1s' }] }, null, 2));
      agents = await startAgents(BIN, configPath, path.join(work, 'data'));
      await eventually(
        () => assert.match(agents.p.output(), /"msg":"upstream ready","upstream":"deployer"[^\n]*"protocol_version":"2026-07-28"/),
        20_000,
        'the pool reached the upstream at 2026-07-28',
        100,
      );
    },
    { timeout: 60_000 },
  );

  after(
    async () => {
      if (agents) await stop(agents.p, 'SIGTERM', 20_000);
      if (upstream) await stop(upstream.p, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 40_000 },
  );

  for (const [name, make] of [
    ['streamable HTTP', (base) => new StreamableHTTPClientTransport(new URL(`${base}/mcp`))],
    ['legacy SSE', (base) => new SSEClientTransport(new URL(`${base}/sse`))],
  ]) {
    test(`over ${name}: the client is asked once, the upstream gets the answer and its state back`, { timeout: 30_000 }, async () => {
      const before = await upstreamCalls(upstream.url);
      const client = newClient({ elicitation: true });
      const asked = [];
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push(req.params);
        return { action: 'accept', content: { approver: 'ada' } };
      });
      await withTimeout(client.connect(make(agents.base)), 15_000, `connect over ${name}`);
      try {
        assert.equal(client.getServerVersion()?.name, 'agents-mcp');
        const res = await withTimeout(client.callTool({ name: TOOL, arguments: { service: 'billing' } }), 20_000, 'tools/call');
        const after_ = await upstreamCalls(upstream.url);
        const calls = after_.calls.slice(before.calls.length);
        const rounds = after_.rounds.slice(before.rounds.length);
        const diag = `\nresult: ${fmt(res)}\nasked: ${fmt(asked)}\nupstream: ${fmt({ calls, rounds })}`;
        assert.notEqual(res.isError, true, diag);
        assert.deepEqual(res.content, [{ type: 'text', text: 'deployed, approved by ada' }], diag);
        assert.equal(asked.length, 1, diag);
        assert.equal(asked[0].message, QUESTION, diag);
        assert.deepEqual(asked[0].requestedSchema?.required, ['approver'], diag);
        // MRTR on the upstream side: two tools/call requests under 2026-07-28, the second with the
        // answer and the state echoed.
        assert.deepEqual(calls, ['2026-07-28', '2026-07-28'], diag);
        assert.deepEqual(rounds, ['ask', `done:${STATE}:ada`], diag);
      } finally {
        await client.close();
      }
    });
  }
  // ADR 0010 D2: the TS SDK 2.x client at 2026-07-28 has no session and cannot be sent an
  // elicitation request. agents-mcp passes the upstream's input_required through, with the same key
  // and question and the upstream's requestState sealed; the 2.x client answers it through its
  // elicitation/create handler and retries on its own, inside one callTool, and the upstream gets
  // the answer with its own requestState back.
  test('a 2.x client at 2026-07-28 gets the input_required passed through and retries it', { timeout: 30_000 }, async () => {
    const before = await upstreamCalls(upstream.url);
    const client = new Client2({ name: 'bridge-e2e-client2', version: '1.0.0' }, {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    });
    const asked = [];
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { approver: 'ada' } };
    });
    const transport = new StreamableHTTPClientTransport2(new URL(`${agents.base}/mcp`));
    await withTimeout(client.connect(transport), 15_000, 'connect the 2.x client');
    const wire = [];
    const inner = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      wire.push(msg);
      return inner?.call(transport, msg, extra);
    };
    try {
      const res = await withTimeout(client.callTool({ name: TOOL, arguments: { service: 'billing' } }), 20_000, 'tools/call');
      const after_ = await upstreamCalls(upstream.url);
      const calls = after_.calls.slice(before.calls.length);
      const rounds = after_.rounds.slice(before.rounds.length);
      const diag = `\nresult: ${fmt(res)}\nasked: ${fmt(asked)}\nwire: ${fmt(wire)}\nupstream: ${fmt({ calls, rounds })}`;
      assert.notEqual(res.isError, true, diag);
      assert.deepEqual(res.content, [{ type: 'text', text: 'deployed, approved by ada' }], diag);
      assert.equal(asked.length, 1, diag);
      assert.equal(asked[0].message, QUESTION, diag);
      // On the wire: one input_required, under the upstream's key, with a sealed requestState (not
      // the upstream's), then the result; never a server-to-client request.
      const ir = wire.filter((m) => m.result?.resultType === 'input_required');
      assert.equal(ir.length, 1, diag);
      assert.deepEqual(Object.keys(ir[0].result.inputRequests), ['confirm'], diag);
      assert.equal(ir[0].result.inputRequests.confirm.method, 'elicitation/create', diag);
      assert.equal(typeof ir[0].result.requestState, 'string', diag);
      assert.ok(!ir[0].result.requestState.includes(STATE), diag);
      assert.equal(wire.filter((m) => 'method' in m && 'id' in m).length, 0, diag);
      assert.deepEqual(calls, ['2026-07-28', '2026-07-28'], diag);
      assert.deepEqual(rounds, ['ask', `done:${STATE}:ada`], diag);
    } finally {
      await client.close();
    }
  });
});
