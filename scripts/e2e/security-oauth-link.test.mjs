// An authorization link must never hand one person's account to another (MCP
// 2025-11-25, elicitation, "Phishing"). End to end with real parts on loopback:
//   - oidc-provider (npm, panva) is the authorization server, with its development login and
//     consent pages, PKCE and RFC 8707 resource indicators (JWT access tokens whose audience is the
//     resource), and agents-mcp as a public client registered for its /oauth/callback;
//   - a TS SDK MCP server (`prot`, served with `auth: oauth`) and an HTTP API (the HTTP tool source
//     `crm`) accept only its JWTs and answer the token's subject;
//   - agents-mcp with three API keys (admin, alice, bob), each person with a browser (a cookie jar)
//     of their own.
//
// For each integration: alice's call answers agents-mcp's link; alice opens it in her browser and
// hands the authorization server's address to bob, who signs in there as bob: the callback refuses
// his browser (403, saying so) and stores nothing, and alice's next call still answers a link. Bob,
// handed that link itself, sees a page that names alice as the one who would receive his account;
// another site cannot post its confirmation for him. Alice completes it in her own browser: her
// calls arrive as alice, never as bob; the used link is refused.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import Provider from 'oidc-provider';

import { Browser, formOf } from './lib/browser.mjs';
import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const KEYS = { admin: `e2e-admin-${randomBytes(16).toString('hex')}`, alice: `e2e-alice-${randomBytes(16).toString('hex')}`, bob: `e2e-bob-${randomBytes(16).toString('hex')}` };
const META = 'io.agents-mcp/authorization-required';

/** An HTTP server on loopback whose handler is set later; resolves to {url, set, close}. */
async function listen() {
  let handler = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    set: (h) => { handler = h; },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The subject of a JWT the authorization server signed for `audience`, or null. */
async function subjectOf(req, jwks, issuer, audience) {
  const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  try {
    const { payload } = await jwtVerify(token, jwks, { issuer, audience });
    return String(payload.sub);
  } catch {
    return null;
  }
}

/** The MCP upstream: tool whoami answers the token's subject. */
function protectedUpstream(srv, issuer) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const resource = `${srv.url}/mcp`;
  srv.set(async (req, res) => {
    const sub = await subjectOf(req, jwks, issuer, resource);
    if (!sub) {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer error="invalid_token"', 'Content-Type': 'text/plain' }).end('unauthorized');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const server = new Server({ name: 'protected', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: sub }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  return resource;
}

/** The HTTP API of the tool source: GET /me answers {"sub": …}. */
function protectedAPI(srv, issuer) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  srv.set(async (req, res) => {
    const sub = await subjectOf(req, jwks, issuer, srv.url);
    if (!sub) {
      res.writeHead(401, { 'Content-Type': 'text/plain' }).end('unauthorized');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ sub }));
  });
  return srv.url;
}

