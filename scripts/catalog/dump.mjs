#!/usr/bin/env node
// dump.mjs starts real MCP servers from npm over stdio with the official
// TypeScript SDK client and writes each server's tools/list result to
// router/toolsearch/testdata/catalog/<server>.json, with tool names prefixed the way the
// gateway exposes them (<server>__<tool>). The router's retrieval-quality test
// and BenchmarkSearchTools read these files.
//
// Run by hand, not in CI:
//
//	cd scripts/catalog
//	PUPPETEER_SKIP_DOWNLOAD=1 npm ci
//	node dump.mjs            # every server
//	node dump.mjs github     # only the named ones
//
// Every server is given dummy credentials: listing tools needs no network,
// and no tool is ever called. The Redis server insists on a connection before
// it serves, so it is pointed at a stub that answers +OK on 127.0.0.1.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..", "..", "router", "toolsearch", "testdata", "catalog");
const require = createRequire(import.meta.url);
const scratch = mkdtempSync(join(tmpdir(), "catalog-"));

// servers: the gateway name of each upstream, its npm package (the bin is
// read from its package.json), its arguments and environment. {redis} is
// replaced by the stub's URL.
const servers = [
  { name: "everything", pkg: "@modelcontextprotocol/server-everything", args: ["stdio"] },
  { name: "filesystem", pkg: "@modelcontextprotocol/server-filesystem", args: [scratch] },
  { name: "memory", pkg: "@modelcontextprotocol/server-memory", env: { MEMORY_FILE_PATH: join(scratch, "memory.jsonl") } },
  { name: "github", pkg: "@modelcontextprotocol/server-github", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  { name: "sequential-thinking", pkg: "@modelcontextprotocol/server-sequential-thinking" },
  { name: "slack", pkg: "@modelcontextprotocol/server-slack", env: { SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T00000000" } },
  { name: "brave-search", pkg: "@modelcontextprotocol/server-brave-search", env: { BRAVE_API_KEY: "dummy" } },
  { name: "gitlab", pkg: "@modelcontextprotocol/server-gitlab", env: { GITLAB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  { name: "google-maps", pkg: "@modelcontextprotocol/server-google-maps", env: { GOOGLE_MAPS_API_KEY: "dummy" } },
  { name: "postgres", pkg: "@modelcontextprotocol/server-postgres", args: ["postgresql://user:pass@127.0.0.1:1/db"] },
  { name: "redis", pkg: "@modelcontextprotocol/server-redis", args: ["{redis}"] },
  { name: "puppeteer", pkg: "@modelcontextprotocol/server-puppeteer", env: { PUPPETEER_SKIP_DOWNLOAD: "1" } },
  { name: "everart", pkg: "@modelcontextprotocol/server-everart", env: { EVERART_API_KEY: "dummy" } },
  {
    name: "aws-kb-retrieval",
    pkg: "@modelcontextprotocol/server-aws-kb-retrieval",
    env: { AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "dummy", AWS_SECRET_ACCESS_KEY: "dummy" },
  },
  { name: "playwright", pkg: "@playwright/mcp", args: ["--headless", "--isolated"] },
  { name: "notion", pkg: "@notionhq/notion-mcp-server", env: { NOTION_TOKEN: "ntn_dummy" } },
  { name: "context7", pkg: "@upstash/context7-mcp" },
  { name: "kubernetes", pkg: "mcp-server-kubernetes", env: { KUBECONFIG: join(scratch, "kubeconfig") } },
];

// binOf resolves a package's single (or first) bin script.
function binOf(pkg) {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin)[0];
  return { path: join(dirname(manifestPath), bin), version: manifest.version };
}

// startRedisStub answers every RESP command with +OK, which is all the Redis
// server's client needs to connect.
async function startRedisStub() {
  const srv = createServer((sock) => {
    sock.on("data", (buf) => {
      const n = (buf.toString().match(/^\*\d+\r\n/gm) || ["*"]).length;
      sock.write("+OK\r\n".repeat(n));
    });
    sock.on("error", () => {});
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  return srv;
}

async function dump(server, redisURL) {
  const { path, version } = binOf(server.pkg);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path, ...(server.args || []).map((a) => a.replace("{redis}", redisURL))],
    env: { PATH: process.env.PATH, HOME: scratch, NODE_NO_WARNINGS: "1", ...server.env },
    cwd: scratch,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "agents-mcp-catalog-dump", version: "0.0.0" });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: 60_000 });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    for (const t of tools) t.name = `${server.name}__${t.name}`;
    const out = { server: server.name, package: server.pkg, version, tools };
    writeFileSync(join(outDir, `${server.name}.json`), JSON.stringify(out, null, 2) + "\n");
    console.log(`${server.name}: ${tools.length} tools (${server.pkg}@${version})`);
    return tools.length;
  } catch (err) {
    console.error(`${server.name}: ${err.message}\n${stderr.slice(-2000)}`);
    return -1;
  } finally {
    await client.close().catch(() => {});
  }
}

const only = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });
// A kubeconfig whose only cluster is an unused loopback port: the Kubernetes
// server wants an active context to start, never a reachable cluster.
writeFileSync(
  join(scratch, "kubeconfig"),
  [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{name: dummy, cluster: {server: 'https://127.0.0.1:1'}}]",
    "users: [{name: dummy, user: {token: dummy}}]",
    "contexts: [{name: dummy, context: {cluster: dummy, user: dummy}}]",
    "current-context: dummy",
    "",
  ].join("\n"),
);
const redis = await startRedisStub();
const redisURL = `redis://127.0.0.1:${redis.address().port}`;
let total = 0;
let failed = 0;
for (const s of servers) {
  if (only.length && !only.includes(s.name)) continue;
  const n = await dump(s, redisURL);
  if (n < 0) failed++;
  else total += n;
}
redis.close();
rmSync(scratch, { recursive: true, force: true });
console.log(`${total} tools written to ${outDir}${failed ? `; ${failed} server(s) failed` : ""}`);
process.exitCode = failed ? 1 : 0;
