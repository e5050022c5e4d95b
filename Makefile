# agents-mcp — `make run` serves on the embedded defaults, `make test` runs every check and test.
GO       ?= go
BIN      := bin/agents-mcp
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
# Fuzz budgets are execution counts, not durations: with a duration, Go 1.26's
# fuzz coordinator can report a spurious "context deadline exceeded" at the
# deadline on a loaded machine (golang/go#75804, fixed in Go 1.27). Each count
# is roughly 10-15 s of fuzzing here.
FUZZ_GUARD    ?= 120000x
FUZZ_VALIDATE ?= 120000x
FUZZ_SSE      ?= 60000x
FUZZ_FASTPATH ?= 60000x
FUZZ_TOOLCALL ?= 60000x
FUZZ_REFS     ?= 50000x
FUZZ_NUMBERS  ?= 30000x
FUZZ_SUBJECT  ?= 100000x
ARGS     ?=
# staticcheck runs at this version through the module proxy (go run
# pkg@version), so a fresh machine needs only Go; checks in staticcheck.conf.
STATICCHECK_VERSION := v0.8.2
# The gofmt of the Go that builds, even when GO names a toolchain off PATH.
GOFMT    ?= $(shell $(GO) env GOROOT)/bin/gofmt

.PHONY: all build run demo test test-cluster test-unit lint compose-check test-go test-measures e2e-deps fuzz e2e bench bench-relay bench-relay-inproc bench-soak bench-vectors bench-vectors-scale bench-learning bench-product vet

all: build

# A cold build compiles every dependency and prints nothing while it does:
# say so, so that the silence does not look like a hang.
build:
	@test -x $(BIN) || echo "building $(BIN): a first build compiles every dependency, about two minutes"
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/agents-mcp

# Serves on 127.0.0.1:8080 with the embedded defaults (no MongoDB, Pinecone or
# API keys). Extra flags: make run ARGS="--log-level debug".
run: build
	./$(BIN) serve $(ARGS)

# `make run` with real upstream MCP servers from npm (server-everything over
# streamable HTTP, server-memory and server-filesystem over stdio on a temp
# folder), an HTTP tool source over json-server, and a few example tasks run
# at start, so that the console at
# http://127.0.0.1:8080/admin/ has something to show. Needs node and npm.
demo: build
	scripts/demo/run.sh

# Every check and test: lint, Go unit tests under the race detector, the
# measurements that go test -race skips (test-measures, without race), a
# bounded run of each fuzz target, then the e2e suite against the built
# binary (official MCP conformance suite + TypeScript SDK client over SSE,
# streamable HTTP, stdio), and the replicas behind HAProxy (test-cluster).
# Each stage reports how long it took, so that a slow one shows in CI's log.
# scripts/teststages/run.sh runs the steps of TEST_STAGES in order; stages
# joined by commas run side by side, `a+b` runs a then b in one lane. On two
# cores, work that waits overlaps work that computes: lint (CPU) runs beside
# the npm install and the documents' fetch (network), then beside the race
# tests, which leave a fifth of the CPU idle while servers start and
# timeouts run; e2e (servers, node, a browser) overlaps test-measures
# (CPU). The CPU-bound stage beside others runs at nice 10
# (TEST_NICE_STAGES), so that the tests it overlaps, and their timing
# checks, get the CPU first. test-cluster (replicas, a SIGKILL and a 150 s
# soak) runs alone: its checks of what a kill does to calls in flight are
# the most sensitive to timing. Fuzzing keeps both cores busy for its
# fixed number of runs, so it runs alone last. Side by side, each line is
# prefixed with its stage's name.
TEST_STAGES = e2e-deps+test-go,lint compose-check e2e,test-measures test-cluster fuzz
TEST_NICE_STAGES = lint test-measures
test:
	@TEST_NICE_STAGES='$(TEST_NICE_STAGES)' MAKE='$(MAKE)' scripts/teststages/run.sh $(TEST_STAGES)

# The fast loop: the Go tests without the race detector, fuzzing, e2e or
# lint; packages that did not change answer from Go's test cache.
test-unit:
	$(GO) test ./...