async function api(base, method, p, body) {
  const res = await fetch(`${base}/admin/v1${p}`, {
    method,
    headers: { Authorization: `Bearer ${KEYS.admin}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, text };
}

describe('an authorization link binds the account to the person who asked', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-oauthlink-'));
  let asSrv, upSrv, apiSrv, agents, issuer;
  const sessions = {};

  before(
    async () => {
      [asSrv, upSrv, apiSrv] = await Promise.all([listen(), listen(), listen()]);
      issuer = asSrv.url;
      const resources = { prot: protectedUpstream(upSrv, issuer), crm: protectedAPI(apiSrv, issuer) };
      const config = {
        upstreams: [{ name: 'prot', transport: 'streamable', url: resources.prot, auth: 'oauth', timeout: '10s', max_backoff: '500ms' }],
        http_tools: [{ name: 'crm', base_url: resources.crm, endpoints: [{ name: 'me', method: 'GET', path: '/me' }] }],
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

      // The authorization server, now that agents-mcp's callback is known: agents-mcp is a public
      // client (PKCE), registered beforehand.
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      const provider = new Provider(issuer, {
        jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'e2e' }] },
        cookies: { keys: [randomBytes(16).toString('hex')] },
        clients: [{ client_id: 'agents-mcp', token_endpoint_auth_method: 'none', application_type: 'native',
          redirect_uris: [`${agents.base}/oauth/callback`], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }],
        features: {
          devInteractions: { enabled: true },
          resourceIndicators: {
            enabled: true,
            defaultResource: (_ctx, _client, oneOf) => oneOf,
            useGrantedResource: () => true,
            getResourceServerInfo: (_ctx, resource) => ({ scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 3600 }),
          },
        },
      });
      asSrv.set(provider.callback());

      for (const [integration, resource] of Object.entries(resources)) {
        const created = await api(agents.base, 'POST', '/credentials', {
          integration, kind: 'oauth_authorization_code', clientId: 'agents-mcp',
          authUrl: `${issuer}/auth`, tokenUrl: `${issuer}/token`, scopes: ['mcp'], resource,
        });
        assert.equal(created.status, 201, created.text);
      }
      // The server's own authorization of prot (its catalog session) goes through a link too.
      const started = await api(agents.base, 'POST', '/credentials/authorize', { integration: 'prot', shared: true });
      assert.equal(started.status, 200, started.text);
      const done = await new Browser().authorize(started.body.authorizationUrl, 'operator', agents.base);
      assert.equal(done.status, 200, done.body);
      await api(agents.base, 'POST', '/upstreams/prot/refresh', {});
      await eventually(async () => {
        const st = await api(agents.base, 'GET', '/upstreams/prot');
        assert.equal(st.body.state, 'ready', st.text);
      }, 30_000, 'the upstream is ready once the server is authorized');

      for (const who of ['alice', 'bob']) {
        const client = newClient();
        const transport = new StreamableHTTPClientTransport(new URL(`${agents.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEYS[who]}` } } });
        await withTimeout(client.connect(transport), 15_000, `connect as ${who}`);
        sessions[who] = { client, transport };
      }
    },
    { timeout: 120_000 },
  );

  after(
    async () => {
      for (const { client, transport } of Object.values(sessions)) {
        await transport.terminateSession().catch(() => {});
        await client.close().catch(() => {});
      }
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      for (const s of [asSrv, upSrv, apiSrv]) if (s) await s.close();
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  /** who's call of tool: {link} when it asks for an authorization, else {text}. */
  async function callAs(who, tool) {
    const res = await withTimeout(sessions[who].client.callTool({ name: tool, arguments: {} }), 20_000, `${who} calls ${tool}`);
    const ask = res._meta?.[META];
    if (ask) {
      assert.equal(res.isError, true, JSON.stringify(res));
      assert.ok(ask.authorizeUrl, JSON.stringify(res));
      return { link: ask.authorizeUrl };
    }
    assert.notEqual(res.isError, true, JSON.stringify(res));
    return { text: res.content.map((c) => c.text).join('') };
  }

  for (const [integration, tool] of [['prot', 'prot__whoami'], ['crm', 'crm__me']]) {
    it(`${integration}: a link completed in another person's browser stores nothing`, { timeout: 120_000 }, async () => {
      const base = agents.base;
      const alice = new Browser();
      const bob = new Browser();
      const credentialsOf = async () => (await api(base, 'GET', `/credentials?integration=${integration}`)).body.items;

      // Alice opens her link and hands the authorization server's address to bob, who signs in.
      const { link } = await callAs('alice', tool);
      assert.ok(link?.startsWith(`${base}/oauth/start?flow=`), `alice's link ${link} is not agents-mcp's`);
      const asURL = await alice.start(link, base);
      assert.ok(asURL.startsWith(`${issuer}/auth?`), asURL);
      const page = await bob.signIn(asURL, 'bob', base);
      assert.equal(page.status, 403, page.body);
      assert.match(page.body, /not started in this browser/);
      assert.match(page.body, /nothing was stored/);
      assert.deepEqual((await credentialsOf()).map((c) => c.principal), [''], 'only the shared client is stored');
      const next = await callAs('alice', tool);
      assert.ok(next.link, `alice's call went through after bob's session: ${next.text}`);

      // Handed the link itself, bob sees whom it is for, and another site cannot confirm for him.
      const shown = await bob.fetch(next.link);
      assert.equal(shown.status, 200, shown.body);
      assert.match(shown.body, /<strong>alice \(key:[0-9a-f]{12}\)/);
      assert.match(shown.body, /If someone sent you this link, close this page/);
      assert.equal(shown.headers['x-frame-options'], 'DENY');
      const form = formOf(shown);
      assert.ok(form, shown.body);
      const forged = await bob.fetch(form.action, { method: 'POST', form: form.fields, headers: { Origin: 'https://evil.example' } });
      assert.equal(forged.status, 403, forged.body);
      const noCookie = await new Browser().fetch(form.action, { method: 'POST', form: form.fields });
      assert.equal(noCookie.status, 403, noCookie.body);
      assert.deepEqual((await credentialsOf()).map((c) => c.principal), ['']);

      // Alice completes it in her own browser: her calls arrive as alice, bob's still ask.
      const done = await alice.authorize(next.link, 'alice', base);
      assert.equal(done.status, 200, done.body);
      assert.match(done.body, /Authorized/);
      const mine = await callAs('alice', tool);
      assert.match(mine.text ?? '', /alice/, JSON.stringify(mine));
      assert.doesNotMatch(mine.text, /bob/);
      assert.ok((await callAs('bob', tool)).link, "bob's call went through with alice's authorization");

      // The used link is refused.
      const used = await alice.fetch(next.link);
      assert.equal(used.status, 400, used.body);
    });
  }
});
