// A TypeScript SDK client (1.x, 2025-11-25 stateful session) for the
// cluster test (cmd/agents-mcp/cluster_test.go, `make test-cluster`): it
// calls list_tasks every 100 ms for the given seconds through the load
// balancer and prints one JSON line with every call's start, end and
// outcome, so that the test can tell failed calls in flight on the killed
// replica from the others: each call sends its id in X-Cluster-Call, which
// HAProxy logs with the replica it went through.
//
// node cluster-client.mjs <url> <bearer key> <seconds>
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, key, seconds] = process.argv.slice(2);
let callID = ''; // the call under way, sent with each of its requests
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
  fetch: (input, init = {}) => {
    if (!callID) return fetch(input, init);
    const headers = new Headers(init.headers);
    headers.set('X-Cluster-Call', callID);
    return fetch(input, { ...init, headers });
  },
  // No reconnection of a broken stream: a failed call is reported as such.
  reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
});
const client = new Client({ name: 'cluster-ts', version: '1' });
await client.connect(transport);
const calls = [];
const end = Date.now() + Number(seconds) * 1000;
for (let n = 1; Date.now() < end; n++) {
  const start = Date.now();
  const id = `typescript-${n}`;
  callID = id;
  try {
    const res = await client.callTool({ name: 'list_tasks', arguments: {} }, undefined, { timeout: 10000 });
    calls.push({ id, start, end: Date.now(), ok: !res.isError, error: res.isError ? JSON.stringify(res.content) : '' });
  } catch (err) {
    calls.push({ id, start, end: Date.now(), ok: false, error: String(err?.message ?? err) });
  }
  callID = '';
  await new Promise((r) => setTimeout(r, 100));
}
process.stdout.write(JSON.stringify({ sessionId: transport.sessionId, calls }) + '\n');
await client.close();