# Fails on any of: a file gofmt would change, go vet, staticcheck, or a
# go.mod/go.sum that go mod tidy would change.
# gofmt gets the files by name, found outside node_modules and npm's staging
# directory: make test runs the npm install (scripts/e2e/install.sh) side by
# side with lint, and a walk fails on a path that npm removes under it. The
# go commands skip the staging directory by its leading dot; gofmt would not.
lint:
	@unformatted=$$(find . \( -name node_modules -o -name .npm-install \) -prune -o -type f -name '*.go' -print | xargs $(GOFMT) -l) || exit 1; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) mod tidy -diff

# The compose files must stay valid: docker-compose (Debian's, which .ci/run
# installs) checks them offline, without a Docker engine.
compose-check:
	@if command -v docker-compose >/dev/null 2>&1; then \
		AGENTS_MCP_API_KEYS=ci-check docker-compose -f docker-compose.yml config -q && \
		AGENTS_MCP_API_KEYS=ci-check docker-compose -f docker-compose.yml --env-file deployments/compose/pinecone-local.env config -q && \
		echo "compose files valid"; \
	else echo "compose-check skipped: docker-compose is not installed (apt-get install docker-compose)"; fi

vet:
	$(GO) vet ./...

# Some Go tests run npm packages pinned in scripts/e2e (an OAuth server, real
# OpenAPI documents, server-everything): install them first, so that `make
# test` needs nothing run before it on a fresh clone.
# The race detector slows the agents and cmd packages several times over: on
# a loaded two-core machine go test's default 10-minute limit per package was
# reached, so the limit is 20 minutes.
test-go: e2e-deps
	$(GO) test -race -count=1 -timeout 20m ./...

# The measurements that are tests too, run without the race detector, which
# slows them some tenfold and which go test -race therefore skips: the
# learning benchmark (bench-learning), the retrieval measures (search
# quality on the real catalog, recall on the paraphrase sets, families joined
# by meaning) and the vector index's recall on real text. Each fails when its
# figure falls below its floor.
test-measures: bench-learning
	$(GO) test -count=1 -run '^(TestSearchQuality|TestSemanticRetrieval|TestFamilyJoinsByMeaning|TestDiscoveryOnALargeCatalog|TestHNSWRecallRealText)$$' ./router/toolsearch/ ./agents/ ./memory/vectors/

e2e-deps:
	scripts/e2e/install.sh
	scripts/openapicatalog/fetch.sh

# Three replicas with shared sessions (sessions.shared) on FerretDB behind
# Debian's HAProxy, round-robin without affinity, driven for 60 s by the
# TypeScript SDK, mcp-go and 2026-07-28 stateless calls, one replica killed
# with SIGKILL half-way (docs/scaling.md); and, side by side with it, since
# both mostly wait, the real clients (mcp-go and go-sdk over SSE, streamable
# HTTP and stdio) connected for 150 s (TestRealClientsStayConnected). About
# 160 s; needs Debian's haproxy (fails with the apt-get line to run when it is
# missing; .ci/run installs it).
test-cluster: e2e-deps
	AGENTS_MCP_TEST_CLUSTER=1 AGENTS_MCP_TEST_CLIENTS=1 $(GO) test -count=1 -timeout 8m -run '^(TestClusterBehindHAProxy|TestRealClientsStayConnected)$$' ./cmd/agents-mcp/

# The seed corpus lives in testdata/fuzz and in the f.Add calls of the fuzz
# tests; `go test` alone also replays it.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzJSONRPCGuard$$' -fuzztime $(FUZZ_GUARD) ./router/transport/mcphttp/
	$(GO) test -run '^$$' -fuzz '^FuzzValidateArguments$$' -fuzztime $(FUZZ_VALIDATE) ./router/validation/
	$(GO) test -run '^$$' -fuzz '^FuzzPassesPlainly$$' -fuzztime $(FUZZ_FASTPATH) ./router/transport/mcphttp/
	$(GO) test -run '^$$' -fuzz '^FuzzParseFastToolCall$$' -fuzztime $(FUZZ_TOOLCALL) ./router/transport/mcphttp/
	$(GO) test -run '^$$' -fuzz '^FuzzNumbersInArguments$$' -fuzztime $(FUZZ_NUMBERS) ./router/validation/
	$(GO) test -run '^$$' -fuzz '^FuzzPOST$$' -fuzztime $(FUZZ_SSE) ./router/transport/sse/
	$(GO) test -run '^$$' -fuzz '^FuzzResolveRefs$$' -fuzztime $(FUZZ_REFS) ./agents/planlang/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckSubject$$' -fuzztime $(FUZZ_SUBJECT) ./api/auth/

