// `agents-mcp serve --stateless`: streamable HTTP without sessions, with the official SDK client
// and by hand. run.sh starts a second server for this and sets AGENTS_MCP_STATELESS_URL.

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

import { CLIENT_INFO, MCP_HEADERS, PROTOCOL_VERSION, ValidateResultSchema, parseBody, withTimeout } from './lib/harness.mjs';

const URL_ = process.env.AGENTS_MCP_STATELESS_URL?.replace(/\/+$/, '');

function post(body, headers = {}) {
  const u = new URL(`${URL_}/mcp`);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { ...MCP_HEADERS, 'Content-Length': Buffer.byteLength(data), ...headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text, json: parseBody(res.headers, text) }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(data);
  });
}

describe('stateless streamable HTTP (serve --stateless)', { skip: !URL_ && 'AGENTS_MCP_STATELESS_URL not set' }, () => {
  let client;
  let transport;

  before(async () => {
    client = new Client(CLIENT_INFO, { capabilities: {} });
    transport = new StreamableHTTPClientTransport(new URL(`${URL_}/mcp`));
    await withTimeout(client.connect(transport), 10_000, 'stateless connect');
  });

  after(async () => {
    await client?.close();
  });

  test('initialize works and no session id is issued', () => {
    assert.equal(client.getServerVersion()?.name, 'agents-mcp');
    assert.equal(transport.sessionId, undefined, `stateless server issued session ${transport.sessionId}`);
  });

  test('tools/list, tools/call and tools/validate work without a session', async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'search_tools'), tools.map((t) => t.name).join(', '));
    const res = await client.callTool({ name: 'search_tools', arguments: { query: 'search' } });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.ok(res.structuredContent?.tools?.some((t) => t.name === 'search_tools'), JSON.stringify(res));
    const v = await client.request(
      { method: 'tools/validate', params: { name: 'search_tools', arguments: { scope: 'everywhere' } } },
      ValidateResultSchema,
    );
    assert.equal(v.valid, false, JSON.stringify(v));
    assert.deepEqual(v.missing, ['query'], JSON.stringify(v));
    assert.ok(v.errors.some((e) => e.path === '/scope' && e.keyword === 'enum'), JSON.stringify(v));
  });

  test('an unknown tool is JSON-RPC error -32602', async () => {
    await assert.rejects(
      client.callTool({ name: 'no_such_tool_e2e_7f3a', arguments: {} }),
      (err) => err instanceof McpError && err.code === ErrorCode.InvalidParams,
    );
  });

  test('a bare tools/call with no prior initialize is answered', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'tools', limit: 2 } } },
      { 'MCP-Protocol-Version': PROTOCOL_VERSION },
    );
    assert.equal(res.status, 200, `HTTP ${res.status}: ${res.text.slice(0, 500)}`);
    assert.equal(res.headers['mcp-session-id'], undefined, 'stateless server sent Mcp-Session-Id');
    assert.equal(res.json?.id, 77, res.text.slice(0, 500));
    const found = res.json?.result?.structuredContent?.tools;
    assert.ok(Array.isArray(found) && found.length >= 1 && found.length <= 2, res.text.slice(0, 800));
  });
});
