// OAuth client registration of agents-mcp with a real authorization server (ADR 0012
// D6), end to end with real parts on loopback:
//   - oidc-provider (npm, panva) is the authorization server, with RFC 7591 dynamic registration,
//     Client ID Metadata Documents (draft-02), RFC 8707 resource indicators (JWT access tokens whose
//     audience is the MCP server), PKCE, and its development login and consent pages;
//   - two TS SDK MCP servers, `dcr` and `cimd`, accept only JWTs that it signed for them (checked
//     against its JWKS, issuer and audience with jose) and otherwise answer 401 naming their RFC 9728
//     metadata; tool whoami answers the token's subject;
//   - agents-mcp serves them with `auth: oauth` behind a TLS proxy (a node https server with a
//     self-signed certificate), because a Client ID Metadata Document must be at an https URL:
//     public_url is the proxy's https URL.
//
//   1. POST /admin/v1/credentials/discover finds the metadata of both;
//   2. POST /credentials/register registers agents-mcp: `dcr` by dynamic registration (method
//      "dynamic": the server would take a document too), `cimd` by its Client ID Metadata Document
//      (the default when both work), which the server fetches from agents-mcp when a person signs in;
//   3. the server itself is authorized (shared), and the upstreams become ready;
//   4. alice gets the actionable authorization-required result, signs in through the real login and
//      consent pages by plain HTTP (cookies, forms, redirects to /oauth/callback), and her next call
//      arrives as alice; bob, who has not, still gets the link.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import Provider from 'oidc-provider';

import { Browser, request } from './lib/browser.mjs';
import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const KEYS = { admin: `e2e-admin-${randomBytes(16).toString('hex')}`, alice: `e2e-alice-${randomBytes(16).toString('hex')}`, bob: `e2e-bob-${randomBytes(16).toString('hex')}` };
const META = 'io.agents-mcp/authorization-required';

/** The authorization server: oidc-provider on loopback. */
async function startAuthorizationServer(ca) {
  let handler = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'e2e' };
  const documentsFetched = [];
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        // Tokens for an MCP server are JWTs whose audience is that server (RFC 8707).
        getResourceServerInfo: (_ctx, resource) => ({ scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 3600 }),
      },
    },
    // Its SSRF guard refuses special-use addresses, loopback included, and everything here is on
    // loopback: the documents are fetched over TLS from the proxy, trusting its certificate only.
    fetch: async (url, options) => {
      documentsFetched.push(String(url));
      const res = await request(String(url), { method: options.method, headers: Object.fromEntries(options.headers), ca });
      return new Response(res.body, { status: res.status, headers: Object.entries(res.headers).filter(([, v]) => typeof v === 'string') });
    },
  });
  handler = provider.callback();
  return { issuer, provider, documentsFetched, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

/** A protected MCP server: whoami answers the subject of a token the authorization server signed for it. */
async function startProtectedUpstream(issuer) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const seen = []; // Authorization headers received
  let url, metadataURL;
  const httpServer = http.createServer(async (req, res) => {
    if (req.url === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ resource: url, authorization_servers: [issuer], scopes_supported: ['mcp'] }));
      return;
    }
    seen.push(req.headers.authorization ?? '');
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(token, jwks, { issuer, audience: url }));
    } catch {
      res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${metadataURL}"`, 'Content-Type': 'text/plain' }).end('unauthorized');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const server = new Server({ name: 'protected', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: String(claims.sub) }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${httpServer.address().port}`;
  url = `${origin}/mcp`;
  metadataURL = `${origin}/.well-known/oauth-protected-resource/mcp`;
  return { url, seen, close: () => new Promise((resolve) => { httpServer.closeAllConnections(); httpServer.close(() => resolve()); }) };
}

