// Attacks on HTTP tools and the egress policy, against the real binary:
//   4. numeric IPv4 spellings behind a forward proxy: with HTTP_PROXY and HTTPS_PROXY pointing at a
//      loopback "proxy" that only records what it is asked for, upstream URLs, http_tools base URLs
//      and an OpenAPI document's server written as 2852039166, 0xa9fea9fe, 169.254.43518,
//      0251.0376.0251.0376 (all 169.254.169.254 to the proxy's resolver) are refused with 400 and never
//      reach the proxy, and a config file naming one stops start-up; a dotted-decimal private address
//      does reach the proxy, which shows that it is in the path;
//   6. a path argument of "." or "..", also percent-encoded, is refused by the REST bridge with 400
//      naming the argument, and the API (a loopback server recording paths) gets no request;
//   8. an OpenAPI document whose $refs form a fanning chain is refused with 400 naming the document
//      and the budget within seconds, while a DELETE of another source is answered at once.
//
// A wrong answer to item 4 would make the proxy (here: a recorder) connect to 169.254.169.254. So
// that no packet can leave the machine even then, this file re-runs itself inside a network
// namespace that has only loopback (`unshare -n`, root only); without root it is skipped, saying so.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { eventually, hermeticEnv, startAgents, stop } from './lib/procs.mjs';

const THIS_FILE = fileURLToPath(import.meta.url);
const IN_NETNS_ENV = 'E2E_ROUND3_IN_NETNS';
const BIN = process.env.AGENTS_MCP_BIN || path.join(path.dirname(THIS_FILE), '../../bin/agents-mcp');

// Spellings of 169.254.169.254 that URL parsers, inet_aton and proxies accept, and two more hosts
// that end in a number: an allowed address not in dotted decimal, and no address at all.
const SPELLINGS = ['2852039166', '0xa9fea9fe', '169.254.43518', '0251.0376.0251.0376', '169.254.169.254.', '127.1', '1.2.3.256'];

