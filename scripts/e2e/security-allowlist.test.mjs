// Attack: a key whose tool allowlist admits only search_tools reads an
// upstream's resources and gets its prompts, because the allowlist used to cover tools only.
//
// The test starts its own `agents-mcp serve --config` (temp data dir) with a real upstream,
// @modelcontextprotocol/server-everything over stdio, named `everything` (it has resources,
// resource templates and prompts), and four keys:
//   - full:     AGENTS_MCP_API_KEYS, every scope, no allowlist (also reads the audit trail);
//   - narrow:   scopes [mcp], tools ["search_tools"];
//   - one-tool: scopes [mcp], tools ["everything__echo"]: a single tool admits no resource or prompt;
//   - upstream: scopes [mcp], tools ["everything__*"]: the whole upstream.
//
//   1. the full key sees the upstream's resources, templates and prompts, and reads them;
//   2. the narrow and one-tool keys: resources/list, resources/templates/list and prompts/list
//      show none of them; resources/read (a resource, a templated URI) and prompts/get are refused
//      with exactly the error the full key gets for something that does not exist; their
//      allowlisted tool still works;
//   3. the upstream key sees and reads them as the full key does;
//   4. every refusal is in the audit trail (kind mcp_read, outcome denied, "method uri-or-name").

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { BIN, newClient, withTimeout } from './lib/harness.mjs';
import { eventually, startAgents, stop } from './lib/procs.mjs';

const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
const EVERYTHING = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const UP = 'everything';
const PREFIX = `upstream://${UP}/`;
const RESOURCE = `${PREFIX}demo://resource/static/document/features.md`;
const TEMPLATE = `${PREFIX}demo://resource/dynamic/text/{resourceId}`;
const TEMPLATED = `${PREFIX}demo://resource/dynamic/text/7`;
const PROMPT = `${UP}__args-prompt`;
const PROMPT_ARGS = { city: 'Lisbon', state: 'none' };
const MISSING_URI = `${PREFIX}demo://no-such-resource`; // matches no resource and no template
const MISSING_PROMPT = `${UP}__no-such-prompt`;

const secret = (name) => `${name}-${randomBytes(16).toString('hex')}`;
const KEYS = { full: secret('e2e-full'), narrow: secret('e2e-narrow'), 'one-tool': secret('e2e-one-tool'), upstream: secret('e2e-upstream') };
const ALLOWLISTS = { narrow: ['search_tools'], 'one-tool': [`${UP}__echo`], upstream: [`${UP}__*`] };
const principalOf = (key) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;

/** A TS SDK client over /mcp presenting key. */
async function connect(base, key) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await withTimeout(client.connect(transport), 15_000, 'connect over /mcp');
  return {
    client,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

/** Every page of resources/list, resources/templates/list or prompts/list. */
async function listAll(client, kind) {
  const method = { resources: 'listResources', resourceTemplates: 'listResourceTemplates', prompts: 'listPrompts' }[kind];
  const out = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const res = await withTimeout(client[method](cursor ? { cursor } : undefined), 20_000, `${kind} list`);
    out.push(...res[kind]);
    cursor = res.nextCursor;
    if (!cursor) return out;
  }
  throw new Error(`${kind}: more than 100 pages`);
}

/** The error of a request that must fail, as { code, message, data } with name replaced by X. */
async function refusal(promise, what, name) {
  let res;
  try {
    res = await withTimeout(promise, 20_000, what);
  } catch (err) {
    assert.ok(err instanceof McpError, `${what}: not a JSON-RPC error: ${err.stack}`);
    const x = (s) => (s === undefined ? undefined : JSON.stringify(s).replaceAll(name, 'X'));
    return { code: err.code, message: x(err.message), data: x(err.data) };
  }
  assert.fail(`${what} succeeded: ${JSON.stringify(res).slice(0, 300)}`);
}

