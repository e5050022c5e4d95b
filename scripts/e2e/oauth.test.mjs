// Credentials and upstream OAuth (ADR 0012), end to end with real parts on loopback:
//   - oauth2-mock-server (npm) is the authorization server;
//   - the upstream is a TS SDK MCP server that accepts only JWTs signed by it (checked against its
//     JWKS with jose) and answers 401 with a WWW-Authenticate challenge otherwise;
//   - agents-mcp serves it with `auth: oauth`, with three API keys: admin, alice, bob.
//
//   1. the upstream is down until the server itself is authorized: the admin adds the OAuth client
//      (POST /admin/v1/credentials), starts a shared authorization (POST /credentials/authorize
//      {shared:true}), and a browser (plain HTTP with a cookie jar) opens agents-mcp's link,
//      confirms on its page and follows the redirects to /oauth/callback;
//   2. alice's call answers an actionable isError result with agents-mcp's link in _meta; she
//      follows it in her browser, and her next call succeeds with her own token;
//   3. bob still gets the link: alice's authorization is hers;
//   4. the credential list holds no token, and the store file holds none in clear.

import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';

import { Browser } from './lib/browser.mjs';
import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const KEYS = { admin: `e2e-admin-${randomBytes(16).toString('hex')}`, alice: `e2e-alice-${randomBytes(16).toString('hex')}`, bob: `e2e-bob-${randomBytes(16).toString('hex')}` };
const META = 'io.agents-mcp/authorization-required';

/** The protected upstream: tool whoami answers the jti of the token it was called with. */
async function startProtectedUpstream(issuer) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const seen = []; // Authorization headers received
  const httpServer = http.createServer(async (req, res) => {
    seen.push(req.headers.authorization ?? '');
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(token, jwks, { issuer }));
    } catch {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer error="invalid_token"', 'Content-Type': 'text/plain' }).end('unauthorized');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const server = new Server({ name: 'protected', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: String(claims.jti) }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${httpServer.address().port}/mcp`,
    seen,
    close: () => new Promise((resolve) => {
      httpServer.closeAllConnections();
      httpServer.close(() => resolve());
    }),
  };
}

async function api(base, method, p, body) {
  const res = await fetch(`${base}/admin/v1${p}`, {
    method,
    headers: { Authorization: `Bearer ${KEYS.admin}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, text };
}

/**
 * What the person's browser does: open agents-mcp's link, confirm on its page, and follow the
 * redirects through the authorization server (which grants at once) back to agents-mcp's callback.
 * Returns the authorization server's URL it went through.
 */
async function authorizeInBrowser(link, base) {
  assert.ok(link.startsWith(`${base}/oauth/start?flow=`), `the link ${link} is not agents-mcp's`);
  const browser = new Browser();
  const asURL = await browser.start(link, base);
  const res = await browser.signIn(asURL, 'any', base);
  assert.ok(res.url.startsWith(`${base}/oauth/callback?`), `ended at ${res.url}`);
  assert.equal(res.status, 200, res.body);
  assert.match(res.body, /Authorized/);
  return asURL;
}

async function callAs(base, key) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await withTimeout(client.connect(transport), 15_000, 'connect');
  try {
    return await withTimeout(client.callTool({ name: 'prot__whoami', arguments: {} }), 20_000, 'call whoami');
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

describe('credentials and OAuth upstreams, per user', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-oauth-'));
  const as = new OAuth2Server();
  let issuer, upstream, agents;

  before(
    async () => {
      await as.issuer.keys.generate('RS256');
      await as.start(0, '127.0.0.1');
      issuer = as.issuer.url;
      // Each token gets an id of its own, so that the upstream tells them apart.
      as.service.on('beforeTokenSigning', (token) => {
        token.payload.jti = randomUUID();
      });
      upstream = await startProtectedUpstream(issuer);
      const config = {
        upstreams: [{ name: 'prot', transport: 'streamable', url: upstream.url, auth: 'oauth', timeout: '10s', max_backoff: '500ms' }],
        auth: {
          api_keys: [
            { name: 'admin', key: KEYS.admin, scopes: ['admin:read', 'admin:write', 'mcp'] },
            { name: 'alice', key: KEYS.alice, scopes: ['mcp'] },
            { name: 'bob', key: KEYS.bob, scopes: ['mcp'] },
          ],
        },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), { readyMs: 60_000 });
    },
    { timeout: 90_000 },
  );

  after(
    async () => {
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      if (upstream) await upstream.close();
      await as.stop().catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  it('authorizes the server, then each user, and never mixes their tokens', { timeout: 120_000 }, async () => {
    const base = agents.base;
    let st = await api(base, 'GET', '/upstreams/prot');
    assert.equal(st.body.state, 'down', st.text);

    const created = await api(base, 'POST', '/credentials', {
      integration: 'prot', kind: 'oauth_authorization_code', clientId: 'agents-mcp',
      authUrl: `${issuer}/authorize`, tokenUrl: `${issuer}/token`, scopes: ['openid'],
    });
    assert.equal(created.status, 201, created.text);
    const started = await api(base, 'POST', '/credentials/authorize', { integration: 'prot', shared: true });
    assert.equal(started.status, 200, started.text);
    const asURL = await authorizeInBrowser(started.body.authorizationUrl, base);
    assert.ok(asURL.startsWith(`${issuer}/authorize?`), asURL);
    assert.match(asURL, /code_challenge_method=S256/);
    await api(base, 'POST', '/upstreams/prot/refresh', {});
    await eventually(async () => {
      st = await api(base, 'GET', '/upstreams/prot');
      assert.equal(st.body.state, 'ready', st.text);
    }, 30_000, 'the upstream is ready once the server is authorized');

    // Alice has no authorization yet: an actionable result, not a failure.
    let res = await callAs(base, KEYS.alice);
    assert.equal(res.isError, true, JSON.stringify(res));
    const ask = res._meta?.[META];
    assert.ok(ask?.authorizeUrl?.startsWith(`${base}/oauth/start?flow=`), JSON.stringify(res));
    assert.equal(ask.integration, 'prot');
    assert.ok(res.content[0].text.includes(ask.authorizeUrl));
    await authorizeInBrowser(ask.authorizeUrl, base);
    res = await callAs(base, KEYS.alice);
    assert.notEqual(res.isError, true, JSON.stringify(res));
    const aliceJti = res.content[0].text;
    res = await callAs(base, KEYS.alice);
    assert.equal(res.content[0].text, aliceJti, 'her token is reused');

    // Bob is asked in turn: alice's authorization is hers alone.
    res = await callAs(base, KEYS.bob);
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.ok(res._meta?.[META]?.authorizeUrl);

    // The upstream never saw an agents-mcp key.
    for (const h of upstream.seen) {
      for (const k of Object.values(KEYS)) assert.ok(!h.includes(k), 'an agents-mcp key reached the upstream');
    }
    // No token in the credential list, nor in clear in the store.
    const list = await api(base, 'GET', '/credentials?integration=prot');
    assert.equal(list.body.items.length, 2, list.text); // the shared client and alice's
    const tokens = upstream.seen.filter((h) => h.startsWith('Bearer ')).map((h) => h.slice(7));
    assert.ok(tokens.length > 0);
    const db = readFileSync(path.join(work, 'data', 'agents-mcp.db')).toString('latin1');
    for (const t of tokens) {
      assert.ok(!list.text.includes(t), 'a token is listed');
      assert.ok(!db.includes(t.slice(-40)), 'a token is stored in clear');
    }
  });
});