if (process.env[IN_NETNS_ENV] !== '1') {
  test('issue 25 attacks on http_tools and egress (run in a network namespace with only loopback)', (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('needs root: these tests run only inside `unshare -n`, so that a wrong answer cannot send a packet off the machine');
      return;
    }
    const env = { ...process.env, [IN_NETNS_ENV]: '1' };
    delete env.NODE_TEST_CONTEXT; // the inner run reports on its own, not to this runner
    const r = spawnSync(
      'unshare',
      ['-n', 'bash', '-c', 'ip link set lo up && exec "$@"', 'bash', process.execPath, '--test', '--test-reporter=spec', '--test-timeout=120000', THIS_FILE],
      { env, encoding: 'utf8', timeout: 300_000 },
    );
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    t.diagnostic(out);
    assert.equal(r.error, undefined, `unshare: ${r.error?.message}`);
    assert.equal(r.status, 0, `the tests failed inside the network namespace:\n${out}`);
    assert.match(out, /pass [1-9]/, `no test passed inside the network namespace:\n${out}`);
    assert.match(out, /fail 0/, out);
  });
} else {
  describe('issue 25 attacks on http_tools and egress (inside a network namespace with only loopback)', () => {
    let dir;
    let agents;
    let base;
    let proxy; // { server, port, seen: [request lines] }
    let tenantsAPI; // { server, url, paths: [request paths] }

    /** An HTTP server on a free loopback port; resolves with { server, url }. */
    function listen(handler) {
      return new Promise((resolve, reject) => {
        const server = http.createServer(handler);
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` }));
      });
    }

    /** A forward proxy that forwards nothing: it records each request line and answers 502. */
    function proxyRecorder() {
      return new Promise((resolve, reject) => {
        const seen = [];
        const server = net.createServer((socket) => {
          let head = '';
          socket.on('data', (d) => {
            head += d.toString('latin1');
            const end = head.indexOf('\r\n');
            if (end < 0) return;
            seen.push(head.slice(0, end));
            socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
            socket.removeAllListeners('data');
          });
          socket.on('error', () => {});
        });
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, seen }));
      });
    }

    async function api(method, p, body, ms = 20_000) {
      const started = Date.now();
      const res = await fetch(`${base}${p}`, {
        method,
        headers: method === 'GET' ? {} : { 'Content-Type': 'application/json' }, // admin writes need it, even without a body
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(ms),
      });
      const text = await res.text();
      let json;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, body: json, text, ms: Date.now() - started };
    }

    const proxyEnv = () => {
      const url = `http://127.0.0.1:${proxy.port}`;
      return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: '', no_proxy: '' };
    };

    before(async () => {
      proxy = await proxyRecorder();
      const paths = [];
      tenantsAPI = await listen((req, res) => {
        paths.push(req.url);
        req.resume();
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"users":[]}');
      });
      tenantsAPI.paths = paths;
      dir = mkdtempSync(path.join(tmpdir(), 'agents-mcp-round3-'));
      const config = path.join(dir, 'config.yaml');
      writeFileSync(
        config,
        JSON.stringify({
          http_tools: [
            {
              name: 'tenants',
              base_url: tenantsAPI.url,
              endpoints: [{ name: 'users', method: 'GET', path: '/tenants/{tenant}/users' }],
            },
          ],
        }),
      );
      ({ p: agents, base } = await startAgents(BIN, config, path.join(dir, 'data'), { env: proxyEnv() }));
    });

    after(async () => {
      await stop(agents);
      proxy?.server.close();
      tenantsAPI?.server.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('item 4: numeric IPv4 spellings are refused with 400 and never reach the proxy', async () => {
      const endpoints = [{ name: 'meta', method: 'GET', path: '/latest/meta-data' }];
      for (const host of SPELLINGS) {
        for (const [route, body] of [
          ['/admin/v1/upstreams', { name: 'numeric', transport: 'streamable', url: `http://${host}/mcp` }],
          ['/admin/v1/upstreams', { name: 'numeric-sse', transport: 'sse', url: `https://${host}:8443/sse` }],
          ['/admin/v1/http-tools', { name: 'numeric', base_url: `http://${host}`, endpoints }],
          [
            '/admin/v1/http-tools',
            {
              name: 'numeric-doc',
              openapi_document: JSON.stringify({
                openapi: '3.0.3',
                info: { title: 'm', version: '1' },
                servers: [{ url: `http://${host}/latest` }],
                paths: { '/meta-data': { get: { operationId: 'meta', responses: { 200: { description: 'ok' } } } } },
              }),
            },
          ],
        ]) {
          const r = await api('POST', route, body);
          assert.equal(r.status, 400, `${route} with ${host}: ${r.status} ${r.text}`);
          assert.equal(r.body?.error?.code, 'invalid', r.text);
          assert.match(r.body.error.message, /refused/, `${route} with ${host}: ${r.body.error.message}`);
        }
      }
      const metadata = await api('POST', '/admin/v1/upstreams', { name: 'hex', transport: 'streamable', url: 'http://0xa9fea9fe/mcp' });
      assert.match(metadata.body.error.message, /169\.254\.169\.254/, 'the refusal names the address the spelling reaches');
      assert.deepEqual(proxy.seen, [], 'the proxy was asked for a numeric spelling');

      // The proxy is in the path: a dotted-decimal private address (allowed) goes through it.
      const control = await api('POST', '/admin/v1/upstreams', { name: 'private', transport: 'streamable', url: 'http://10.9.8.7/mcp' });
      assert.equal(control.status, 201, control.text);
      await eventually(
        () => assert.ok(proxy.seen.some((l) => l.includes('http://10.9.8.7/mcp')), JSON.stringify(proxy.seen)),
        15_000,
        'the proxy sees the dotted-decimal upstream',
      );
      assert.equal((await api('DELETE', '/admin/v1/upstreams/private')).status, 204);
      assert.ok(
        proxy.seen.every((l) => l.includes('10.9.8.7')),
        `the proxy saw other requests: ${JSON.stringify(proxy.seen)}`,
      );
    });

    test('item 4: a config file naming a numeric spelling stops start-up, naming the field', () => {
      for (const [i, host] of ['169.254.43518', '0xa9fea9fe'].entries()) {
        const config = path.join(dir, `numeric-${i}.yaml`);
        writeFileSync(
          config,
          JSON.stringify({
            upstreams: [{ name: 'meta', transport: 'streamable', url: `http://${host}/mcp` }],
            http_tools: [{ name: 'meta-api', base_url: `http://${host}:8080`, endpoints: [{ name: 'x', method: 'GET', path: '/x' }] }],
          }),
        );
        const r = spawnSync(BIN, ['serve', '--addr', '127.0.0.1:0', '--config', config, '--data-dir', path.join(dir, `numeric-data-${i}`)], {
          env: { ...hermeticEnv(), ...proxyEnv() },
          encoding: 'utf8',
          timeout: 30_000,
        });
        const out = `${r.stdout}${r.stderr}`;
        assert.equal(r.status, 1, `serve with ${host}: status ${r.status}\n${out.slice(-2000)}`);
        assert.match(out, /upstreams\[0\]\.url/, out.slice(-2000));
        assert.match(out, /http_tools\[0\]\.base_url/, out.slice(-2000));
      }
      assert.deepEqual(proxy.seen.filter((l) => !l.includes('10.9.8.7')), [], 'the proxy was asked for a numeric spelling');
    });

    test('item 6: "." and ".." path arguments, also percent-encoded, are refused by the REST bridge with 400', async () => {
      const before = tenantsAPI.paths.length;
      for (const tenant of ['.', '..', '%2e', '%2E%2e', '.%2E', '%252e%252e']) {
        const r = await api('POST', '/mcp-json', { tool: 'tenants__users', params: { tenant } });
        assert.equal(r.status, 400, `tenant=${tenant}: ${r.status} ${r.text}`);
        assert.equal(r.body?.error?.code, 'invalid_params', r.text);
        assert.ok(
          r.body.errors?.some((e) => e.path === '/tenant'),
          `tenant=${tenant}: the errors do not name /tenant: ${r.text}`,
        );
      }
      assert.deepEqual(tenantsAPI.paths.slice(before), [], 'the API got a request for a dot-segment value');
      const ok = await api('POST', '/mcp-json', { tool: 'tenants__users', params: { tenant: 'acme' } });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(tenantsAPI.paths.slice(before), ['/tenants/acme/users']);
    });

    test('item 8: a $ref chain is refused on its budget while another source is removed at once', async () => {
      const endpoints = [{ name: 'users', method: 'GET', path: '/tenants/{tenant}/users' }];
      const added = await api('POST', '/admin/v1/http-tools', { name: 'other', base_url: tenantsAPI.url, endpoints });
      assert.equal(added.status, 201, added.text);

      // 1,000 operations whose answers expand to 2^30 nodes each, cut at 4,000 per tool: before the
      // budget, minutes of CPU with the sources lock held.
      const paths = {};
      for (let i = 0; i < 1000; i++) {
        paths[`/p${i}`] = {
          get: {
            operationId: `op${i}`,
            responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } } } },
          },
        };
      }
      const schemas = {};
      for (let d = 0; d < 30; d++) {
        const next = d < 29 ? { $ref: `#/components/schemas/S${d + 1}` } : { type: 'string' };
        schemas[`S${d}`] = { type: 'object', properties: { a: next, b: next } };
      }
      const doc = JSON.stringify({ openapi: '3.0.3', info: { title: 'chain', version: '1' }, paths, components: { schemas } });
      const noAnswer = (ms) => (err) => ({ status: -1, text: `no answer within ${ms} ms (${err.name})`, ms });
      const chain = api('POST', '/admin/v1/http-tools', { name: 'chain', base_url: tenantsAPI.url, openapi_document: doc }, 120_000).catch(noAnswer(120_000));
      await new Promise((r) => setTimeout(r, 100)); // let the load begin
      const removed = await api('DELETE', '/admin/v1/http-tools/other', undefined, 10_000).catch(noAnswer(10_000));
      assert.equal(removed.status, 204, removed.text);
      assert.ok(removed.ms < 5_000, `the DELETE took ${removed.ms} ms during the chain's load`);
      const refused = await chain;
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body?.error?.code, 'invalid', refused.text);
      assert.match(refused.body.error.message, /http_tools "chain"/);
      assert.match(refused.body.error.message, /over the load budget/);
      assert.match(refused.body.error.message, /openapi\.max_schema_nodes/);
      assert.ok(refused.ms < 30_000, `the refusal took ${refused.ms} ms`);
      const list = await api('GET', '/admin/v1/http-tools');
      assert.deepEqual(
        list.body.items.map((s) => s.name),
        ['tenants'],
      );
    });
  });
}
