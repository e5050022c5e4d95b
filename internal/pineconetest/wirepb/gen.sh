#!/bin/sh
# Regenerates wire.pb.go and wire_grpc.pb.go from Pinecone's published data-plane
# protocol, ../spec/db_data_2025-10.proto (the file go-pinecone v5.2.0 was generated
# from). The generated files are committed: building and testing need no protoc;
# only this script does (Debian: apt-get install protobuf-compiler; protoc 3.21.12
# made the committed files).
#
# Two edits make the copy that is compiled, neither of which changes a byte on the wire:
#   - a proto package, pineconewire: go-pinecone registers the same messages under
#     no package ("UpsertRequest", "VectorService"), and protobuf-go panics on two
#     registrations of one name in one binary (a test links both). The server
#     registers the service under Pinecone's own name, "VectorService";
#   - the google.api options (HTTP bindings, field_behavior) are dropped, so that
#     the generated code needs no googleapis import. They are documentation for
#     REST gateways, not part of the gRPC encoding.
# wire_test.go checks that the result still describes, field by field and method
# by method, the protocol go-pinecone speaks.
set -eu
cd "$(dirname "$0")"
PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/src/pineconewire" "$tmp/out"
GOBIN="$tmp/bin" go install "$PROTOC_GEN_GO"
GOBIN="$tmp/bin" go install "$PROTOC_GEN_GO_GRPC"

perl -0pe '
  s/^(syntax = "proto3";)/$1\n\npackage pineconewire;/m;
  s/^import "google\/api\/[a-z_]+\.proto";\n//mg;
  s/\s*\[\s*\(google\.api\.field_behavior\)\s*=\s*\w+\s*\]//g;
  s/\s*option \(google\.api\.http\) = \{(?:[^{}]|\{[^{}]*\})*\};//g;
  s/^option go_package = ".*";/option go_package = "github.com\/agents-mcp\/agents-mcp\/internal\/pineconetest\/wirepb";/m;
' ../spec/db_data_2025-10.proto > "$tmp/src/pineconewire/db_data_2025-10.proto"
if grep -n 'google\.api' "$tmp/src/pineconewire/db_data_2025-10.proto"; then
  echo "gen.sh: google.api options left in the derived proto" >&2
  exit 1
fi

PATH="$tmp/bin:$PATH" protoc \
  --proto_path="$tmp/src" \
  --go_out="$tmp/out" --go_opt=paths=source_relative \
  --go-grpc_out="$tmp/out" --go-grpc_opt=paths=source_relative \
  "$tmp/src/pineconewire/db_data_2025-10.proto"
rm -f ./*.pb.go
mv "$tmp/out/pineconewire/"*.go .
