// A small MCP server built on the official TypeScript SDK, served over streamable HTTP on a free
// loopback port inside the test process, for tests that need tools of their own design (a tool
// that always fails, an alternative worded differently) and want to see every call it served.
//
// It is stateless: each POST gets a fresh SDK Server and transport, as the SDK's stateless example
// does, and GET/DELETE (the standalone stream and session end, which a stateless server has no
// use for) are answered 405, which clients take as "no stream".

import http from 'node:http';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * Starts the server. Each tool is { name, description, params: { <name>: <description> } (every
 * param a required string), fail?: <isError text> }. A tool with `fail` answers every call with an
 * isError result of that text; the others answer { tool, args } as structured content (and as its
 * JSON text). Returns { url, calls, close }: `calls` lists every tools/call served, in order, as
 * { tool, args, failed }.
 */
export async function startToolsUpstream({ name = 'tools-upstream', tools }) {
  const calls = [];
  const listed = tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(Object.entries(t.params).map(([p, d]) => [p, { type: 'string', description: d }])),
      required: Object.keys(t.params),
    },
    annotations: { readOnlyHint: true },
  }));
  const newServer = () => {
    const s = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
    s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    s.setRequestHandler(CallToolRequestSchema, async (req) => {
      const tool = tools.find((t) => t.name === req.params.name);
      const args = req.params.arguments ?? {};
      if (!tool) return { isError: true, content: [{ type: 'text', text: `unknown tool ${req.params.name}` }] };
      calls.push({ tool: tool.name, args, failed: Boolean(tool.fail) });
      if (tool.fail) return { isError: true, content: [{ type: 'text', text: tool.fail }] };
      const out = { tool: tool.name, args };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    });
    return s;
  };

  const httpServer = http.createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
      return;
    }
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: String(err) }, id: null }));
    }
  });
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(0, '127.0.0.1', resolve);
  });
  const { port } = httpServer.address();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: () =>
      new Promise((resolve) => {
        httpServer.closeAllConnections();
        httpServer.close(() => resolve());
      }),
  };
}
