// Raw-HTTP bad-input and robustness checks against a running `agents-mcp serve`.
//
// Run through scripts/e2e/run.sh (it starts the server and sets AGENTS_MCP_URL).

import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

import {
  BASE,
  BASE_URL,
  CLIENT_INFO,
  HOSTPORT,
  MCP_HEADERS,
  PROTOCOL_VERSION,
  describe as desc,
  rawInitialize,
  rawRequest,
  withTimeout,
} from './lib/harness.mjs';

const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
});

/** Asserts that a raw response body is a JSON-RPC 2.0 error object with `code`. */
function assertJsonRpcError(res, code, { id } = {}) {
  const body = res.json;
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `not a JSON-RPC error object: ${desc(res)}`);
  assert.equal(body.jsonrpc, '2.0', `jsonrpc member: ${desc(res)}`);
  assert.ok(body.error && typeof body.error === 'object', `no error member: ${desc(res)}`);
  if (code !== undefined) {
    assert.equal(body.error.code, code, `error code: ${desc(res)}`);
  } else {
    assert.ok(Number.isInteger(body.error.code), `error.code is not an integer: ${desc(res)}`);
  }
  assert.equal(typeof body.error.message, 'string', `error.message: ${desc(res)}`);
  if (id !== undefined) {
    assert.ok('id' in body, `no id member (JSON-RPC 2.0 requires it, null when unknown): ${desc(res)}`);
    assert.equal(body.id, id, `id: ${desc(res)}`);
  }
  assert.equal(body.result, undefined, `error response also carries a result: ${desc(res)}`);
}

async function assertHealthy() {
  const res = await rawRequest({ path: '/healthz' });
  assert.equal(res.status, 200, `/healthz: ${desc(res)}`);
  assert.equal(res.json?.status, 'ok', `/healthz: ${desc(res)}`);
}

describe('health endpoints', () => {
  test('GET /healthz is 200 {"status":"ok"}', assertHealthy);

  test('GET /readyz is 200 with a JSON body on the embedded defaults', async () => {
    const res = await rawRequest({ path: '/readyz' });
    assert.equal(res.status, 200, `/readyz: ${desc(res)}`);
    assert.ok(res.json && typeof res.json === 'object', `/readyz body is not JSON: ${desc(res)}`);
  });
});

describe('streamable HTTP (/mcp) bad input', () => {
  test('body "not json" -> HTTP 400 and JSON-RPC -32700 with id null', async () => {
    const res = await rawRequest({ method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: 'not json' });
    assert.equal(res.status, 400, desc(res));
    assertJsonRpcError(res, -32700, { id: null });
  });

  test('body "not json" on an initialized session -> HTTP 400 and JSON-RPC -32700', async () => {
    const { headers } = await rawInitialize();
    const res = await rawRequest({ method: 'POST', path: '/mcp', headers, body: 'not json' });
    assert.equal(res.status, 400, desc(res));
    assertJsonRpcError(res, -32700, { id: null });
  });

  test('unknown method after initialize -> JSON-RPC -32601', async () => {
    const { headers } = await rawInitialize();
    const res = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'no/such_method', params: {} }),
    });
    assertJsonRpcError(res, -32601, { id: 42 });
  });

  test('10 MB body -> HTTP 413 with a JSON-RPC error', async () => {
    const { headers } = await rawInitialize();
    const big = 'A'.repeat(10 * 1024 * 1024);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'search_tools', arguments: { query: big } },
    });
    const res = await rawRequest({ method: 'POST', path: '/mcp', headers, body, timeoutMs: 30_000 });
    assert.equal(res.status, 413, desc(res));
    assertJsonRpcError(res);
    await assertHealthy();
  });

  test('batch with MCP-Protocol-Version 2025-11-25 -> HTTP 400 and JSON-RPC -32600', async () => {
    const { headers } = await rawInitialize();
    assert.equal(headers['MCP-Protocol-Version'], '2025-11-25', 'server did not negotiate 2025-11-25');
    const res = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers: { ...headers, 'MCP-Protocol-Version': '2025-11-25' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 10, method: 'ping' },
        { jsonrpc: '2.0', id: 11, method: 'tools/list' },
      ]),
    });
    assert.equal(res.status, 400, desc(res));
    assertJsonRpcError(res, -32600);
  });

  test('a notification method sent with an id -> JSON-RPC -32600', async () => {
    const { headers } = await rawInitialize();
    const res = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'notifications/initialized' }),
    });
    assertJsonRpcError(res, -32600);
  });

  test('a session still works after the bad requests', async () => {
    const { headers } = await rawInitialize();
    const res = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }),
    });
    assert.equal(res.status, 200, desc(res));
    assert.ok(res.json?.result?.tools?.some((t) => t.name === 'search_tools'), desc(res));
  });
});

