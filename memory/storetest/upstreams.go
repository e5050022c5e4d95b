package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

func init() {
	suite["UpstreamRoundTrip"] = testUpstreamRoundTrip
	suite["UpstreamConflict"] = testUpstreamConflict
	suite["UpstreamRecreateNewRevision"] = testUpstreamRecreateNewRevision
	suite["UpstreamDeleteUnknown"] = testUpstreamDeleteUnknown
	suite["UpstreamInvalid"] = testUpstreamInvalid
	suite["UpstreamListSorted"] = testUpstreamListSorted
	suite["UpstreamMaxDefinitions"] = testUpstreamMaxDefinitions
	suite["UpstreamKindsShareNames"] = testUpstreamKindsShareNames
	suite["UpstreamKindInvalid"] = testUpstreamKindInvalid
}

// upstreamStore returns the store's UpstreamService, failing t when the
// store under test did not provide one.
func upstreamStore(t *testing.T, s Services) agentsmcp.UpstreamService {
	t.Helper()
	if s.Upstreams == nil {
		t.Fatal("Services.Upstreams is nil: the store must provide an UpstreamService")
	}
	return s.Upstreams
}

// listUpstreams lists every MCP definition, failing t on an error.
func listUpstreams(t *testing.T, svc agentsmcp.UpstreamService) []*agentsmcp.UpstreamDefinition {
	t.Helper()
	items, err := svc.ListUpstreamDefinitions(t.Context(), "")
	if err != nil {
		t.Fatalf("ListUpstreamDefinitions: %v", err)
	}
	return items
}

// upstreamNames returns the names of defs, in order.
func upstreamNames(defs []*agentsmcp.UpstreamDefinition) []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return names
}

// checkUpstream compares every field of got with want: CreatedAt at
// millisecond precision and in UTC, Config as bytes.
func checkUpstream(t *testing.T, got, want *agentsmcp.UpstreamDefinition) {
	t.Helper()
	if got == nil {
		t.Fatalf("upstream definition %q: nil", want.Name)
	}
	checkTime(t, "upstream definition "+want.Name+" CreatedAt", got.CreatedAt, want.CreatedAt)
	if string(got.Config) != string(want.Config) {
		t.Errorf("upstream definition %q Config = %q, want the bytes stored, %q", want.Name, got.Config, want.Config)
	}
	if got.Name != want.Name || got.Kind != storedform.UpstreamKind(want) || got.Revision != want.Revision || got.CreatedBy != want.CreatedBy {
		t.Errorf("upstream definition:\n got name %q kind %q revision %q createdBy %q\nwant name %q kind %q revision %q createdBy %q",
			got.Name, got.Kind, got.Revision, got.CreatedBy, want.Name, storedform.UpstreamKind(want), want.Revision, want.CreatedBy)
	}
}

// upstreamConfig returns a valid config naming url.
func upstreamConfig(url string) json.RawMessage {
	return json.RawMessage(`{"transport":"streamable","url":"` + url + `"}`)
}

