package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["CatalogRoundTrip"] = testCatalogRoundTrip
	suite["CatalogReplaceRemovesStale"] = testCatalogReplaceRemovesStale
	suite["CatalogNameMovesSource"] = testCatalogNameMovesSource
	suite["CatalogInvalid"] = testCatalogInvalid
	suite["CatalogNotFound"] = testCatalogNotFound
	suite["CatalogOrderAndPaging"] = testCatalogOrderAndPaging
	suite["CatalogBadCursor"] = testCatalogBadCursor
}

// checkRaw compares JSON byte for byte: stores keep it verbatim. Nil and
// empty are alike.
func checkRaw(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s = %q, want %q (verbatim)", what, got, want)
	}
}

// checkTimeOrZero is checkTime, except that a zero want needs a zero got.
func checkTimeOrZero(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if want.IsZero() {
		if !got.IsZero() {
			t.Errorf("%s = %v, want the zero time", what, got)
		}
		return
	}
	checkTime(t, what, got, want)
}

// sameJSON compares the JSON forms of got and want, for the fields that
// checkRaw and checkTime do not cover.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// checkCatalogTool compares every field of got with want.
func checkCatalogTool(t *testing.T, got, want *agentsmcp.CatalogTool) {
	t.Helper()
	if got == nil {
		t.Fatalf("catalog tool %s: nil", want.Name)
	}
	g, w := *got, *want
	checkTime(t, "tool "+w.Name+" UpdatedAt", g.UpdatedAt, w.UpdatedAt)
	checkRaw(t, "tool "+w.Name+" InputSchema", g.InputSchema, w.InputSchema)
	checkRaw(t, "tool "+w.Name+" OutputSchema", g.OutputSchema, w.OutputSchema)
	if len(g.Embedding) != len(w.Embedding) || !slices.EqualFunc(g.Embedding, w.Embedding, func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b)
	}) {
		t.Errorf("tool %s Embedding = %v, want %v", w.Name, g.Embedding, w.Embedding)
	}
	g.UpdatedAt, w.UpdatedAt = time.Time{}, time.Time{}
	g.InputSchema, w.InputSchema, g.OutputSchema, w.OutputSchema = nil, nil, nil, nil
	g.Embedding, w.Embedding = nil, nil
	sameJSON(t, "tool "+w.Name, g, w)
}

func catalogName(c *agentsmcp.CatalogTool) string { return c.Name }

func replace(t *testing.T, s Services, source string, tools ...*agentsmcp.CatalogTool) {
	t.Helper()
	if err := s.Catalog.ReplaceCatalogSource(t.Context(), source, tools); err != nil {
		t.Fatalf("ReplaceCatalogSource(%q, %d tools): %v", source, len(tools), err)
	}
}

// catalogOf lists the tools of source (every tool for ""), by name.
func catalogOf(t *testing.T, s Services, source string) []*agentsmcp.CatalogTool {
	t.Helper()
	items, next, err := s.Catalog.FindCatalogTools(t.Context(), agentsmcp.CatalogFilter{Source: source, Limit: agentsmcp.MaxPageSize})
	if err != nil || next != "" {
		t.Fatalf("FindCatalogTools(%q): %v, next %q", source, err, next)
	}
	return items
}

// checkCatalog checks that source holds exactly want (by name), field by
// field.
func checkCatalog(t *testing.T, s Services, source string, want ...*agentsmcp.CatalogTool) {
	t.Helper()
	got := catalogOf(t, s, source)
	want = slices.Clone(want)
	slices.SortFunc(want, func(a, b *agentsmcp.CatalogTool) int { return strings.Compare(a.Name, b.Name) })
	var gotNames, wantNames []string
	for _, c := range got {
		gotNames = append(gotNames, c.Name)
	}
	for _, c := range want {
		wantNames = append(wantNames, c.Name)
	}
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("source %q holds %v, want %v", source, gotNames, wantNames)
	}
	for i := range want {
		checkCatalogTool(t, got[i], want[i])
	}
}

func catalogTool(name, source string, sec int) *agentsmcp.CatalogTool {
	return &agentsmcp.CatalogTool{
		Name: name, Source: source, Title: "Title of " + name, Description: "does " + name,
		InputSchema: json.RawMessage(`{"type":"object"}`), Hash: "h-" + name, EmbedderID: "hash-256",
		Embedding: []float32{1, float32(sec), -0.25}, UpdatedAt: at(sec),
	}
}

