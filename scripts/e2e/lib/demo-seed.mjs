// The example tasks of `make demo` (scripts/demo/run.sh): a TypeScript SDK client runs a few
// requests through run_task on the demo server, with the server's own planner, so that the console,
// the learnings and search_tools have real tasks, plans and outcomes to show. A task that pauses
// (it needs an input or a confirmation) is left paused, for the console's Tasks page to answer.
//
// Usage: node demo-seed.mjs http://127.0.0.1:8080

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const base = process.argv[2] || 'http://127.0.0.1:8080';
const REQUESTS = [
  'Echo the words hello from the agents-mcp demo',
  'Add the numbers 7 and 35',
  'Add the numbers 12 and 30',
  'Create an entity named demo-project of type project in the knowledge graph',
  'List the allowed directories of the file system',
  'Read the file todo.md',
  'List the blog posts by the author ada',
  'Store an insight: the filesystem upstream serves only the demo folder',
];

async function waitForTools(client, names, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const listed = new Set();
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      page.tools.forEach((t) => listed.add(t.name));
      cursor = page.nextCursor;
    } while (cursor);
    const missing = names.filter((n) => !listed.has(n));
    if (!missing.length) return;
    if (Date.now() > deadline) throw new Error(`upstream tools not listed yet: ${missing.join(', ')}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const client = new Client({ name: 'agents-mcp-demo', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
try {
  await waitForTools(client, ['everything__echo', 'memory__create_entities', 'filesystem__read_text_file', 'blog__list_posts'], 60_000);
  for (const request of REQUESTS) {
    const res = await client.request({ method: 'tools/call', params: { name: 'run_task', arguments: { request } } }, CallToolResultSchema, { timeout: 120_000 });
    const task = res.structuredContent?.task;
    const steps = (task?.steps ?? []).map((s) => `${s.stepId}:${s.status}`).join(' ');
    const what = res.isError ? `error: ${res.content?.[0]?.text ?? ''}`.slice(0, 200) : `${task?.status} (${steps})`;
    console.error(`demo:   ${request}  →  ${what}${task ? `  ${base}/admin/#/tasks/${task.id}` : ''}`);
  }
} finally {
  await client.close();
}