// bigUpstreamConfig returns a JSON object of exactly size bytes.
func bigUpstreamConfig(size int) json.RawMessage {
	const head, tail = `{"pad":"`, `"}`
	return json.RawMessage(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
}

func testUpstreamRoundTrip(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	if got := listUpstreams(t, svc); len(got) != 0 {
		t.Fatalf("a new store lists %d definitions, want none", len(got))
	}
	// The config bytes are what the remote package wrote; a store that
	// re-encodes them (key order, spacing, escapes, number forms) fails.
	config := "{ \"url\" : \"https://mcp.example.com/naïve/café?q=☕\",\n\t\"headers\":{\"Authorization\":\"Bearer s3cr3t\\u00e9\\/\"}," +
		"\"a\":[1.0e2, -0, 1E400, null, true],  \"$where\":\"x\", \"dup\":1, \"dup\":2 }"
	full := &agentsmcp.UpstreamDefinition{
		Name:      "files",
		Config:    json.RawMessage(config),
		Revision:  "set-by-the-caller",
		CreatedBy: "jwt:alice@example.com",
		CreatedAt: time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("PST", -8*3600)),
	}
	// At both size limits, no CreatedBy, CreatedAt assigned by the store.
	edge := &agentsmcp.UpstreamDefinition{
		Name:   strings.Repeat("n", agentsmcp.MaxUpstreamNameBytes),
		Config: bigUpstreamConfig(agentsmcp.MaxUpstreamConfigBytes),
	}
	wantFull, wantEdge := *full, *edge
	wantFull.Config = json.RawMessage(config) // not full's buffer, overwritten below
	if err := svc.CreateUpstreamDefinition(t.Context(), full); err != nil {
		t.Fatalf("CreateUpstreamDefinition(full): %v", err)
	}
	// The caller may reuse its buffer: the store must have kept a copy.
	for i := range full.Config {
		full.Config[i] = ' '
	}
	before := time.Now()
	if err := svc.CreateUpstreamDefinition(t.Context(), edge); err != nil {
		t.Fatalf("CreateUpstreamDefinition(edge): %v", err)
	}
	after := time.Now()

	if full.Revision == "" || full.Revision == wantFull.Revision {
		t.Errorf("Revision after create = %q, want a new one assigned by the store", full.Revision)
	}
	if edge.Revision == "" {
		t.Error("Revision after create is empty, want one assigned by the store")
	}
	if full.Revision == edge.Revision {
		t.Errorf("two creates got the same Revision %q", full.Revision)
	}
	checkRecent(t, "assigned CreatedAt", edge.CreatedAt, before, after)
	if edge.CreatedAt.Location() != time.UTC || !edge.CreatedAt.Equal(edge.CreatedAt.Truncate(time.Millisecond)) {
		t.Errorf("assigned CreatedAt %v is not UTC at millisecond precision", edge.CreatedAt)
	}
	wantFull.Revision, wantEdge.Revision, wantEdge.CreatedAt = full.Revision, edge.Revision, edge.CreatedAt

	got := listUpstreams(t, svc)
	if names := upstreamNames(got); !slices.Equal(names, []string{wantFull.Name, wantEdge.Name}) {
		t.Fatalf("listed %q, want %q", names, []string{wantFull.Name, wantEdge.Name})
	}
	checkUpstream(t, got[0], &wantFull)
	checkUpstream(t, got[1], &wantEdge)
}

func testUpstreamConflict(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	first := &agentsmcp.UpstreamDefinition{Name: "files", Config: upstreamConfig("https://one.example"), CreatedBy: "key:first", CreatedAt: at(1)}
	if err := svc.CreateUpstreamDefinition(t.Context(), first); err != nil {
		t.Fatalf("CreateUpstreamDefinition: %v", err)
	}
	want := *first
	second := &agentsmcp.UpstreamDefinition{Name: "files", Config: upstreamConfig("https://two.example"), CreatedBy: "key:second", CreatedAt: at(2)}
	wantCode(t, svc.CreateUpstreamDefinition(t.Context(), second), agentsmcp.ECONFLICT, "CreateUpstreamDefinition with a taken name")
	got := listUpstreams(t, svc)
	if len(got) != 1 {
		t.Fatalf("listed %d definitions after a conflict, want 1", len(got))
	}
	checkUpstream(t, got[0], &want)
}

func testUpstreamRecreateNewRevision(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	d := &agentsmcp.UpstreamDefinition{Name: "search", Config: upstreamConfig("https://old.example"), CreatedAt: at(1)}
	if err := svc.CreateUpstreamDefinition(t.Context(), d); err != nil {
		t.Fatalf("CreateUpstreamDefinition: %v", err)
	}
	old := d.Revision
	if err := svc.DeleteUpstreamDefinition(t.Context(), "", "search"); err != nil {
		t.Fatalf("DeleteUpstreamDefinition: %v", err)
	}
	if got := listUpstreams(t, svc); len(got) != 0 {
		t.Fatalf("listed %q after delete, want none", upstreamNames(got))
	}
	// Same name, same config: only the Revision tells the replicas that it
	// was removed and added again.
	again := &agentsmcp.UpstreamDefinition{Name: "search", Config: upstreamConfig("https://old.example"), CreatedAt: at(1)}
	if err := svc.CreateUpstreamDefinition(t.Context(), again); err != nil {
		t.Fatalf("CreateUpstreamDefinition again: %v", err)
	}
	if again.Revision == "" || again.Revision == old {
		t.Errorf("Revision after re-create = %q, want a new one (was %q)", again.Revision, old)
	}
	got := listUpstreams(t, svc)
	if len(got) != 1 {
		t.Fatalf("listed %d definitions, want 1", len(got))
	}
	checkUpstream(t, got[0], again)
}