describe('POST /sse (single request, plain JSON-RPC response)', () => {
  test('tools/list -> 200 application/json with the tools', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/sse',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 200, desc(res));
    assert.match(String(res.headers['content-type']), /^application\/json/, desc(res));
    const body = JSON.parse(res.text); // plain JSON, not an SSE frame
    assert.equal(body.jsonrpc, '2.0', desc(res));
    assert.equal(body.id, 1, desc(res));
    assert.equal(body.error, undefined, desc(res));
    assert.ok(Array.isArray(body.result?.tools), desc(res));
    assert.ok(body.result.tools.some((t) => t.name === 'search_tools'), desc(res));
  });

  test('tools/call search_tools -> 200 with a tool result', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/sse',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'call-1',
        method: 'tools/call',
        params: { name: 'search_tools', arguments: { query: 'search' } },
      }),
    });
    assert.equal(res.status, 200, desc(res));
    const body = JSON.parse(res.text);
    assert.equal(body.id, 'call-1', desc(res));
    assert.notEqual(body.result?.isError, true, desc(res));
    assert.ok(Array.isArray(body.result?.content) && body.result.content.length > 0, desc(res));
  });
});

describe('POST /sse and /messages bad input', () => {
  test('POST /sse with body "not json" -> HTTP 400 and JSON-RPC -32700', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/sse',
      headers: { 'Content-Type': 'application/json' },
      body: 'not json',
    });
    assert.equal(res.status, 400, desc(res));
    assertJsonRpcError(res, -32700, { id: null });
  });

  test('POST /sse with an unknown method -> JSON-RPC -32601', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/sse',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'no/such_method' }),
    });
    assertJsonRpcError(res, -32601, { id: 9 });
  });

  test('POST /sse tools/validate -> plain JSON-RPC result', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/sse',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/validate',
        params: { name: 'search_tools', arguments: { limit: 'ten', scope: 'everywhere' } },
      }),
    });
    assert.equal(res.status, 200, desc(res));
    const r = res.json?.result;
    assert.equal(r?.valid, false, desc(res));
    assert.ok(r.missing?.includes('query'), desc(res));
    assert.ok(r.errors?.some((e) => e.path === '/limit' && e.keyword === 'type'), desc(res));
    assert.ok(r.errors?.some((e) => e.path === '/scope' && e.keyword === 'enum'), desc(res));
  });

  test('POST /messages with an unknown sessionId -> 404 with a JSON-RPC error', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/messages?sessionId=no-such-session-e2e',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(res.status, 404, desc(res));
    assertJsonRpcError(res);
  });
});

