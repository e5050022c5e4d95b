#!/usr/bin/env bash
# `make demo`: agents-mcp with real upstream MCP servers from npm and a few example tasks, so that
# the console (http://127.0.0.1:8080/admin/), the learnings and search_tools have something in them.
#
#  - everything:  @modelcontextprotocol/server-everything over streamable HTTP (a free loopback port);
#  - memory:      @modelcontextprotocol/server-memory over stdio (its graph in the demo folder);
#  - filesystem:  @modelcontextprotocol/server-filesystem over stdio, on the demo folder's files/;
#  - blog:        an HTTP tool source (http_tools) over json-server, a REST API on the demo's db.json.
# The versions are the ones pinned in scripts/e2e/package-lock.json (`npm ci` there if missing).
# Everything lives in a temp folder (DEMO_DIR to choose it; kept after exit, so a second run with
# the same DEMO_DIR starts where the first stopped). Ctrl-C stops it all.
#
# Environment: DEMO_ADDR (default 127.0.0.1:8080), DEMO_DIR, AGENTS_MCP_* as for `make run`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
E2E="$ROOT/scripts/e2e"
BIN="$ROOT/bin/agents-mcp"
ADDR=${DEMO_ADDR:-127.0.0.1:8080}
DIR=${DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/agents-mcp-demo.XXXXXX")}
mkdir -p "$DIR/files" "$DIR/data"

log() { printf 'demo: %s\n' "$*" >&2; }

if [[ ! -e "$E2E/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ||
  ! -e "$E2E/node_modules/@modelcontextprotocol/server-memory/dist/index.js" ||
  ! -e "$E2E/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ||
  ! -e "$E2E/node_modules/json-server/lib/cli/bin.js" ]]; then
  log "installing the pinned MCP servers: npm ci in scripts/e2e"
  (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error)
fi
[[ -x "$BIN" ]] || { log "missing $BIN: run make build"; exit 1; }

# A few files for the filesystem server to read.
[[ -e "$DIR/files/README.txt" ]] || cat >"$DIR/files/README.txt" <<'TXT'
These files belong to the agents-mcp demo. The filesystem upstream serves this folder only.
TXT
[[ -e "$DIR/files/todo.md" ]] || printf '# To do\n\n- try search_tools\n- open the console at /admin/\n- run a task\n' >"$DIR/files/todo.md"

[[ -e "$DIR/db.json" ]] || cat >"$DIR/db.json" <<'JSON'
{
  "posts": [
    { "id": 1, "title": "Routing tools across MCP servers", "author": "ada" },
    { "id": 2, "title": "What the agents learned this week", "author": "grace" },
    { "id": 3, "title": "Plans as pictures", "author": "ada" }
  ]
}
JSON

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{const p=s.address().port;s.close(()=>console.log(p))})'
}

PIDS=()
cleanup() {
  local rc=$? pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  log "stopped; the demo's data stays in $DIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

EVERYTHING_PORT=$(free_port)
PORT=$EVERYTHING_PORT node "$E2E/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
  >"$DIR/everything.log" 2>&1 &
PIDS+=($!)
# Started before agents-mcp, so that it connects at once (it would retry, but log an error first).
for ((i = 0; i < 150; i++)); do
  grep -q 'listening on port' "$DIR/everything.log" 2>/dev/null && break
  sleep 0.2
done

BLOG_PORT=$(free_port)
node "$E2E/node_modules/json-server/lib/cli/bin.js" --host 127.0.0.1 --port "$BLOG_PORT" "$DIR/db.json" \
  >"$DIR/json-server.log" 2>&1 &
PIDS+=($!)
for ((i = 0; i < 150; i++)); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$BLOG_PORT/posts" || true)" == 200 ]] && break
  sleep 0.2
done

NODE=$(command -v node)
cat >"$DIR/config.yaml" <<YAML
# Written by scripts/demo/run.sh.
upstreams:
  - name: everything
    transport: streamable
    url: http://127.0.0.1:$EVERYTHING_PORT/mcp
    max_backoff: 2s
  - name: memory
    transport: stdio
    command: $NODE
    args: ["$E2E/node_modules/@modelcontextprotocol/server-memory/dist/index.js"]
    env:
      MEMORY_FILE_PATH: $DIR/memory.jsonl
  - name: filesystem
    transport: stdio
    command: $NODE
    args: ["$E2E/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "$DIR/files"]
http_tools:
  - name: blog
    base_url: http://127.0.0.1:$BLOG_PORT
    endpoints:
      - { name: list_posts, description: List blog posts, method: GET, path: /posts, query: { author: author name } }
      - { name: get_post, description: One blog post by id, method: GET, path: '/posts/{id}' }
      - name: create_post
        description: Publish a new blog post
        method: POST
        path: /posts
        body: { title: { type: string }, author: { type: string } }
        required: [title]
YAML

log "agents-mcp serve --addr $ADDR --config $DIR/config.yaml --data-dir $DIR/data"
"$BIN" serve --addr "$ADDR" --config "$DIR/config.yaml" --data-dir "$DIR/data" 2>>"$DIR/agents-mcp.log" &
PIDS+=($!)
SERVER_PID=$!

BASE="http://$ADDR"
for ((i = 0; i < 300; i++)); do
  kill -0 "$SERVER_PID" 2>/dev/null || { log "agents-mcp exited; the end of its log:"; tail -n 20 "$DIR/agents-mcp.log" >&2; exit 1; }
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$BASE/readyz" || true)" == 200 ]] && break
  sleep 0.2
done

log "running the example tasks"
node "$E2E/lib/demo-seed.mjs" "$BASE" || log "some example tasks did not run (see above); the server keeps serving"

cat >&2 <<MSG

demo: ready.
  console:  $BASE/admin/   (no key needed: the demo runs without credentials, on loopback only)
  MCP:      $BASE/mcp      (streamable HTTP), $BASE/sse (legacy SSE)
  logs:     $DIR/agents-mcp.log
Ctrl-C stops the demo.
MSG
wait "$SERVER_PID"