func testUpstreamDeleteUnknown(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	wantCode(t, svc.DeleteUpstreamDefinition(t.Context(), "", "nothing"), agentsmcp.ENOTFOUND, "delete in an empty store")
	d := &agentsmcp.UpstreamDefinition{Name: "kept", Config: upstreamConfig("https://kept.example"), CreatedAt: at(1)}
	if err := svc.CreateUpstreamDefinition(t.Context(), d); err != nil {
		t.Fatalf("CreateUpstreamDefinition: %v", err)
	}
	for _, name := range []string{"", "other", "KEPT", "kep", "kept "} {
		wantCode(t, svc.DeleteUpstreamDefinition(t.Context(), "", name), agentsmcp.ENOTFOUND, fmt.Sprintf("delete %q", name))
	}
	if got := listUpstreams(t, svc); len(got) != 1 {
		t.Fatalf("listed %q, want only %q", upstreamNames(got), "kept")
	} else {
		checkUpstream(t, got[0], d)
	}
	if err := svc.DeleteUpstreamDefinition(t.Context(), "", "kept"); err != nil {
		t.Fatalf("DeleteUpstreamDefinition: %v", err)
	}
	wantCode(t, svc.DeleteUpstreamDefinition(t.Context(), "", "kept"), agentsmcp.ENOTFOUND, "delete twice")
}

func testUpstreamInvalid(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	tests := []struct {
		name   string
		def    string
		config json.RawMessage
	}{
		{"empty name", "", upstreamConfig("https://x.example")},
		{"long name", strings.Repeat("n", agentsmcp.MaxUpstreamNameBytes+1), upstreamConfig("https://x.example")},
		{"no config", "x", nil},
		{"empty config", "x", json.RawMessage("")},
		{"array config", "x", json.RawMessage(`[{"url":"https://x.example"}]`)},
		{"null config", "x", json.RawMessage("null")},
		{"string config", "x", json.RawMessage(`"https://x.example"`)},
		{"number config", "x", json.RawMessage("42")},
		{"broken config", "x", json.RawMessage(`{"url":`)},
		{"trailing data", "x", json.RawMessage(`{"url":"https://x.example"} {}`)},
		{"oversize config", "x", bigUpstreamConfig(agentsmcp.MaxUpstreamConfigBytes + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &agentsmcp.UpstreamDefinition{Name: tt.def, Config: tt.config}
			wantCode(t, svc.CreateUpstreamDefinition(t.Context(), d), agentsmcp.EINVALID, "CreateUpstreamDefinition")
		})
	}
	if got := listUpstreams(t, svc); len(got) != 0 {
		t.Errorf("invalid definitions were stored: %q", upstreamNames(got))
	}
}

func testUpstreamListSorted(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	// Lower-case letters and digits only: their order is the same in byte
	// order and in any collation a store may use.
	names := []string{"zeta", "alpha", "m10", "m2", "m1", "beta", "b", "gamma", "a1", "a"}
	for i, name := range names {
		d := &agentsmcp.UpstreamDefinition{Name: name, Config: upstreamConfig("https://" + name + ".example"), CreatedAt: at(len(names) - i)}
		if err := svc.CreateUpstreamDefinition(t.Context(), d); err != nil {
			t.Fatalf("CreateUpstreamDefinition(%q): %v", name, err)
		}
	}
	got := listUpstreams(t, svc)
	want := slices.Sorted(slices.Values(names))
	if g := upstreamNames(got); !slices.Equal(g, want) {
		t.Fatalf("listed %q, want %q", g, want)
	}
	for _, d := range got {
		if want := string(upstreamConfig("https://" + d.Name + ".example")); string(d.Config) != want {
			t.Errorf("definition %q has Config %s, want %s", d.Name, d.Config, want)
		}
	}
}

