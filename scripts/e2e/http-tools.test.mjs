// HTTP APIs as tools end to end: agents-mcp started with an http_tools
// config in front of REAL HTTP servers we did not write, driven by the official TypeScript SDK
// client over streamable HTTP.
//
//   - json-server 0.17.4 (a REST API from a JSON file) behind declarative endpoints (`blog`): the
//     exact input schemas, URL-encoded path parameters, query parameters, a JSON body, response
//     shaping, error statuses as isError results, GET/DELETE annotations, ${VAR} headers;
//   - Prism 5.16.0 (`prism mock`) serving @readme/oas-examples' petstore.json behind an OpenAPI
//     source (`pets`): one tool per operation, its output schema (which the TS client checks
//     structuredContent against), the API key header Prism's security check wants;
//   - a source whose document is unusable (`broken`): a failed source in /readyz, while the others
//     serve.
//
// Every server listens on 127.0.0.1; the documents' own servers are overridden by base_url.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, freePort, readyz, start, startAgents, stop } from './lib/procs.mjs';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
const NODE = process.execPath;
const JSON_SERVER = path.join(E2E_DIR, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');
const PRISM = path.join(E2E_DIR, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
const PETSTORE = path.join(E2E_DIR, 'node_modules', '@readme', 'oas-examples', '3.0', 'json', 'petstore.json');
const BLOG_KEY = 'blog-key-not-to-be-shown';

function text(res) {
  return (res.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** Starts a server on a free port, retrying on another one, and waits until url answers. */
async function startHTTP(name, argsFor, probe) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const p = start(NODE, argsFor(port), { name });
    try {
      await eventually(
        async () => {
          if (p.exitInfo()) throw new Error(`${name} exited: ${p.output().slice(-2000)}`);
          const res = await fetch(`http://127.0.0.1:${port}${probe}`, { signal: AbortSignal.timeout(2000) });
          await res.arrayBuffer();
        },
        60_000,
        `${name} answering on ${port}`,
        200,
      );
      return { p, base: `http://127.0.0.1:${port}` };
    } catch (err) {
      await stop(p, 'SIGKILL');
      if (attempt >= 3) throw err;
    }
  }
}

describe('http_tools with json-server and Prism', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-httptools-'));
  let jsonServer;
  let prism;
  let agents;
  let client;
  let transport;
  const tools = {};

  before(async () => {
    writeFileSync(
      path.join(work, 'db.json'),
      JSON.stringify({
        posts: [
          { id: 1, title: 'hello', author: 'ann' },
          { id: 2, title: 'again', author: 'bob' },
          { id: 3, title: 'more', author: 'ann' },
        ],
      }),
    );
    jsonServer = await startHTTP('json-server', (port) => [JSON_SERVER, '--host', '127.0.0.1', '--port', String(port), path.join(work, 'db.json')], '/posts');
    prism = await startHTTP('prism', (port) => [PRISM, 'mock', '-h', '127.0.0.1', '-p', String(port), PETSTORE], '/store/inventory');
    writeFileSync(path.join(work, 'broken.json'), '{"openapi": "3.0.0", "info": {"title": "broken"');
    writeFileSync(
      path.join(work, 'agents-mcp.yaml'),
      `
http_tools:
  - name: blog
    base_url: ${jsonServer.base}
    headers: { X-Api-Key: "\${BLOG_KEY}" }
    timeout: 10s
    endpoints:
      - { name: list_posts, description: List blog posts, method: GET, path: /posts,
          query: { author: author name, title: exact title } }
      - { name: get_post, description: One post by id, method: GET, path: '/posts/{id}' }
      - name: create_post
        description: Publish a new blog post
        method: POST
        path: /posts
        body: { title: { type: string }, author: { type: string } }
        required: [title]
        response: { select: "title" }
      - { name: authors, description: The authors who posted, method: GET, path: /posts,
          response: { pluck: author, unique: true } }
      - { name: delete_post, description: Delete a post, method: DELETE, path: '/posts/{id}' }
  - name: pets
    openapi: ${PETSTORE}
    base_url: ${prism.base}
    headers: { api_key: "prism-checks-that-a-key-is-sent", Authorization: "Bearer prism-checks-the-scheme" }
    exclude: [uploadFile]
  - name: broken
    openapi: ./broken.json
`,
    );
    agents = await startAgents(BIN, path.join(work, 'agents-mcp.yaml'), path.join(work, 'data'), { env: { BLOG_KEY } });
    client = newClient();
    transport = new StreamableHTTPClientTransport(new URL(`${agents.base}/mcp`));
    await withTimeout(client.connect(transport), 15_000, 'connect to agents-mcp');
    for (const t of (await client.listTools()).tools) tools[t.name] = t;
  });

  after(async () => {
    await transport?.terminateSession().catch(() => {});
    await client?.close().catch(() => {});
    const output = agents?.p.output() ?? '';
    await stop(agents?.p);
    await stop(jsonServer?.p);
    await stop(prism?.p);
    rmSync(work, { recursive: true, force: true });
    assert.ok(!output.includes(BLOG_KEY), 'agents-mcp logged the blog key');
  });

  const call = (name, args) => withTimeout(client.callTool({ name, arguments: args }), 30_000, `call ${name}`);

  test('declarative endpoints get exact schemas and annotations', () => {
    for (const n of ['list_posts', 'get_post', 'create_post', 'authors', 'delete_post']) assert.ok(tools[`blog__${n}`], `blog__${n} listed`);
    assert.deepEqual(tools.blog__get_post.inputSchema, {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, description: 'The {id} of the path.', not: { type: 'string', pattern: '^(\\.|%(25)*2[eE]){1,2}$' } },
      },
      required: ['id'],
      additionalProperties: false,
    });
    assert.deepEqual(tools.blog__create_post.inputSchema.required, ['title']);
    assert.equal(tools.blog__list_posts.annotations.readOnlyHint, true);
    assert.equal(tools.blog__delete_post.annotations.destructiveHint, true);
    assert.notEqual(tools.blog__create_post.annotations.readOnlyHint, true);
  });

  test('json-server answers through the tools', async () => {
    let res = await call('blog__list_posts', { author: 'ann' });
    assert.ok(!res.isError, text(res));
    assert.deepEqual(
      res.structuredContent.result.map((p) => p.id),
      [1, 3],
    );
    assert.deepEqual(JSON.parse(text(res)), res.structuredContent.result);

    res = await call('blog__get_post', { id: '2' });
    assert.deepEqual(res.structuredContent, { id: 2, title: 'again', author: 'bob' });

    res = await call('blog__authors', {});
    assert.deepEqual(res.structuredContent, { result: ['ann', 'bob'] });

    res = await call('blog__create_post', { title: 'from MCP', author: 'cy' });
    assert.ok(!res.isError, text(res));
    assert.deepEqual(res.structuredContent, { result: 'from MCP' });
    const direct = await (await fetch(`${jsonServer.base}/posts?author=cy`)).json();
    assert.equal(direct.length, 1);
    assert.equal(direct[0].title, 'from MCP');

    res = await call('blog__delete_post', { id: String(direct[0].id) });
    assert.ok(!res.isError, text(res));
    assert.equal((await fetch(`${jsonServer.base}/posts/${direct[0].id}`)).status, 404);
  });

  test('a path value stays one segment and an error status is an isError result', async () => {
    // Sent unescaped, "1?title=x" would be GET /posts/1 (post 1) and "../posts" GET /posts (the
    // list, once a proxy or server normalises the path); as one segment each is a post id that
    // json-server does not have.
    for (const id of ['1?title=x', '../posts', '1#frag']) {
      const res = await call('blog__get_post', { id });
      assert.equal(res.isError, true, `${id}: ${text(res)}`);
      assert.match(text(res), /^HTTP 404 Not Found/);
    }
    const missing = await call('blog__get_post', { id: '999' });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /^HTTP 404/);
  });

  test('the router validates arguments against the exact schema', async () => {
    for (const bad of [{}, { id: '' }, { id: '1', extra: true }]) {
      const res = await call('blog__get_post', bad).catch((err) => ({ isError: true, content: [{ type: 'text', text: String(err) }] }));
      assert.equal(res.isError, true, `get_post(${JSON.stringify(bad)}) accepted: ${text(res)}`);
    }
  });

  test('the OpenAPI document becomes one tool per operation', () => {
    const ops = JSON.parse(readFileSync(PETSTORE, 'utf8'));
    const ids = [];
    for (const item of Object.values(ops.paths)) for (const op of Object.values(item)) if (op.operationId) ids.push(op.operationId);
    const want = ids.filter((id) => id !== 'uploadFile').map((id) => `pets__${id}`).sort();
    const got = Object.keys(tools).filter((n) => n.startsWith('pets__')).sort();
    assert.deepEqual(got, want);
    assert.deepEqual(tools.pets__getPetById.inputSchema.required, ['petId']);
    assert.equal(tools.pets__getPetById.inputSchema.properties.petId.type, 'integer');
    assert.equal(tools.pets__getPetById.outputSchema.type, 'object');
    assert.equal(tools.pets__findPetsByStatus.outputSchema.properties.result.type, 'array');
    assert.equal(tools.pets__deletePet.annotations.destructiveHint, true);
    assert.equal(tools.pets__getPetById.annotations.readOnlyHint, true);
  });

  test('Prism answers through the OpenAPI tools, valid against their output schemas', async () => {
    // The TS SDK client checks structuredContent against the output schema: a mismatch throws.
    let res = await call('pets__getPetById', { petId: 12 });
    assert.ok(!res.isError, text(res));
    assert.equal(typeof res.structuredContent.name, 'string');

    res = await call('pets__findPetsByStatus', { status: ['available'] });
    assert.ok(!res.isError, text(res));
    assert.ok(Array.isArray(res.structuredContent.result));

    res = await call('pets__getInventory', {});
    assert.ok(!res.isError, text(res));

    res = await call('pets__placeOrder', { body: { petId: 12, quantity: 1, status: 'placed' } });
    assert.ok(!res.isError, text(res));
    assert.equal(typeof res.structuredContent.id, 'number');

    // addPet documents only a 405 answer, which Prism gives: an error status.
    res = await call('pets__addPet', { body: { name: 'rex', photoUrls: ['http://127.0.0.1/x.png'] } });
    assert.equal(res.isError, true, text(res));
    assert.match(text(res), /^HTTP 405/);

    // Prism validates the request against the document: a body without the required fields is
    // refused by the router before it gets there.
    res = await call('pets__addPet', { body: { name: 'rex' } }).catch((err) => ({ isError: true, content: [{ type: 'text', text: String(err) }] }));
    assert.equal(res.isError, true);

    // deletePet documents only 400 and 404 answers: Prism's answer is an error status.
    res = await call('pets__deletePet', { petId: 12 });
    assert.equal(res.isError, true, text(res));
    assert.match(text(res), /^HTTP 4\d\d/);
  });

  test('/readyz lists every source, the unusable one with its reason', async () => {
    const { status, body } = await readyz(agents.base);
    assert.equal(status, 200);
    const byName = Object.fromEntries(body.checks.http_tools.detail.map((s) => [s.name, s]));
    assert.equal(byName.blog.state, 'ready');
    assert.equal(byName.blog.tools, 5);
    assert.equal(byName.pets.state, 'ready');
    assert.equal(byName.broken.state, 'failed');
    assert.match(byName.broken.reason, /could not be parsed/);
    assert.ok(!JSON.stringify(body).includes(BLOG_KEY));
  });
});