e2e:
	scripts/e2e/run.sh

# Every benchmark but the remote package's (-count 5, bench.out), then
# bench-relay-inproc (the remote package's) and bench-relay. The vector index's
# real-text benchmark runs at VECTORS_BENCH_REAL_N (below) here too; building its
# two 100k indexes takes a few minutes, hence the timeout above go test's default
# 10 minutes.
bench:
	VECTORS_BENCH_REAL_N=$(VECTORS_BENCH_REAL_N) $(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m $$($(GO) list ./... | grep -v '/remote$$') | tee bench.out
	$(MAKE) --no-print-directory bench-relay-inproc
	$(MAKE) --no-print-directory bench-relay
	$(MAKE) --no-print-directory bench-product

# The relay benchmark (scripts/benchrelay): `agents-mcp serve` as
# built by `make build`, as its own process, vs calling a go-sdk echo upstream
# directly, vs TBXark/mcp-proxy when MCP_PROXY_BINARY names its binary, vs
# the floor (a Go HTTP reverse proxy that reads no JSON-RPC);
# interleaved rounds at 1 and 32 clients, the clients over streamable HTTP and
# SSE; throughput, p50/p99, and the relay's CPU and bytes allocated per call.
# BENCH_RELAY_BEFORE names an older agents-mcp binary to measure in the same
# rounds. About 3 minutes; docs/benchmarks.md says how to read it. Output in
# bench-relay.out.
RELAY_BENCH_ROUNDS ?= 5
RELAY_BENCH_TIME   ?= 2s
BENCH_RELAY_BEFORE ?=
bench-relay: build
	$(GO) run ./scripts/benchrelay -bin $(BIN) -rounds $(RELAY_BENCH_ROUNDS) -time $(RELAY_BENCH_TIME) \
		$(if $(BENCH_RELAY_BEFORE),-bin-before $(BENCH_RELAY_BEFORE)) | tee bench-relay.out

# The soak benchmark (scripts/benchrelay -soak): one `agents-mcp
# serve` as built by `make build`, on the embedded defaults but with
# audit.max_entries at SOAK_MAX_ENTRIES (low enough to be reached within the
# soak), relaying the echo upstream to 32 clients over streamable HTTP for
# SOAK_DURATION, with a few seconds of direct calls every 10 s as the
# machine's control. Per minute: throughput, p50/p99, relay/direct ratio,
# the serve process's CPU per call, RSS, goroutines and descriptors, audit
# rows and store bytes; then a verdict against the soak's goal
# (ratio flat within 10 %, store bounded). The verdict is reported, not the
# exit status, unless SOAK_STRICT=1. docs/benchmarks.md says how to read it.
# Output in bench-soak.out.
SOAK_DURATION    ?= 10m
SOAK_MAX_ENTRIES ?= 100000
SOAK_STRICT      ?=
bench-soak: build
	$(GO) run ./scripts/benchrelay -bin $(BIN) -soak $(SOAK_DURATION) -soak-max-entries $(SOAK_MAX_ENTRIES) \
		$(if $(SOAK_STRICT),-soak-strict) -o bench-soak.out

# The in-process relay benchmark (remote.BenchmarkRelay): the relay
# in the benchmark's own process, for a Go upstream and server-everything
# (needs node and `npm ci` in scripts/e2e, else skipped), at 1 and 32 clients,
# direct and relayed interleaved in one run. Output in bench-relay-inproc.out.
RELAY_BENCH_COUNT ?= 3
RELAY_BENCH_BENCHTIME ?= 1s
bench-relay-inproc:
	$(GO) test -run '^$$' -bench . -benchmem -count $(RELAY_BENCH_COUNT) -benchtime $(RELAY_BENCH_BENCHTIME) ./remote/ | tee bench-relay-inproc.out

# The vector index on real text (memory/vectors.BenchmarkQueryReal):
# the first VECTORS_BENCH_REAL_N descriptions of the committed corpus indexed
# (it holds about 161k; a larger N uses them all), 1,000 held-out ones as
# queries, HNSW vs exact Flat in one run, recall@10 and latency per ef, for the
# hash embedder and a dense one. Then BenchmarkQueryRealCorpora: three
# corpora of different sources (Debian/Go, man pages, Python docstrings) x
# the hash and the default semantic embedder, the first
# VECTORS_BENCH_CORPORA_N of each (the Python one holds fewer: all of it),
# recall@10 and p50/p95 against Flat in the same run; six index builds:
# 6.5 min at 20k on the shared 2-core box at load 8-12, 14.5 min at 100k
# at load 8 falling to 4 (VECTORS_BENCH_CORPORA_N=20000 for a quick look).
# docs/benchmarks.md says how to read both. Output in bench-vectors.out.
VECTORS_BENCH_REAL_N ?= 100000
VECTORS_BENCH_CORPORA_N ?= 100000
bench-vectors:
	VECTORS_BENCH_REAL_N=$(VECTORS_BENCH_REAL_N) $(GO) test -run '^$$' -bench 'QueryReal$$' -benchtime 1x -count 3 -timeout 60m ./memory/vectors/ | tee bench-vectors.out
	VECTORS_BENCH_CORPORA_N=$(VECTORS_BENCH_CORPORA_N) $(GO) test -run '^$$' -bench 'QueryRealCorpora$$' -benchtime 1x -count 1 -timeout 120m ./memory/vectors/ | tee -a bench-vectors.out

# The same index grown to 1M on text generated from the corpus
# (memory/vectors.BenchmarkQueryRealScale), measured at each size of
# VECTORS_BENCH_SCALE. About 3 GB of RAM; the 1M build took 31 min on the
# shared 2-core box. Output in bench-vectors-scale.out.
VECTORS_BENCH_SCALE ?= 250000,500000,1000000
bench-vectors-scale:
	VECTORS_BENCH_SCALE=$(VECTORS_BENCH_SCALE) $(GO) test -run '^$$' -bench 'QueryRealScale' -benchtime 1x -timeout 3h ./memory/vectors/ | tee bench-vectors-scale.out

# The product's own jobs against their goals (docs/benchmarks.md, "The
# product's own jobs"): search_tools over about 1k and 10k tools
# (toolsearch.BenchmarkSearchToolsScale, p50 <= 5 / 20 ms), run_task with the
# builtin planner on a one-step request over loopback streamable HTTP, the
# upstream's time subtracted (BenchmarkRunTaskOneStep, p50 <= 20 ms), and
# start-up to ready with PRODUCT_BENCH_LEARNINGS learnings (BenchmarkStartup,
# <= 3 s at 1M). Building the 1M store and index is most of the run (the
# index with a narrower insert beam, STARTUP_BENCH_EFC, which start-up does
# not read). Each reports cpu-p50-ms beside wall p50: on the shared machine
# the CPU time is the fairer figure. Output in bench-product.out.
PRODUCT_BENCH_LEARNINGS ?= 1000000
bench-product:
	$(GO) test -run '^$$' -bench 'SearchToolsScale' -benchtime 300x -count 3 -timeout 60m ./router/toolsearch/ | tee bench-product.out
	$(GO) test -run '^$$' -bench 'RunTaskOneStep' -benchtime 200x -count 3 -timeout 60m ./cmd/agents-mcp/ | tee -a bench-product.out
	STARTUP_BENCH_LEARNINGS=$(PRODUCT_BENCH_LEARNINGS) STARTUP_BENCH_EFC=24 $(GO) test -run '^$$' -bench '^BenchmarkStartup$$' -benchtime 1x -count 3 -timeout 4h ./cmd/agents-mcp/ | tee -a bench-product.out

# The learning benchmark (TestLearningBenchmark in cmd/agents-mcp):
# twelve task families of ten requests each (eight of them worded the way
# people word requests), run in order through run_task on
# the whole server with real go-sdk upstreams, for the builtin planner and a
# scripted sampling model; per family the success rate, failed tool calls in
# the first vs second half, repairs, elicitations and silently wrong
# successes. A minute or two; make test runs it after test-go (test-measures;
# go test -race skips it: under race it takes ten times longer), and a family that
# misses its goal, or any silently wrong success, fails the build.
# docs/benchmarks.md says how to read it. Output in bench-learning.out; the
# exit status is the test's.
bench-learning:
	$(GO) test -run '^(TestLearningBenchmark|TestLearningFamiliesWordedApart)$$' -count 1 -v -timeout 10m ./cmd/agents-mcp/ > bench-learning.out 2>&1; \
	status=$$?; cat bench-learning.out; exit $$status