func testUpstreamMaxDefinitions(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	config := upstreamConfig("https://x.example")
	name := func(i int) string { return fmt.Sprintf("u%04d", i) }
	for i := range agentsmcp.MaxUpstreamDefinitions {
		if err := svc.CreateUpstreamDefinition(t.Context(), &agentsmcp.UpstreamDefinition{Name: name(i), Config: config}); err != nil {
			t.Fatalf("CreateUpstreamDefinition #%d: %v", i, err)
		}
	}
	extra := name(agentsmcp.MaxUpstreamDefinitions)
	wantCode(t, svc.CreateUpstreamDefinition(t.Context(), &agentsmcp.UpstreamDefinition{Name: extra, Config: config}),
		agentsmcp.EINVALID, fmt.Sprintf("definition #%d, beyond MaxUpstreamDefinitions", agentsmcp.MaxUpstreamDefinitions+1))
	got := listUpstreams(t, svc)
	if len(got) != agentsmcp.MaxUpstreamDefinitions || slices.Contains(upstreamNames(got), extra) {
		t.Fatalf("listed %d definitions (the refused one included: %v), want %d",
			len(got), slices.Contains(upstreamNames(got), extra), agentsmcp.MaxUpstreamDefinitions)
	}
	// A delete makes room again.
	if err := svc.DeleteUpstreamDefinition(t.Context(), "", name(0)); err != nil {
		t.Fatalf("DeleteUpstreamDefinition: %v", err)
	}
	if err := svc.CreateUpstreamDefinition(t.Context(), &agentsmcp.UpstreamDefinition{Name: extra, Config: config}); err != nil {
		t.Fatalf("CreateUpstreamDefinition after a delete made room: %v", err)
	}
}

// listKind lists the definitions of kind, failing t on an error.
func listKind(t *testing.T, svc agentsmcp.UpstreamService, kind string) []*agentsmcp.UpstreamDefinition {
	t.Helper()
	items, err := svc.ListUpstreamDefinitions(t.Context(), kind)
	if err != nil {
		t.Fatalf("ListUpstreamDefinitions(%q): %v", kind, err)
	}
	return items
}