func testCatalogRoundTrip(t *testing.T, s Services) {
	ctx := t.Context()
	full := &agentsmcp.CatalogTool{
		Name:   "files__search_files",
		Source: "files",
		Title:  "Search files",
		Description: "Recursively search for files and directories matching a pattern. " +
			"naïve café ☕ \"quotes\" \\ $where {{x}}",
		// Verbatim: spacing, key order and escapes survive.
		InputSchema:  json.RawMessage("{ \"type\" : \"object\",\n  \"properties\": {\"path\": {\"type\": \"string\", \"description\": \"<dir> & \\u00e9\"}, \"a.b\": {}, \"$ref\": 1},\n  \"required\": [\"path\"] }"),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"matches":{"type":"array"}}}`),
		Destructive:  true,
		ReadOnly:     false,
		Hash:         "sha256:0123456789abcdef",
		EmbedderID:   "openai/text-embedding-3-small@1536",
		Embedding:    []float32{0, 1, -1, 0.1, -3.4028235e38, 1.4e-45, 3.1415927, float32(math.Copysign(0, -1))},
		UpdatedAt:    time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("CET", 3600)),
	}
	minimal := &agentsmcp.CatalogTool{Name: "files__read", ReadOnly: true, UpdatedAt: at(5)} // Source given by the call
	before := time.Now()
	assigned := &agentsmcp.CatalogTool{Name: "files-x_Y9", Source: "files"} // UpdatedAt assigned
	replace(t, s, "files", full, minimal, assigned)
	after := time.Now()
	if minimal.Source != "files" {
		t.Errorf("a tool without Source got Source %q, want the call's", minimal.Source)
	}
	got, err := s.Catalog.FindCatalogTool(ctx, assigned.Name)
	if err != nil {
		t.Fatalf("FindCatalogTool: %v", err)
	}
	checkRecent(t, "assigned UpdatedAt", got.UpdatedAt, before, after)
	assigned.UpdatedAt = got.UpdatedAt
	for _, want := range []*agentsmcp.CatalogTool{full, minimal, assigned} {
		got, err := s.Catalog.FindCatalogTool(ctx, want.Name)
		if err != nil {
			t.Fatalf("FindCatalogTool(%s): %v", want.Name, err)
		}
		checkCatalogTool(t, got, want)
	}
	checkCatalog(t, s, "files", full, minimal, assigned)
	checkCatalog(t, s, "", full, minimal, assigned)
}

func testCatalogReplaceRemovesStale(t *testing.T, s Services) {
	a1, a2, a3 := catalogTool("a1", "alpha", 1), catalogTool("a2", "alpha", 2), catalogTool("a3", "alpha", 3)
	b1, b2 := catalogTool("b1", "beta", 4), catalogTool("b2", "beta", 5)
	replace(t, s, "alpha", a1, a2, a3)
	replace(t, s, "beta", b1, b2)
	checkCatalog(t, s, "alpha", a1, a2, a3)
	checkCatalog(t, s, "beta", b1, b2)

	// a2 changes, a1 and a3 go, a4 comes; beta is untouched.
	a2v2 := catalogTool("a2", "alpha", 20)
	a2v2.Description, a2v2.Hash, a2v2.Embedding = "changed", "h2", []float32{9, 8}
	a2v2.InputSchema, a2v2.OutputSchema, a2v2.Destructive = nil, json.RawMessage(`{}`), true
	a4 := catalogTool("a4", "alpha", 6)
	replace(t, s, "alpha", a2v2, a4)
	checkCatalog(t, s, "alpha", a2v2, a4)
	checkCatalog(t, s, "beta", b1, b2)
	checkCatalog(t, s, "", a2v2, a4, b1, b2)
	for _, gone := range []string{"a1", "a3"} {
		_, err := s.Catalog.FindCatalogTool(t.Context(), gone)
		wantCode(t, err, agentsmcp.ENOTFOUND, "FindCatalogTool of removed "+gone)
	}

	// The same set again changes nothing.
	replace(t, s, "alpha", a2v2, a4)
	checkCatalog(t, s, "alpha", a2v2, a4)

	// An empty set removes the source.
	replace(t, s, "alpha")
	checkCatalog(t, s, "alpha")
	checkCatalog(t, s, "", b1, b2)
	replace(t, s, "gamma") // an unknown source: nothing to remove
	checkCatalog(t, s, "", b1, b2)
}

func testCatalogNameMovesSource(t *testing.T, s Services) {
	a, shared := catalogTool("a", "alpha", 1), catalogTool("shared", "alpha", 2)
	b := catalogTool("b", "beta", 3)
	replace(t, s, "alpha", a, shared)
	replace(t, s, "beta", b)
	moved := catalogTool("shared", "beta", 4)
	moved.Description = "now beta's"
	replace(t, s, "beta", b, moved)
	checkCatalog(t, s, "alpha", a)
	checkCatalog(t, s, "beta", b, moved)
	// Replacing alpha again must not take beta's tool away.
	replace(t, s, "alpha", a)
	checkCatalog(t, s, "beta", b, moved)
}

func testCatalogInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	keep := catalogTool("kept", "alpha", 1)
	replace(t, s, "alpha", keep)
	tests := []struct {
		name   string
		source string
		tools  []*agentsmcp.CatalogTool
	}{
		{"empty source", "", []*agentsmcp.CatalogTool{catalogTool("x", "", 1)}},
		{"nil tool", "alpha", []*agentsmcp.CatalogTool{nil}},
		{"bad name", "alpha", []*agentsmcp.CatalogTool{catalogTool("has space", "alpha", 1)}},
		{"empty name", "alpha", []*agentsmcp.CatalogTool{catalogTool("", "alpha", 1)}},
		{"long name", "alpha", []*agentsmcp.CatalogTool{catalogTool(strings.Repeat("n", 65), "alpha", 1)}},
		{"other source", "alpha", []*agentsmcp.CatalogTool{catalogTool("x", "beta", 1)}},
		{"twice", "alpha", []*agentsmcp.CatalogTool{catalogTool("x", "alpha", 1), catalogTool("x", "alpha", 2)}},
		{"schema not an object", "alpha", []*agentsmcp.CatalogTool{{Name: "x", InputSchema: json.RawMessage(`"{}"`)}}},
		{"schema not JSON", "alpha", []*agentsmcp.CatalogTool{{Name: "x", OutputSchema: json.RawMessage(`{"a"}`)}}},
		{"NaN embedding", "alpha", []*agentsmcp.CatalogTool{{Name: "x", Embedding: []float32{float32(math.NaN())}}}},
		{"huge description", "alpha", []*agentsmcp.CatalogTool{{Name: "x", Description: strings.Repeat("d", agentsmcp.MaxCatalogTextBytes+1)}}},
	}
	for _, tt := range tests {
		// A valid tool first: an invalid set changes nothing at all.
		tools := append([]*agentsmcp.CatalogTool{catalogTool("valid", tt.source, 2)}, tt.tools...)
		wantCode(t, s.Catalog.ReplaceCatalogSource(ctx, tt.source, tools), agentsmcp.EINVALID, tt.name)
	}
	checkCatalog(t, s, "", keep)
}

func testCatalogNotFound(t *testing.T, s Services) {
	replace(t, s, "alpha", catalogTool("present", "alpha", 1))
	for _, name := range []string{"absent", "", "Present", "present ", ".*", "$where"} {
		_, err := s.Catalog.FindCatalogTool(t.Context(), name)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindCatalogTool(%q)", name))
	}
	items, _, err := s.Catalog.FindCatalogTools(t.Context(), agentsmcp.CatalogFilter{Source: "nope"})
	if err != nil || len(items) != 0 {
		t.Errorf("FindCatalogTools of an unknown source: %d items, %v", len(items), err)
	}
}

func testCatalogOrderAndPaging(t *testing.T, s Services) {
	// 23 tools in two sources, inserted out of name order; names compare
	// byte-wise (upper case before lower case, '-' before digits).
	var alpha, beta []*agentsmcp.CatalogTool
	for i := range 23 {
		name := fmt.Sprintf("t%02d", (i*7)%23)
		switch i % 4 {
		case 1:
			name = "T-" + name
		case 2:
			name = "t_" + name
		}
		if i%3 == 0 {
			beta = append(beta, catalogTool(name, "beta", i))
		} else {
			alpha = append(alpha, catalogTool(name, "alpha", i))
		}
	}
	replace(t, s, "alpha", alpha...)
	replace(t, s, "beta", beta...)
	names := func(tools ...*agentsmcp.CatalogTool) []string {
		var out []string
		for _, c := range tools {
			out = append(out, c.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		source string
		want   []string
	}{
		{"", names(append(slices.Clone(alpha), beta...)...)},
		{"alpha", names(alpha...)},
		{"beta", names(beta...)},
	} {
		for _, limit := range pageLimits {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.CatalogTool, string, error) {
				return s.Catalog.FindCatalogTools(ctx, agentsmcp.CatalogFilter{Source: tt.source, Cursor: cursor, Limit: limit})
			}
			if got := pageAll(t, find, limit, catalogName); !slices.Equal(got, tt.want) {
				t.Errorf("source %q limit %d: paged\n%v\nwant (by name)\n%v", tt.source, limit, got, tt.want)
			}
		}
	}
}

func testCatalogBadCursor(t *testing.T, s Services) {
	replace(t, s, "alpha", catalogTool("a", "alpha", 1), catalogTool("b", "alpha", 2))
	for _, c := range badCursors {
		_, _, err := s.Catalog.FindCatalogTools(t.Context(), agentsmcp.CatalogFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindCatalogTools(cursor %q)", c))
	}
}
