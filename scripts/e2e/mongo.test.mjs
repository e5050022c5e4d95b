// agents-mcp with MONGODB_URI, end to end: a real MongoDB wire-protocol server (FerretDB, started
// by scripts/ferretdb) behind the memory tools, driven by the official TypeScript SDK client.
//
// The test starts its own FerretDB and agents-mcp processes, so that it can take the database
// away mid-run and bring it back on the same address and data directory. run.sh builds both
// binaries and sets AGENTS_MCP_BIN and FERRETDB_BIN.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, freePort, readyz, start } from './lib/procs.mjs';

const FERRETDB_BIN = process.env.FERRETDB_BIN ?? '';

describe('agents-mcp on MongoDB (FerretDB)', { skip: !FERRETDB_BIN && 'FERRETDB_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-mongo-'));
  let ferretAddr;
  let ferret;
  let server;
  let base;
  let client;

  async function startFerret() {
    const p = start(FERRETDB_BIN, ['-addr', ferretAddr, '-dir', path.join(work, 'ferret')]);
    const [uri] = await p.waitFor(/mongodb:\/\/\S+/, 20_000, 'FerretDB start');
    return { p, uri };
  }

  async function call(name, args) {
    return withTimeout(client.callTool({ name, arguments: args }), 20_000, `call ${name}`);
  }

  before(async () => {
    ferretAddr = `127.0.0.1:${await freePort()}`;
    const f = await startFerret();
    ferret = f.p;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = start(BIN, ['serve', '--addr', `127.0.0.1:${port}`, '--data-dir', path.join(work, 'data')], {
      env: { MONGODB_URI: f.uri, MONGODB_DATABASE: 'agents_mcp_e2e' },
    });
    await server.waitFor(/"msg":"serving"/, 30_000, 'agents-mcp start on MongoDB');
    client = newClient();
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`))), 15_000, 'connect');
  });

  after(async () => {
    await client?.close().catch(() => {});
    server?.child.kill('SIGTERM');
    if (server) await withTimeout(server.exited, 10_000, 'agents-mcp exit').catch(() => server.child.kill('SIGKILL'));
    ferret?.child.kill('SIGTERM');
    if (ferret) await ferret.exited;
    rmSync(work, { recursive: true, force: true });
  });

  test('readiness names the MongoDB store', async () => {
    const { status, body } = await readyz(base);
    assert.equal(status, 200, JSON.stringify(body));
    assert.match(body.checks.database.detail.store, /^mongodb database agents_mcp_e2e$/);
  });

  test('store_insight then query_memory finds it by meaning', async () => {
    const stored = await call('store_insight', {
      text: 'the payments upstream times out on batches larger than 500 rows',
      type: 'pitfall',
      appliesTo: ['payments__import'],
    });
    assert.equal(stored.isError, undefined, JSON.stringify(stored));
    const id = stored.structuredContent.insight.id;
    assert.match(id, /^ins_[0-9A-HJKMNP-TV-Z]{26}$/);
    await eventually(
      async () => {
        const res = await call('query_memory', { query: 'payment imports time out with big batches', kinds: ['insights'] });
        assert.equal(res.structuredContent.mode, 'semantic');
        assert.equal(res.structuredContent.items[0]?.id, id, JSON.stringify(res.structuredContent));
      },
      10_000,
      'insight found by query_memory',
    );
  });

  test('a database lost mid-run: readiness false, clean tool errors, recovery when it returns', async () => {
    ferret.child.kill('SIGKILL');
    await ferret.exited;
    await eventually(
      async () => {
        const { status, body } = await readyz(base);
        assert.equal(status, 503, JSON.stringify(body));
        assert.equal(body.checks.database.status, 'error');
      },
      15_000,
      'readiness false without the database',
    );
    const started = Date.now();
    const res = await call('store_insight', { text: 'written while the database is down' });
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.match(res.content[0].text, /unavailable/i);
    assert.ok(Date.now() - started < 15_000, `the failing call took ${Date.now() - started} ms`);

    ferret = (await startFerret()).p;
    await eventually(
      async () => {
        const { status, body } = await readyz(base);
        assert.equal(status, 200, JSON.stringify(body));
      },
      30_000,
      'readiness back after the database returned',
    );
    const again = await call('store_insight', { text: 'written after the database came back' });
    assert.equal(again.isError, undefined, JSON.stringify(again));
    const found = await call('query_memory', { query: 'payments upstream batches', kinds: ['insights'] });
    assert.ok(found.structuredContent.items.length >= 1, 'the insight stored before the outage is still there');
  });
});

describe('an unreachable MONGODB_URI at start', { skip: !BIN && 'AGENTS_MCP_BIN not set' }, () => {
  test('fails fast with a clear message and no credentials', async () => {
    const port = await freePort(); // nothing listens there
    const p = start(BIN, ['serve', '--addr', '127.0.0.1:0', '--data-dir', mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-nodb-'))], {
      env: { MONGODB_URI: `mongodb://agent:s3cret-pw@127.0.0.1:${port}/?serverSelectionTimeoutMS=1500&connectTimeoutMS=1500` },
    });
    const started = Date.now();
    const { code } = await withTimeout(p.exited, 20_000, 'exit with an unreachable database');
    assert.notEqual(code, 0);
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
    assert.match(p.output(), new RegExp(`cannot reach 127\\.0\\.0\\.1:${port}`));
    assert.doesNotMatch(p.output(), /s3cret-pw/);
  });
});