/** The TLS front of agents-mcp, as in a deployment behind a reverse proxy. */
async function startTLSProxy(key, cert, target) {
  const server = https.createServer({ key, cert }, (req, res) => {
    const { host, port } = target();
    const up = http.request({ host, port, path: req.url, method: req.method, headers: { ...req.headers, host: `${host}:${port}` } }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `https://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
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

/**
 * What a person's browser does, with a cookie jar of its own: open agents-mcp's link and confirm on
 * its page, sign in as `login` on the login page, accept on the consent page, and follow the
 * redirects to agents-mcp's callback. Returns the prompts of the authorization server's forms.
 */
async function signIn(link, login, publicURL, ca) {
  assert.ok(link.startsWith(`${publicURL}/oauth/start?flow=`), `the link ${link} is not agents-mcp's`);
  const res = await new Browser({ ca }).authorize(link, login, publicURL);
  assert.equal(res.status, 200, res.body);
  assert.match(res.body, /Authorized/);
  return res.prompts;
}

async function callAs(base, key, tool) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await withTimeout(client.connect(transport), 15_000, 'connect');
  try {
    return await withTimeout(client.callTool({ name: tool, arguments: {} }), 20_000, `call ${tool}`);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

describe('OAuth client registration with a real authorization server', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-oauthreg-'));
  let as, upstreams, proxy, agents, ca;

  before(
    async () => {
      // Go's own certificate generator (in every Go installation, unlike the openssl command on a fresh
      // machine) writes cert.pem and key.pem, for 127.0.0.1, into work.
      const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
      execFileSync('go', ['run', path.join(goroot, 'src/crypto/tls/generate_cert.go'), '--host', '127.0.0.1', '--duration', '24h', '--ca'],
        { cwd: work, stdio: 'ignore' });
      ca = readFileSync(path.join(work, 'cert.pem'));
      as = await startAuthorizationServer(ca);
      upstreams = { dcr: await startProtectedUpstream(as.issuer), cimd: await startProtectedUpstream(as.issuer) };
      let target;
      proxy = await startTLSProxy(readFileSync(path.join(work, 'key.pem')), ca, () => target);
      const config = {
        public_url: proxy.url,
        upstreams: Object.entries(upstreams).map(([name, u]) => ({ name, transport: 'streamable', url: u.url, auth: 'oauth', timeout: '10s', max_backoff: '500ms' })),
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
      const u = new URL(agents.base);
      target = { host: u.hostname, port: Number(u.port) };
    },
    { timeout: 90_000 },
  );

  after(
    async () => {
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      for (const u of Object.values(upstreams ?? {})) await u.close();
      if (proxy) await proxy.close();
      if (as) await as.close();
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  it('serves its Client ID Metadata Document at its https public URL', async () => {
    const res = await request(`${proxy.url}/oauth/client-metadata.json`, { ca });
    assert.equal(res.status, 200, res.body);
    const doc = JSON.parse(res.body);
    assert.equal(doc.client_id, `${proxy.url}/oauth/client-metadata.json`);
    assert.deepEqual(doc.redirect_uris, [`${proxy.url}/oauth/callback`]);
    assert.equal(doc.token_endpoint_auth_method, 'none');
  });

  for (const [name, method] of [['dcr', 'dynamic'], ['cimd', undefined]]) {
    it(`${name}: discovers, registers (${method ?? 'default'}), and each user authorizes on their own`, { timeout: 120_000 }, async () => {
      const base = agents.base;
      const tool = `${name}__whoami`;
      let st = await api(base, 'GET', `/upstreams/${name}`);
      assert.equal(st.body.state, 'down', st.text);

      const found = await api(base, 'POST', '/credentials/discover', { integration: name });
      assert.equal(found.status, 200, found.text);
      assert.equal(found.body.issuer, as.issuer);
      assert.equal(found.body.resource, upstreams[name].url);
      assert.equal(found.body.registrationEndpoint, `${as.issuer}/reg`);
      assert.equal(found.body.clientIdMetadataDocumentSupported, true);
      assert.deepEqual(found.body.scopesSupported, ['mcp']);
      // Both work; a document comes first.
      assert.equal(found.body.registration, 'client_id_metadata_document', found.text);

      const fetchedBefore = as.documentsFetched.length;
      const reg = await api(base, 'POST', '/credentials/register', method ? { integration: name, method } : { integration: name });
      assert.equal(reg.status, 201, reg.text);
      assert.equal(reg.body.principal, '');
      assert.equal(reg.body.kind, 'oauth_authorization_code');
      assert.equal(reg.body.settings.issuer, as.issuer);
      assert.equal(reg.body.settings.resource, upstreams[name].url);
      assert.doesNotMatch(reg.text, /secret/i, 'the answer holds no client secret');
      let clientSecret;
      if (method === 'dynamic') {
        assert.equal(reg.body.settings.registration, 'dynamic');
        assert.doesNotMatch(reg.body.settings.client_id, /^https:/);
        clientSecret = (await as.provider.Client.find(reg.body.settings.client_id))?.clientSecret;
        assert.ok(clientSecret, 'the server issued a client secret');
      } else {
        assert.equal(reg.body.settings.registration, 'client_id_metadata_document');
        assert.equal(reg.body.settings.client_id, `${proxy.url}/oauth/client-metadata.json`);
      }
      const again = await api(base, 'POST', '/credentials/register', { integration: name });
      assert.equal(again.status, 409, again.text);

      // The server itself is authorized (its pool session), then the upstream is ready.
      const started = await api(base, 'POST', '/credentials/authorize', { integration: name, shared: true });
      assert.equal(started.status, 200, started.text);
      const pages = await signIn(started.body.authorizationUrl, 'operator', proxy.url, ca);
      assert.deepEqual(pages, ['login', 'consent'], 'the real login and consent pages were submitted');
      if (method !== 'dynamic') {
        assert.ok(as.documentsFetched.slice(fetchedBefore).includes(`${proxy.url}/oauth/client-metadata.json`), 'the server fetched the document');
      }
      await api(base, 'POST', `/upstreams/${name}/refresh`, {});
      await eventually(async () => {
        st = await api(base, 'GET', `/upstreams/${name}`);
        assert.equal(st.body.state, 'ready', st.text);
      }, 30_000, 'the upstream is ready once the server is authorized');

      // Alice has no authorization yet: an actionable result, not a failure.
      let res = await callAs(base, KEYS.alice, tool);
      assert.equal(res.isError, true, JSON.stringify(res));
      const ask = res._meta?.[META];
      assert.ok(ask?.authorizeUrl?.startsWith(`${proxy.url}/oauth/start?flow=`), JSON.stringify(res));
      assert.equal(ask.integration, name);
      await signIn(ask.authorizeUrl, 'alice', proxy.url, ca);
      res = await callAs(base, KEYS.alice, tool);
      assert.notEqual(res.isError, true, JSON.stringify(res));
      assert.equal(res.content[0].text, 'alice', 'the call arrives as alice');

      // Bob is asked in turn: alice's authorization is hers alone.
      res = await callAs(base, KEYS.bob, tool);
      assert.equal(res.isError, true, JSON.stringify(res));
      assert.ok(res._meta?.[META]?.authorizeUrl?.startsWith(`${proxy.url}/oauth/start?flow=`), JSON.stringify(res));

      // The upstream never saw an agents-mcp key, and the tokens it saw are not listed.
      const tokens = upstreams[name].seen.filter((h) => h.startsWith('Bearer ')).map((h) => h.slice(7));
      for (const h of upstreams[name].seen) {
        for (const k of Object.values(KEYS)) assert.ok(!h.includes(k), 'an agents-mcp key reached the upstream');
      }
      const list = await api(base, 'GET', `/credentials?integration=${name}`);
      assert.equal(list.body.items.length, 2, list.text); // the shared client and alice's
      // Neither the tokens nor the client secret are listed, logged, or stored in clear.
      // (The WAL too: recent writes may not be in the main file yet.)
      const db = ['agents-mcp.db', 'agents-mcp.db-wal'].filter((f) => existsSync(path.join(work, 'data', f)))
        .map((f) => readFileSync(path.join(work, 'data', f)).toString('latin1')).join('');
      const logged = agents.p.output();
      assert.ok(tokens.length > 0);
      for (const t of [...tokens, ...(clientSecret ? [clientSecret] : [])]) {
        assert.ok(!list.text.includes(t), 'a secret is listed');
        assert.ok(!logged.includes(t.slice(-40)), 'a secret is logged');
        assert.ok(!db.includes(t.slice(-40)), 'a secret is stored in clear');
      }
    });
  }
});
