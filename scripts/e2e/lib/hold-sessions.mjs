// Opens live client sessions and keeps them open until killed, so run.sh can check that the
// server still shuts down promptly on SIGTERM while clients hold streams open (as real agent
// clients do). Prints "ready" once every session is initialized.
//
// Usage: node lib/hold-sessions.mjs BASE_URL

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const base = (process.argv[2] ?? '').replace(/\/+$/, '');
if (!base) {
  console.error('usage: hold-sessions.mjs BASE_URL');
  process.exit(2);
}

const info = { name: 'agents-mcp-e2e-holder', version: '1.0.0' };
const sse = new Client(info, { capabilities: {} });
const streamable = new Client(info, { capabilities: {} });
sse.onerror = () => {};
streamable.onerror = () => {};
await sse.connect(new SSEClientTransport(new URL(`${base}/sse`)));
await streamable.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
await sse.listTools();
await streamable.listTools();
// Give the streamable client a moment to open its standalone GET stream.
await new Promise((r) => setTimeout(r, 300));
console.log('ready');
setInterval(() => {}, 60_000);