// testUpstreamKindsShareNames checks that MCP upstreams and HTTP tool
// sources share one set of names (both prefix tool names), that each kind
// is listed and deleted on its own, and that an HTTP source may be larger
// than an MCP upstream's limit.
func testUpstreamKindsShareNames(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	mcpDef := &agentsmcp.UpstreamDefinition{Name: "files", Kind: agentsmcp.UpstreamKindMCP, Config: upstreamConfig("https://files.example"), CreatedAt: at(1)}
	if err := svc.CreateUpstreamDefinition(t.Context(), mcpDef); err != nil {
		t.Fatalf("CreateUpstreamDefinition(mcp): %v", err)
	}
	clash := &agentsmcp.UpstreamDefinition{Name: "files", Kind: agentsmcp.UpstreamKindHTTP, Config: json.RawMessage(`{"base_url":"https://x.example"}`)}
	wantCode(t, svc.CreateUpstreamDefinition(t.Context(), clash), agentsmcp.ECONFLICT, "an HTTP source named as an MCP upstream")
	// Larger than an MCP upstream may be, as an inline OpenAPI document
	// makes it.
	httpDef := &agentsmcp.UpstreamDefinition{Name: "blog", Kind: agentsmcp.UpstreamKindHTTP,
		Config: bigUpstreamConfig(agentsmcp.MaxHTTPSourceConfigBytes), CreatedBy: "key:ops", CreatedAt: at(2)}
	if err := svc.CreateUpstreamDefinition(t.Context(), httpDef); err != nil {
		t.Fatalf("CreateUpstreamDefinition(http, %d bytes): %v", agentsmcp.MaxHTTPSourceConfigBytes, err)
	}
	if httpDef.Kind != agentsmcp.UpstreamKindHTTP {
		t.Errorf("Kind after create = %q, want %q", httpDef.Kind, agentsmcp.UpstreamKindHTTP)
	}
	clash = &agentsmcp.UpstreamDefinition{Name: "blog", Config: upstreamConfig("https://blog.example")}
	wantCode(t, svc.CreateUpstreamDefinition(t.Context(), clash), agentsmcp.ECONFLICT, "an MCP upstream named as an HTTP source")

	if got := listKind(t, svc, agentsmcp.UpstreamKindMCP); len(got) != 1 {
		t.Fatalf("MCP definitions %q, want only files", upstreamNames(got))
	} else {
		checkUpstream(t, got[0], mcpDef)
	}
	if got := listKind(t, svc, ""); len(got) != 1 || got[0].Name != "files" {
		t.Fatalf("definitions of kind \"\" %q, want the MCP ones (files)", upstreamNames(got))
	}
	if got := listKind(t, svc, agentsmcp.UpstreamKindHTTP); len(got) != 1 {
		t.Fatalf("HTTP definitions %q, want only blog", upstreamNames(got))
	} else {
		checkUpstream(t, got[0], httpDef)
	}

	// A delete of the wrong kind leaves the definition alone.
	wantCode(t, svc.DeleteUpstreamDefinition(t.Context(), agentsmcp.UpstreamKindMCP, "blog"), agentsmcp.ENOTFOUND, "delete an HTTP source as an MCP upstream")
	wantCode(t, svc.DeleteUpstreamDefinition(t.Context(), agentsmcp.UpstreamKindHTTP, "files"), agentsmcp.ENOTFOUND, "delete an MCP upstream as an HTTP source")
	if got := listKind(t, svc, agentsmcp.UpstreamKindHTTP); len(got) != 1 {
		t.Fatalf("HTTP definitions after a delete of the wrong kind: %q, want blog", upstreamNames(got))
	}
	if err := svc.DeleteUpstreamDefinition(t.Context(), agentsmcp.UpstreamKindHTTP, "blog"); err != nil {
		t.Fatalf("DeleteUpstreamDefinition(http, blog): %v", err)
	}
	if got := listKind(t, svc, agentsmcp.UpstreamKindHTTP); len(got) != 0 {
		t.Fatalf("HTTP definitions after delete: %q, want none", upstreamNames(got))
	}
	if got := listKind(t, svc, agentsmcp.UpstreamKindMCP); len(got) != 1 {
		t.Fatalf("MCP definitions after the HTTP delete: %q, want files", upstreamNames(got))
	}
}

func testUpstreamKindInvalid(t *testing.T, s Services) {
	svc := upstreamStore(t, s)
	for _, d := range []*agentsmcp.UpstreamDefinition{
		{Name: "x", Kind: "stdio", Config: upstreamConfig("https://x.example")},
		{Name: "x", Kind: "HTTP", Config: upstreamConfig("https://x.example")},
		{Name: "x", Kind: agentsmcp.UpstreamKindHTTP, Config: bigUpstreamConfig(agentsmcp.MaxHTTPSourceConfigBytes + 1)},
		{Name: "x", Kind: agentsmcp.UpstreamKindMCP, Config: bigUpstreamConfig(agentsmcp.MaxUpstreamConfigBytes + 1)},
	} {
		wantCode(t, svc.CreateUpstreamDefinition(t.Context(), d), agentsmcp.EINVALID, fmt.Sprintf("kind %q, %d bytes", d.Kind, len(d.Config)))
	}
	if got := listKind(t, svc, agentsmcp.UpstreamKindHTTP); len(got) != 0 {
		t.Errorf("invalid definitions were stored: %q", upstreamNames(got))
	}
}
