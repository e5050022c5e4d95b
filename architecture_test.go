package agentsmcp_test

import (
	"bufio"
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dependencyRule forbids the packages under From (the package and its
// subpackages, or From alone when Only is set; "" is the root package
// alone) to import the packages under any of Forbid. Leaf rules forbid
// every package of the module but the root and those under Allow.
type dependencyRule struct {
	From   string
	Only   bool
	Forbid []string
	Leaf   bool
	Allow  []string
	Why    string
}

// dependencyRules are the rules of docs/architecture.md (Dependencies).
// They read the imports of non-test files only: a test may use real parts
// from anywhere (the agents' tests run a real router), but shipped code
// depends inward.
var dependencyRules = []dependencyRule{
	{From: "", Leaf: true, Allow: []string{"internal/redact"},
		Why: "the root package holds the domain and imports none of its subpackages but internal/redact, a leaf of the standard library that its views (Task.Redacted, UpstreamConfig.String) use"},
	{From: "internal/redact", Leaf: true, Forbid: []string{""},
		Why: "redaction serves every package and the root's own views, so it imports nothing of the module, not even the root"},
	{From: "agents", Forbid: []string{"router", "remote", "api", "memory", "cmd", "agents/mcptools"},
		Why: "the agents depend on root interfaces; the engine knows nothing of its MCP face (agents/mcptools), which cmd hands the engine; cmd wires the implementations"},
	{From: "agents/mcptools", Forbid: []string{"router", "remote", "api", "memory", "cmd"},
		Why: "the agents' MCP face publishes the engine's tools through localtools, as memory/mcptools does, not through the router; cmd wires it"},
	{From: "agents/planlang", Leaf: true, Allow: []string{"internal/jsonnum"},
		Why: "the plan language (references, the inputs schema) is shared by the engine, its MCP face and anything that reads a plan, so it depends on none of them"},
	{From: "memory", Forbid: []string{"router", "remote", "api", "agents", "cmd"},
		Why: "memory implements the root's storage and recall for every face; it offers MCP tools through localtools, not the router"},
	{From: "api", Forbid: []string{"router", "remote", "agents", "cmd"},
		Why: "the admin and auth faces depend on root interfaces (UpstreamManager, the stores), not on the pool or the MCP face"},
	{From: "router/virtual", Leaf: true,
		Why: "what a virtual server exposes is computed from the root's types alone, so the router, the admin API and the registry routes can all use it"},
	{From: "api/registry", Leaf: true, Allow: []string{"internal/storedform"},
		Why: "the registry routes read the virtual servers through the root's VirtualServerLister; cmd hands them the router"},
	{From: "localtools", Leaf: true, Allow: []string{"internal/toolschema"},
		Why: "the provider of in-process tools is a leaf (with the registry's check of a tool, internal/toolschema), so that registering a tool never pulls in the MCP transport stack"},
	{From: "egress", Leaf: true,
		Why: "the egress policy is a leaf that remote, httptools and memory/embed share"},
	{From: "httptools", Leaf: true, Allow: []string{"internal/delegation", "internal/storedform", "egress", "internal/syncloop", "internal/jsonnum", "internal/redact", "internal/mcpwire", "internal/credapply", "internal/toolschema", "internal/words"},
		Why: "HTTP tools are a tool provider like an upstream: the root, the egress policy, the store's sync loop, the number bounds, redaction, the authorization results of internal/mcpwire, the credential a request carries (internal/credapply) and the registry's check of a tool (internal/toolschema) only; cmd hands them the router and the pool's transport (ADR 0011)"},
	{From: "internal/validate", Leaf: true, Allow: []string{"internal/storedform", "internal/redact"},
		Why: "the invariants of the root's types are checked by the stores, the agents, the config loader and the admin API alike, so their checks depend on none of them"},
	{From: "internal/toolperf", Leaf: true, Allow: []string{"internal/storedform"},
		Why: "the arithmetic of tool performance (sums, error classes, the reliability estimate) serves the stores that record calls and the agents that weigh tools, so it depends on neither"},
	{From: "internal/view", Leaf: true, Allow: []string{"internal/redact"},
		Why: "the redacted views of tasks, plans, thoughts and credentials are shown by the agents' MCP face, the admin API and kept by the sealing store alike, so they depend on none of them"},
	{From: "internal/storedform", Leaf: true,
		Why: "the stored form of the root's aggregates and the limits applied when storing them are the contract of the stores that the executor, the quotas and the validation rely on, so it depends on none of them"},
	{From: "internal/credapply", Leaf: true, Allow: []string{"internal/redact"},
		Why: "the credential an outgoing request carries is put on it by HTTP tools and the upstream pool alike, so it depends on neither"},
	{From: "internal/delegation", Leaf: true, Allow: []string{"internal/redact"},
		Why: "a caller's delegated token serves the auth middleware, the router and the tool providers that accept it, so it depends on none of them"},
	{From: "internal/toolschema", Leaf: true,
		Why: "what the registry accepts of a tool is checked by the router, localtools and httptools alike, so it depends on none of them"},
	{From: "internal/backoff", Leaf: true,
		Why: "the one retry wait serves every package that retries, so it depends on none"},
	{From: "internal/syncloop", Leaf: true,
		Why: "the loop that follows the store serves remote and httptools alike, so it depends on neither"},
	{From: "internal/sweep", Leaf: true,
		Why: "the retention loop serves the task and insight sweepers alike, so it depends on neither"},
	{From: "internal/batch", Leaf: true,
		Why: "the batching queue serves the recorders of memory, so it depends on none of them"},
	{From: "mock", Leaf: true, Allow: []string{"internal/delegation", "internal/mcpwire"},
		Why: "the test doubles of the root's interfaces serve the tests of every package, so they depend on the root alone"},
	{From: "internal/testutil", Leaf: true,
		Why: "test support serves every package's tests, so it depends on none"},
	{From: "internal/agentstest", Forbid: []string{"cmd", "api", "remote"},
		Why: "test support for the tests of the agents' engine and of its MCP face: it assembles the engine on real parts (the router, SQLite), which only tests may do, and nothing of the HTTP face, the pool or the commands"},
	{From: "internal/jsonnum", Leaf: true,
		Why: "the bounds on JSON numbers serve the router, the agents and httptools alike, so they depend on none of them"},
	{From: "internal/mcpwire", Leaf: true, Allow: []string{"internal/storedform"},
		Why: "what router, remote and agents share of the wire (raw results, quiet calls, bridged calls, the revisions) depends on none of them"},
	{From: "internal/mcpserver", Leaf: true,
		Why: "the MCP server as the router hands it out serves the router and remote alike, so it depends on neither"},
	{From: "internal/tracing", Leaf: true,
		Why: "router, remote and api/telemetry share the test of whether spans go anywhere, so it depends on none of them"},
	{From: "internal/oidctest", Leaf: true,
		Why: "the test OpenID provider (zitadel/oidc, a test dependency) serves the tests of httptools, agents and cmd, so it depends on none of them"},
	{From: "internal/words", Leaf: true,
		Why: "the word splitting of the semantic model's corpus serves memory/embed and httptools alike, so it depends on neither"},
	{From: "internal/ferrettest", Leaf: true,
		Why: "the test MongoDB wire server (FerretDB in its own process) serves the tests of memory/mongo and cmd, so it depends on none of them"},
	{From: "internal/oauthtest", Leaf: true,
		Why: "the test authorization server and browser serve the tests of credentials, api/admin, remote and cmd, so it depends on none of them"},
	{From: "internal/pineconetest", Leaf: true, Allow: []string{"internal/pineconetest"},
		Why: "the test Pinecone (Pinecone's published protocols over an in-memory index) serves the tests of memory/pinecone and the e2e helper, so it depends on none of them"},
	{From: "memory/vectortest", Leaf: true,
		Why: "the behaviour suite of a vector index serves every implementation's tests, so it depends on none of them"},
	{From: "internal/taskfixture", Leaf: true, Allow: []string{"internal/mcpwire"},
		Why: "the test upstream of the Tasks extension serves the tests of remote and cmd, so it depends on none of them"},
	{From: "credentials", Forbid: []string{"router", "remote", "api", "agents", "memory", "cmd"},
		Why: "credentials present the store's secrets to integrations over root interfaces; cmd hands them the sealing store"},
	{From: "remote", Forbid: []string{"router", "api", "agents", "memory", "cmd"},
		Why: "remote publishes upstreams to its own Registry interface; cmd hands it the router"},
	{From: "router/validation", Leaf: true, Allow: []string{"internal/jsonnum"},
		Why: "argument validation serves the router's calls and tools/validate from the schema alone: the root's issue types and the number bounds, nothing of the registry or the transports"},
	{From: "router/tasks", Leaf: true, Allow: []string{"router/internal", "internal/mcpwire"},
		Why: "the Tasks extension and its listen streams serve the router over the root's TaskBackend; the router wires them, so they know nothing of the registry or the transports"},
	{From: "router/transport", Leaf: true, Allow: []string{"router/internal", "router/tasks", "router/validation", "router/transport", "internal/jsonnum", "internal/mcpwire", "internal/redact"},
		Why: "the transports reach the router through the interfaces they define (mcphttp.Router, rest.Router), never by importing it: the router wires them"},
	{From: "router/transport", Only: true, Leaf: true, Allow: []string{"router/internal"},
		Why: "the transport pieces (stdio, event store, priming, rebinding) know nothing of the router or of the HTTP face that uses them"},
	{From: "router/transport/sse", Leaf: true, Allow: []string{"router/internal", "internal/mcpwire"},
		Why: "legacy HTTP+SSE is an mcp.Transport of its own; the HTTP face hands it the session rules and the fast path as options"},
	{From: "router/transport/session", Leaf: true, Allow: []string{"router/internal"},
		Why: "the sessions of the HTTP transports are a record the transports share, told about go-sdk's sessions by the router through plain methods"},
	{From: "router/transport/rest", Leaf: true, Allow: []string{"router/internal"},
		Why: "the REST bridge turns HTTP into one tools/call and back; the router runs the call behind rest.Router"},
	{From: "router/toolsearch", Leaf: true, Allow: []string{"localtools", "internal/toolschema", "internal/toolperf", "router/virtual"},
		Why: "the tool search reads the registry through its own Registry interface and offers search_tools on localtools (its learned ranking weighs reliability with internal/toolperf), keeping to a virtual server's view (router/virtual) when the request carries one; cmd hands it the router, so it knows nothing of the router's dispatch or transports"},
	{From: "router", Forbid: []string{"remote", "api", "agents", "memory", "cmd", "router/toolsearch"},
		Why: "the router is the MCP face over root interfaces (registry, dispatch, middleware); cmd adds the providers and wires the tool search to it"},
}

// wiredOnlyByCmd are the implementations that only cmd/ may import
// (besides their own subpackages): the MCP face and the upstream pool.
var wiredOnlyByCmd = []string{"router", "remote"}

// wiresForTests are the test-support packages that wire the router as cmd
// does, for tests only (no shipped package imports them).
var wiresForTests = []string{"internal/agentstest"}

// TestDependenciesPointInward reads the imports of every package of the
// module as go/build sees them on this platform, and fails on each one that
// breaks a rule above. docs/architecture.md gives a go list command that
// prints the same graph.
func TestDependenciesPointInward(t *testing.T) {
	graph := moduleImports(t)

	// The rules name packages that exist and cmd wires router and remote:
	// a walk that found nothing, or a package that moved, must not pass
	// as "no forbidden import".
	for _, r := range dependencyRules {
		if _, ok := graph[r.From]; !ok {
			t.Errorf("rule for %q: no such package in the module; update the rules and docs/architecture.md", r.From)
		}
	}
	for _, p := range wiredOnlyByCmd {
		if !slices.Contains(graph["cmd/agents-mcp"], p) {
			t.Errorf("cmd/agents-mcp does not import %s: the import graph was not read", p)
		}
	}

	for _, from := range sortedKeys(graph) {
		for _, to := range graph[from] {
			for _, r := range dependencyRules {
				if !within(from, r.From) || (r.Only && from != r.From) {
					continue
				}
				if r.Leaf && to != "" && !slices.ContainsFunc(r.Allow, func(a string) bool { return within(to, a) }) {
					t.Errorf("%s imports %s: %s", show(from), show(to), r.Why)
				}
				if slices.ContainsFunc(r.Forbid, func(f string) bool { return within(to, f) }) {
					t.Errorf("%s imports %s: %s", show(from), show(to), r.Why)
				}
			}
			if within(to, "mock") && !within(from, "mock") {
				t.Errorf("%s imports %s: test doubles are for tests only", show(from), show(to))
			}
			for _, w := range wiredOnlyByCmd {
				if within(to, w) && !within(from, w) && !within(from, "cmd") && !slices.Contains(wiresForTests, from) {
					t.Errorf("%s imports %s: only cmd/ wires %s", show(from), show(to), w)
				}
			}
		}
	}
}

// within reports whether the package p is pkg or one of its subpackages;
// the root ("") contains only itself.
func within(p, pkg string) bool {
	if pkg == "" {
		return p == ""
	}
	return p == pkg || strings.HasPrefix(p, pkg+"/")
}

func show(p string) string {
	if p == "" {
		return "agentsmcp (root)"
	}
	return p
}

// moduleImports maps each package of the module (its directory relative
// to the module root, "" for the root) to the module packages its non-test
// files import, relative likewise.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	root, module := moduleRoot(t)
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || name == "vendor") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		} else if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		var imports []string
		for _, imp := range pkg.Imports {
			if imp == module {
				imports = append(imports, "")
			} else if p, ok := strings.CutPrefix(imp, module+"/"); ok {
				imports = append(imports, p)
			}
		}
		graph[rel] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// moduleRoot finds go.mod from the test's directory up, and returns its
// directory and module path.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			s := bufio.NewScanner(f)
			for s.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(m), `"`)
				}
			}
			t.Fatalf("%s/go.mod has no module line", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
