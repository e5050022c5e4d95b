// agents-mcp serve with its vector memory on Pinecone's wire: go-pinecone's own client, in the real
// binary, against scripts/pineconeserver (internal/pineconetest: Pinecone's published gRPC protocol
// and control-plane OpenAPI document over an in-memory index, on loopback). serve describes the index
// through the control plane (PINECONE_INDEX, PINECONE_CONTROLLER_HOST), checks its dimension and
// metric, and writes and queries vectors on the data plane. What a real Pinecone account adds (TLS,
// eventual consistency, Pinecone's own ranking and limits) is listed in docs/scaling.md.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { freePort, hermeticEnv, start, stop } from './lib/procs.mjs';

const PINECONESERVER_BIN = process.env.PINECONESERVER_BIN ?? '';
const KEY = 'pcsk_e2e_SECRET_4f1c9a';

describe('agents-mcp serve on Pinecone (the test server on its published wire)', { skip: !(BIN && PINECONESERVER_BIN) && 'AGENTS_MCP_BIN or PINECONESERVER_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-pinecone-'));
  let pinecone;
  let planes;
  let server;
  let base;
  let client;

  async function startServe() {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = start(BIN, ['serve', '--addr', `127.0.0.1:${port}`, '--data-dir', path.join(work, 'data')], {
      name: 'agents-mcp',
      baseEnv: hermeticEnv(),
      env: {
        AGENTS_MCP_EMBEDDER: 'hash',
        PINECONE_API_KEY: KEY,
        PINECONE_INDEX: planes.index,
        PINECONE_CONTROLLER_HOST: planes.control_url,
        PINECONE_NAMESPACE: 'e2e-',
      },
    });
    await server.waitFor(/"msg":"serving"/, 60_000, 'agents-mcp serving on Pinecone');
    client = newClient();
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`))), 15_000, 'connect');
  }

  async function stopServe() {
    await client?.close().catch(() => {});
    client = undefined;
    if (server) {
      await stop(server);
      assert.equal(server.exitInfo()?.code, 0, `serve exit ${JSON.stringify(server.exitInfo())}`);
    }
  }

  const call = (name, args) => withTimeout(client.callTool({ name, arguments: args }), 20_000, `call ${name}`);

  // Polls query_memory until the insight comes first, semantically ranked (the vector index answered,
  // not the lexical fallback), and the test Pinecone logged a query in the prefixed namespace that
  // returned it.
  async function findThroughPinecone(query, id) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await call('query_memory', { query, kinds: ['insights'], limit: 3 });
      const sc = res.structuredContent;
      const logged = pinecone.output().split('\n').some((l) => l.includes('"msg":"pinecone query"') && l.includes('"namespace":"e2e-insights"') && l.includes(`"${id}"`));
      if (sc?.items?.[0]?.id === id && sc.mode === 'semantic' && logged) return;
      assert.ok(Date.now() < deadline, `not found through Pinecone: ${JSON.stringify(sc)}\n--- pinecone ---\n${pinecone.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  before(async () => {
    pinecone = start(PINECONESERVER_BIN, ['-dimension', '384', '-index', 'agents-e2e'], { name: 'pineconeserver', env: { PINECONE_TEST_API_KEY: KEY } });
    const [line] = await pinecone.waitFor(/\{"control_url".*\}/, 20_000, 'pineconeserver start');
    planes = JSON.parse(line);
    assert.match(planes.data_host, /^http:\/\/127\.0\.0\.1:\d+$/);
    await startServe();
  });

  after(async () => {
    await client?.close().catch(() => {});
    if (server) await stop(server);
    if (pinecone) await stop(pinecone);
    rmSync(work, { recursive: true, force: true });
  });

  test('serve describes the index through the control plane at start', () => {
    assert.match(server.output(), /"msg":"vector index".*pinecone\.Index\(http:\/\/127\.0\.0\.1:\d+, 384 dims, prefix \\"e2e-\\"\)/);
    assert.match(pinecone.output(), /"msg":"pinecone control","operation":"describe_index","path":"\/indexes\/agents-e2e"/);
  });

  test('an insight stored is found by query_memory through Pinecone, and again after a restart', async () => {
    const stored = await call('store_insight', {
      text: 'the billing upstream rejects invoices whose currency code is lower case',
      type: 'best_practice',
      confidence: 0.8,
    });
    assert.equal(stored.isError, undefined, JSON.stringify(stored));
    const id = stored.structuredContent.insight.id;
    await findThroughPinecone('invoices rejected for a lower case currency code', id);
    assert.match(pinecone.output(), /"method":"Upsert","namespace":"e2e-insights","code":"OK"/);

    await stopServe();
    const upserts = pinecone.output().split('\n').filter((l) => l.includes('"method":"Upsert"')).length;
    await startServe();
    await findThroughPinecone('billing invoices currency code', id);
    // Found without being written again: the vector was in Pinecone, not rebuilt at start.
    const after = pinecone.output().split('\n').filter((l) => l.includes('"method":"Upsert"')).length;
    assert.equal(after, upserts, 'serve re-upserted vectors at start');
  });

  test('the API key is in no log line of serve', () => {
    assert.ok(!server.output().includes(KEY), 'serve logged the Pinecone API key');
    assert.ok(!pinecone.output().includes(KEY), 'the test Pinecone logged the API key');
  });
});