describe('DNS-rebinding protection', () => {
  test('Host: evil.example.com on POST /mcp -> 403', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, Host: 'evil.example.com' },
      body: initializeBody,
    });
    assert.equal(res.status, 403, desc(res));
  });

  test('Host: evil.example.com on GET /sse -> 403', async () => {
    const res = await rawRequest({
      method: 'GET',
      path: '/sse',
      headers: { Accept: 'text/event-stream', Host: 'evil.example.com' },
      timeoutMs: 5_000,
    });
    assert.equal(res.status, 403, desc(res));
  });

  test('Host: evil.example.com on POST /sse -> 403', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/sse',
      headers: { 'Content-Type': 'application/json', Host: 'evil.example.com' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 403, desc(res));
  });

  test('Origin: http://evil.example.com on POST /mcp -> 403', async () => {
    const res = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, Origin: 'http://evil.example.com' },
      body: initializeBody,
    });
    assert.equal(res.status, 403, desc(res));
  });

  test('Origin: http://evil.example.com on GET /sse -> 403', async () => {
    const res = await rawRequest({
      method: 'GET',
      path: '/sse',
      headers: { Accept: 'text/event-stream', Origin: 'http://evil.example.com' },
      timeoutMs: 5_000,
    });
    assert.equal(res.status, 403, desc(res));
  });

  test('control: Host localhost:PORT and a same-origin Origin are accepted', async () => {
    const a = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, Host: `localhost:${BASE.port}` },
      body: initializeBody,
    });
    assert.equal(a.status, 200, `Host localhost:${BASE.port}: ${desc(a)}`);
    const b = await rawRequest({
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, Origin: `http://${HOSTPORT}` },
      body: initializeBody,
    });
    assert.equal(b.status, 200, `Origin http://${HOSTPORT}: ${desc(b)}`);
  });
});

/** Opens GET /sse, waits for the endpoint event, and returns { endpoint, destroy }. */
function openRawSse() {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: BASE.hostname,
      port: BASE.port,
      path: '/sse',
      method: 'GET',
      headers: { Accept: 'text/event-stream' },
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error('no endpoint event on GET /sse within 5 s'));
    }, 5_000);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        clearTimeout(timer);
        reject(new Error(`GET /sse: HTTP ${res.statusCode}`));
        req.destroy();
        return;
      }
      let buf = '';
      res.on('error', () => {});
      res.on('data', (chunk) => {
        buf += chunk.toString();
        const m = buf.match(/event:\s*endpoint\r?\ndata:\s*(\S+)/);
        if (m) {
          clearTimeout(timer);
          resolve({ endpoint: m[1], contentType: res.headers['content-type'], destroy: () => req.destroy() });
        }
      });
    });
    req.end();
  });
}

describe('legacy SSE robustness', () => {
  test('GET /sse announces /messages?sessionId=… as its endpoint', async () => {
    const s = await openRawSse();
    try {
      assert.match(String(s.contentType), /^text\/event-stream/);
      const u = new URL(s.endpoint, `${BASE_URL}/sse`);
      assert.equal(u.pathname, '/messages', `endpoint ${s.endpoint}`);
      assert.ok(u.searchParams.get('sessionId'), `endpoint without sessionId: ${s.endpoint}`);
      assert.equal(u.host, HOSTPORT, `endpoint on another host: ${s.endpoint}`);
    } finally {
      s.destroy();
    }
  });

  test('clients that drop GET /sse mid-stream do not break the server', async () => {
    // Several clients open the stream and vanish; one of them after starting a request.
    const dropped = [];
    for (let i = 0; i < 10; i++) dropped.push(await openRawSse());
    const first = dropped[0];
    const postUrl = new URL(first.endpoint, `${BASE_URL}/sse`);
    for (const s of dropped) s.destroy();
    await new Promise((r) => setTimeout(r, 200));

    await assertHealthy();

    // A POST to a session whose stream is gone must be refused cleanly (4xx), not hang or crash.
    // The server may need a moment to notice the disconnect: poll for up to 3 s.
    let stale;
    for (let i = 0; i < 15; i++) {
      stale = await rawRequest({
        method: 'POST',
        path: postUrl.pathname + postUrl.search,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        timeoutMs: 5_000,
      });
      if (stale.status >= 400) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(stale.status >= 400 && stale.status < 500, `POST to a dropped SSE session (after 3 s): ${desc(stale)}`);

    // A new session works end to end with the official client.
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    await withTimeout(client.connect(new SSEClientTransport(new URL(`${BASE_URL}/sse`))), 10_000, 'SSE connect');
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'search_tools'));
    } finally {
      await client.close();
    }
    await assertHealthy();
  });
});