describe('tool allowlists cover resources, templates and prompts', { skip: !BIN && 'AGENTS_MCP_BIN not set; run through scripts/e2e/run.sh' }, () => {
  const work = mkdtempSync(path.join(tmpdir(), 'agents-mcp-e2e-allowlist-'));
  let agents; // { p, base }
  const sessions = {}; // key name -> { client, close }

  before(
    async () => {
      const config = {
        upstreams: [{ name: UP, transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout: '20s' }],
        auth: {
          api_keys: Object.entries(ALLOWLISTS).map(([name, tools]) => ({ name, key: KEYS[name], scopes: ['mcp'], tools })),
        },
      };
      const configPath = path.join(work, 'config.yaml');
      writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 }); // JSON is YAML
      agents = await startAgents(BIN, configPath, path.join(work, 'data'), { env: { AGENTS_MCP_API_KEYS: KEYS.full }, readyMs: 60_000 });
      for (const name of Object.keys(KEYS)) sessions[name] = await connect(agents.base, KEYS[name]);
      // The upstream's catalog is registered once it is connected.
      await eventually(
        async () => assert.ok((await listAll(sessions.full.client, 'prompts')).some((p) => p.name === PROMPT), 'prompt listed'),
        30_000,
        'the upstream prompts are listed for the full key',
      );
    },
    { timeout: 120_000 },
  );

  after(
    async () => {
      for (const s of Object.values(sessions)) await s.close();
      if (agents) await stop(agents.p, 'SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
    { timeout: 20_000 },
  );

  /** What key name sees and reads of the upstream's resources, templates and prompts. */
  async function seen(name) {
    const { client } = sessions[name];
    const mine = (xs, field) => xs.map((x) => x[field]).filter((v) => v.startsWith(PREFIX) || v.startsWith(`${UP}__`));
    return {
      resources: mine(await listAll(client, 'resources'), 'uri'),
      templates: mine(await listAll(client, 'resourceTemplates'), 'uriTemplate'),
      prompts: mine(await listAll(client, 'prompts'), 'name'),
    };
  }

  async function reads(name) {
    const { client } = sessions[name];
    const read = await withTimeout(client.readResource({ uri: RESOURCE }), 20_000, `${name}: read ${RESOURCE}`);
    assert.equal(read.contents[0].uri, RESOURCE);
    assert.ok(read.contents[0].text.length > 100, `${name}: the document's text`);
    const dyn = await withTimeout(client.readResource({ uri: TEMPLATED }), 20_000, `${name}: read ${TEMPLATED}`);
    assert.match(dyn.contents[0].text, /7/);
    const prompt = await withTimeout(client.getPrompt({ name: PROMPT, arguments: PROMPT_ARGS }), 20_000, `${name}: get ${PROMPT}`);
    assert.match(JSON.stringify(prompt.messages), /Lisbon/);
  }

  test('1. the full key sees and reads the upstream resources, templates and prompts', { timeout: 60_000 }, async () => {
    const s = await seen('full');
    assert.ok(s.resources.includes(RESOURCE), `resources: ${s.resources}`);
    assert.ok(s.templates.includes(TEMPLATE), `templates: ${s.templates}`);
    assert.ok(s.prompts.includes(PROMPT), `prompts: ${s.prompts}`);
    await reads('full');
  });

  for (const name of ['narrow', 'one-tool']) {
    test(`2. the ${name} key (${ALLOWLISTS[name]}) sees none of them and is refused as for what does not exist`, { timeout: 60_000 }, async () => {
      assert.deepEqual(await seen(name), { resources: [], templates: [], prompts: [] });
      // What the full key, which may see everything, gets for things that do not exist.
      const full = sessions.full.client;
      const missingResource = await refusal(full.readResource({ uri: MISSING_URI }), 'full: read a missing resource', MISSING_URI);
      assert.match(missingResource.message, /Resource not found/, JSON.stringify(missingResource)); // -32602 in go-sdk 1.8
      const missingPrompt = await refusal(full.getPrompt({ name: MISSING_PROMPT, arguments: PROMPT_ARGS }), 'full: get a missing prompt', MISSING_PROMPT);
      assert.match(missingPrompt.message, /unknown prompt/, JSON.stringify(missingPrompt));

      const { client } = sessions[name];
      for (const uri of [RESOURCE, TEMPLATED, MISSING_URI]) {
        assert.deepEqual(await refusal(client.readResource({ uri }), `${name}: read ${uri}`, uri), missingResource, `${name}: read ${uri}`);
      }
      for (const prompt of [PROMPT, MISSING_PROMPT]) {
        assert.deepEqual(await refusal(client.getPrompt({ name: prompt, arguments: PROMPT_ARGS }), `${name}: get ${prompt}`, prompt), missingPrompt);
      }
      // Its allowlisted tool still works.
      const tool = name === 'narrow' ? { name: 'search_tools', arguments: { query: 'echo' } } : { name: `${UP}__echo`, arguments: { message: 'hi' } };
      const res = await withTimeout(client.callTool(tool), 20_000, `${name}: call ${tool.name}`);
      assert.notEqual(res.isError, true, JSON.stringify(res).slice(0, 300));
    });
  }

  test(`3. the upstream key (${ALLOWLISTS.upstream}) sees and reads them`, { timeout: 60_000 }, async () => {
    assert.deepEqual(await seen('upstream'), await seen('full'));
    await reads('upstream');
  });

  test('4. the refusals are in the audit trail', { timeout: 30_000 }, async () => {
    for (const name of ['narrow', 'one-tool']) {
      const principal = principalOf(KEYS[name]);
      const q = new URLSearchParams({ kind: 'mcp_read', principal, outcome: 'denied', limit: '100' });
      await eventually(
        async () => {
          const res = await fetch(`${agents.base}/admin/v1/audit?${q}`, { headers: { Authorization: `Bearer ${KEYS.full}` }, signal: AbortSignal.timeout(5000) });
          assert.equal(res.status, 200);
          const targets = (await res.json()).items.map((e) => e.target).sort();
          // What does not exist is refused as well: the allowlist is checked before existence.
          const want = [`prompts/get ${PROMPT}`, `prompts/get ${MISSING_PROMPT}`, `resources/read ${RESOURCE}`, `resources/read ${TEMPLATED}`, `resources/read ${MISSING_URI}`];
          assert.deepEqual(targets, want.sort());
        },
        10_000,
        `audit entries of the ${name} key`,
      );
    }
  });
});
