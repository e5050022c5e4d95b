// Egress attacks on the real binary:
//   - SSRF through upstream URLs: POST /admin/v1/upstreams must refuse cloud metadata and
//     link-local addresses (169.254.169.254, [fe80::1], metadata.google.internal), the server's own
//     address, and header values with CR/LF, with 400 and a message saying why;
//   - credentials following redirects: an upstream on loopback answers 307 to a second "steal"
//     server on another loopback port that records headers; the steal server must never see the
//     configured X-Api-Key (the pool refuses redirects to another origin).
//
// A wrong answer to the SSRF tests would make agents-mcp connect to 169.254.169.254 or look up
// metadata.google.internal. So that no packet can leave the machine even then, this file re-runs
// itself inside a network namespace that has only loopback (`unshare -n`, root only): agents-mcp,
// the upstreams and the test all run in there, where any other address is unreachable at once.
// Without root the test is skipped, saying so.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { eventually, startAgents, stop } from './lib/procs.mjs';

const THIS_FILE = fileURLToPath(import.meta.url);
const IN_NETNS_ENV = 'E2E_EGRESS_IN_NETNS';
const SECRET = 'e2e-egress-api-key-must-stay-home';

if (process.env[IN_NETNS_ENV] !== '1') {
  test('egress attacks (run in a network namespace with only loopback)', (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('needs root: these tests run only inside `unshare -n`, so that a wrong answer cannot send a packet off the machine');
      return;
    }
    const env = { ...process.env, [IN_NETNS_ENV]: '1' };
    delete env.NODE_TEST_CONTEXT; // the inner run reports on its own, not to this runner
    const r = spawnSync(
      'unshare',
      ['-n', 'bash', '-c', 'ip link set lo up && exec "$@"', 'bash', process.execPath, '--test', '--test-reporter=spec', '--test-timeout=60000', THIS_FILE],
      { env, encoding: 'utf8', timeout: 240_000 },
    );
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    t.diagnostic(out);
    assert.equal(r.error, undefined, `unshare: ${r.error?.message}`);
    assert.equal(r.status, 0, `the egress tests failed inside the network namespace:\n${out}`);
    assert.match(out, /pass [1-9]/, `no test passed inside the network namespace:\n${out}`);
    assert.match(out, /fail 0/, out);
  });
} else {
  describe('egress attacks (inside a network namespace with only loopback)', () => {
    let dir;
    let agents;
    let base;
    let steal; // records the headers of every request it gets
    let redirector; // answers 307 to steal
    const stolen = [];

    /** An HTTP server on a free loopback port; resolves with { server, url }. */
    function listen(handler) {
      return new Promise((resolve, reject) => {
        const server = http.createServer(handler);
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` }));
      });
    }

    async function api(method, p, body) {
      const res = await fetch(`${base}/admin/v1${p}`, {
        method,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    }

    before(async () => {
      steal = await listen((req, res) => {
        stolen.push({ method: req.method, url: req.url, headers: req.headers });
        req.resume();
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
      redirector = await listen((req, res) => {
        req.resume();
        res.writeHead(307, { Location: `${steal.url}${req.url}` }).end();
      });
      dir = mkdtempSync(path.join(tmpdir(), 'agents-mcp-egress-'));
      const config = path.join(dir, 'config.yaml');
      writeFileSync(
        config,
        [
          'upstreams:',
          '  - name: redirected',
          '    transport: streamable',
          `    url: ${redirector.url}/mcp`,
          '    headers:',
          `      X-Api-Key: ${SECRET}`,
          `      Authorization: Bearer ${SECRET}`,
          '',
        ].join('\n'),
      );
      ({ p: agents, base } = await startAgents(process.env.AGENTS_MCP_BIN || path.join(path.dirname(THIS_FILE), '../../bin/agents-mcp'), config, path.join(dir, 'data')));
    });

    after(async () => {
      await stop(agents);
      steal?.server.close();
      redirector?.server.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('the admin API refuses cloud metadata, link-local, its own address and CR/LF headers with 400', async () => {
      const own = new URL(base);
      const cases = [
        [{ name: 'aws', transport: 'streamable', url: 'http://169.254.169.254/latest/meta-data' }, /link-local or a cloud metadata/],
        [{ name: 'aws-sse', transport: 'sse', url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' }, /link-local or a cloud metadata/],
        [{ name: 'v6', transport: 'streamable', url: 'http://[fe80::1]/' }, /link-local/],
        [{ name: 'gcp', transport: 'streamable', url: 'http://metadata.google.internal/' }, /cloud metadata service/],
        [{ name: 'gcp-sse', transport: 'sse', url: 'http://metadata.google.internal/computeMetadata/v1/' }, /cloud metadata service/],
        [{ name: 'self', transport: 'streamable', url: `${base}/mcp` }, /own listen address/],
        [{ name: 'self-sse', transport: 'sse', url: `http://localhost:${own.port}/sse` }, /own listen address/],
        [
          { name: 'crlf', transport: 'streamable', url: `${redirector.url}/mcp`, headers: { 'X-Api-Key': `${SECRET}\r\nX-Injected: yes` } },
          /control character/,
        ],
      ];
      for (const [body, why] of cases) {
        const r = await api('POST', '/upstreams', body);
        assert.equal(r.status, 400, `${body.url}: status ${r.status} ${JSON.stringify(r.body)}`);
        assert.equal(r.body?.error?.code, 'invalid', JSON.stringify(r.body));
        assert.match(r.body.error.message, why, `${body.url}: ${r.body.error.message}`);
        assert.ok(!r.body.error.message.includes(SECRET), `the message quotes a header value: ${r.body.error.message}`);
      }
      const list = await api('GET', '/upstreams');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((u) => u.name),
        ['redirected'],
        'a refused upstream was added',
      );
    });

    test('credentials never follow a 307 to another origin', async () => {
      // One more upstream with credentials through the admin API, over legacy SSE.
      const added = await api('POST', '/upstreams', {
        name: 'redirected-sse',
        transport: 'sse',
        url: `${redirector.url}/sse`,
        headers: { 'X-Api-Key': SECRET },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      const statuses = [];
      for (const name of ['redirected', 'redirected-sse']) {
        statuses.push(
          await eventually(
            async () => {
              const r = await api('GET', `/upstreams/${name}`);
              assert.equal(r.status, 200);
              assert.notEqual(r.body.state, 'connecting');
              assert.ok(r.body.lastError, 'no error yet');
              return r.body;
            },
            15_000,
            `${name} past its first connect attempt`,
          ),
        );
      }
      // A few reconnect attempts later, still nothing reached the steal server.
      await new Promise((r) => setTimeout(r, 1000));
      const leaked = stolen.filter((s) => JSON.stringify(s.headers).includes(SECRET));
      assert.deepEqual(leaked, [], 'the steal server received the configured credentials');
      // The rule: redirects to another origin are refused altogether, and the status says so.
      assert.equal(stolen.length, 0, `the steal server got requests: ${JSON.stringify(stolen)}`);
      for (const st of statuses) {
        assert.notEqual(st.state, 'ready', JSON.stringify(st));
        assert.match(`${st.reason} ${st.lastError}`, /another origin/, JSON.stringify(st));
      }
    });
  });
}
