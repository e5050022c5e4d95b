// Shared helpers for the agents-mcp end-to-end tests.
//
// The tests talk to a real, already running `agents-mcp serve` (its base URL comes from
// AGENTS_MCP_URL) and spawn `agents-mcp stdio` themselves (the binary comes from AGENTS_MCP_BIN).
// scripts/e2e/run.sh sets both; see that script for the full flow.

import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as z from 'zod/v4';

function requiredEnv(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set; run the e2e tests through scripts/e2e/run.sh`);
  }
  return v;
}

/** Base URL of the running server, without a trailing slash, e.g. http://127.0.0.1:41234 */
export const BASE_URL = requiredEnv('AGENTS_MCP_URL').replace(/\/+$/, '');
/** Path of the agents-mcp binary, used to spawn `agents-mcp stdio`. */
export const BIN = process.env.AGENTS_MCP_BIN ?? '';
/** Whether the server under test was started with --conformance-fixtures (default: yes). */
export const FIXTURES = (process.env.AGENTS_MCP_FIXTURES ?? '1') !== '0';

export const BASE = new URL(BASE_URL);
export const HOSTPORT = BASE.host; // e.g. 127.0.0.1:41234

/** The exact input schema of the local search_tools tool (docs/INTERFACE + brief). */
export const SEARCH_TOOLS_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
    scope: { type: 'string', enum: ['all', 'local', 'remote'] },
  },
  required: ['query'],
  additionalProperties: false,
};

/**
 * Result schema of the custom JSON-RPC method tools/validate. It checks the shape; the tests
 * assert the values. Loose objects keep any extra fields the server adds.
 */
export const ValidateResultSchema = z.looseObject({
  tool: z.string(),
  valid: z.boolean(),
  errors: z.array(
    z.looseObject({
      path: z.string(),
      keyword: z.string(),
      message: z.string(),
    }),
  ),
  missing: z.array(z.string()),
});

export const CLIENT_INFO = { name: 'agents-mcp-e2e', version: '1.0.0' };

/**
 * A client built on the official TypeScript SDK. `sampling` / `elicitation` advertise those client
 * capabilities (the tests then register the request handlers).
 */
export function newClient({ sampling = false, elicitation = false } = {}) {
  const capabilities = {};
  if (sampling) capabilities.sampling = {};
  if (elicitation) capabilities.elicitation = {};
  return new Client(CLIENT_INFO, { capabilities });
}

/**
 * The three transports under test. `open()` returns { client, transport, close, stderr() }.
 * `stderr()` returns what the stdio child wrote so far (diagnostics on failure).
 */
export const TRANSPORTS = [
  {
    name: 'legacy SSE (/sse)',
    key: 'sse',
    make: () => ({ transport: new SSEClientTransport(new URL(`${BASE_URL}/sse`)) }),
  },
  {
    name: 'streamable HTTP (/mcp)',
    key: 'streamable',
    make: () => ({ transport: new StreamableHTTPClientTransport(new URL(`${BASE_URL}/mcp`)) }),
  },
  {
    name: 'stdio (agents-mcp stdio)',
    key: 'stdio',
    make: () => {
      if (!BIN) throw new Error('AGENTS_MCP_BIN is not set; run the e2e tests through scripts/e2e/run.sh');
      const dataDir = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-stdio-'));
      const transport = new StdioClientTransport({
        command: BIN,
        args: ['stdio', '--data-dir', dataDir],
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (d) => {
        stderr += d.toString();
        if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
      });
      return {
        transport,
        stderr: () => stderr,
        cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  },
];

export async function open(transportDef, clientOpts = {}) {
  const client = newClient(clientOpts);
  const made = transportDef.make();
  const stderr = made.stderr ?? (() => '');
  // Transport-level errors (unparsable messages on stdout, broken streams, …) are collected so
  // tests can assert that a session saw none.
  const errors = [];
  client.onerror = (err) => errors.push(err);
  try {
    await withTimeout(client.connect(made.transport), 15_000, `connect over ${transportDef.name}`);
  } catch (err) {
    made.cleanup?.();
    const extra = stderr() ? `\n--- child stderr ---\n${stderr().slice(-4000)}` : '';
    err.message = `connect over ${transportDef.name} failed: ${err.message}${extra}`;
    throw err;
  }
  return {
    client,
    transport: made.transport,
    errors,
    stderr,
    close: async () => {
      try {
        if (made.transport instanceof StreamableHTTPClientTransport) {
          await made.transport.terminateSession().catch(() => {});
        }
        await client.close();
      } finally {
        made.cleanup?.();
      }
    },
  };
}

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP helpers (node:http gives full control over Host, body size and early responses).

/**
 * Sends one HTTP request to the server under test and resolves with
 * { status, headers, text, json } (json is undefined when the body is not JSON).
 * If the server answers before the request body is fully written (e.g. 413 on a huge body) the
 * answer is still returned; write errors after the response started are ignored.
 * A GET answered with 200 text/event-stream (or any response with headersOnly) resolves as soon
 * as the headers arrive, with an empty text, and the connection is closed.
 */
export function rawRequest({ method = 'GET', path: p = '/', headers = {}, body, timeoutMs = 15_000, headersOnly = false } = {}) {
  return new Promise((resolve, reject) => {
    let responded = false;
    let settled = false;
    const done = (fn, v) => {
      if (!settled) {
        settled = true;
        fn(v);
      }
    };
    const req = http.request(
      {
        host: BASE.hostname,
        port: BASE.port,
        method,
        path: p,
        headers: { ...headers, ...(body !== undefined ? { 'Content-Length': Buffer.byteLength(body) } : {}) },
        agent: false,
      },
      (res) => {
        responded = true;
        if (headersOnly || (res.statusCode === 200 && String(res.headers['content-type']).startsWith('text/event-stream') && method === 'GET')) {
          // A long-lived event stream: report the status line and headers, then hang up.
          done(resolve, { status: res.statusCode, headers: res.headers, text: '', json: undefined });
          req.destroy();
          return;
        }
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', (e) => done(reject, e));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          done(resolve, { status: res.statusCode, headers: res.headers, text, json: parseBody(res.headers, text) });
        });
      },
    );
    req.setTimeout(timeoutMs, () => {
      req.destroy(new Error(`timed out after ${timeoutMs} ms: ${method} ${p}`));
    });
    req.on('error', (e) => {
      // An early response (e.g. 413) may be followed by EPIPE/ECONNRESET on our upload side.
      if (!responded) done(reject, e);
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Parses a JSON body, or the JSON-RPC messages of an SSE body (returns the last message). */
export function parseBody(headers, text) {
  const ct = String(headers['content-type'] ?? '');
  if (ct.includes('text/event-stream')) {
    const msgs = sseMessages(text);
    return msgs.length ? msgs[msgs.length - 1] : undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** All JSON payloads of `data:` lines in an SSE body. */
export function sseMessages(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (!data) continue;
    try {
      out.push(JSON.parse(data));
    } catch {
      /* not JSON (e.g. the endpoint event of legacy SSE) */
    }
  }
  return out;
}

export const MCP_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

export const PROTOCOL_VERSION = '2025-11-25';

/**
 * Does the streamable-HTTP handshake by hand (initialize + notifications/initialized) and returns
 * { sessionId, headers } where headers are the ones to send on later POSTs to /mcp.
 */
export async function rawInitialize(extraHeaders = {}) {
  const res = await rawRequest({
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS, ...extraHeaders },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    }),
  });
  if (res.status !== 200 || !res.json?.result) {
    throw new Error(`raw initialize failed: HTTP ${res.status} ${res.text.slice(0, 500)}`);
  }
  const sessionId = res.headers['mcp-session-id'];
  const headers = {
    ...MCP_HEADERS,
    ...extraHeaders,
    'MCP-Protocol-Version': res.json.result.protocolVersion ?? PROTOCOL_VERSION,
    ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}),
  };
  const note = await rawRequest({
    method: 'POST',
    path: '/mcp',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (note.status !== 202 && note.status !== 200) {
    throw new Error(`notifications/initialized got HTTP ${note.status}: ${note.text.slice(0, 500)}`);
  }
  return { sessionId, headers, initResult: res.json.result };
}

/** Short description of a raw response, for assertion messages. */
export function describe(res) {
  return `HTTP ${res.status} content-type=${res.headers['content-type']} body=${res.text.slice(0, 600)}`;
}
