// The MCP Inspector CLI 2.x (`@modelcontextprotocol/inspector`, pinned in package.json; Node 22) as a
// real client, in `--strict` mode: its schema lint reports tool schemas that clients with a narrower
// schema dialect (the OpenAPI subset of Gemini function declarations) reject or weaken (bare `true`
// schemas, `type` lists, schemas with no validation keyword, remote `$ref`s), and exits 6 on an
// error. Our own tools must have no finding at all, over every transport the CLI speaks.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

import { BASE_URL } from './lib/harness.mjs';

const STATELESS_URL = process.env.AGENTS_MCP_STATELESS_URL?.replace(/\/+$/, '');
const LAUNCHER = fileURLToPath(
  new URL('./node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url),
);

/** Runs `inspector --cli URL --transport T --method tools/list --strict --format json`. */
function inspect(url, transport) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [LAUNCHER, '--cli', url, '--transport', transport, '--method', 'tools/list', '--strict', '--format', 'json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let json;
      try {
        json = JSON.parse(stdout);
      } catch {
        /* reported below */
      }
      resolve({ code, signal, stdout, stderr, json });
    });
  });
}

function show(r) {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstderr:\n${r.stderr.slice(-4000)}\nstdout:\n${r.stdout.slice(0, 2000)}`;
}

describe('MCP Inspector CLI 2.x --strict', { skip: !STATELESS_URL && 'AGENTS_MCP_STATELESS_URL is not set' }, () => {
  let ours; // the names of our own tools: the stateless server has no conformance fixtures

  test('our tools pass the schema lint (streamable HTTP, stateless server)', async () => {
    const r = await inspect(`${STATELESS_URL}/mcp`, 'http');
    assert.equal(r.code, 0, show(r));
    assert.ok(r.json?.result?.tools, show(r));
    assert.deepEqual(r.json.schemaFindings ?? [], [], show(r));
    assert.doesNotMatch(r.stderr, /Schema portability|Warning: tool|Error: tool/, show(r));
    ours = r.json.result.tools.map((t) => t.name);
    for (const name of ['run_task', 'execute_task', 'resume_task', 'get_task', 'search_tools', 'query_memory']) {
      assert.ok(ours.includes(name), `${name} not listed: ${ours}`);
    }
  });

  // The main server also serves the conformance fixtures, whose schemas the conformance suite
  // dictates: only our own tools are held to the lint there.
  for (const [transport, path] of [
    ['http', '/mcp'],
    ['sse', '/sse'],
  ]) {
    test(`our tools pass the schema lint (${transport}, ${path})`, async () => {
      assert.ok(ours, 'the stateless listing failed');
      const r = await inspect(`${BASE_URL}${path}`, transport);
      assert.ok(r.code === 0 || r.code === 6, show(r));
      const names = (r.json?.result?.tools ?? []).map((t) => t.name);
      for (const name of ours) assert.ok(names.includes(name), `${name} not listed over ${transport}: ${show(r)}`);
      const findings = (r.json.schemaFindings ?? []).filter((f) => ours.includes(f.toolName));
      assert.deepEqual(findings, [], show(r));
    });
  }
});
