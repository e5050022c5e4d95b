package mcptools_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Principals of the visibility tests: two API keys.
var (
	alice = &agentsmcp.Principal{ID: "key:aaaaaaaaaaaa", Scopes: agentsmcp.Scopes}
	bob   = &agentsmcp.Principal{ID: "key:bbbbbbbbbbbb", Scopes: agentsmcp.Scopes}
)

// callAs calls a tool through the router as p, as an authenticated MCP
// request reaches it, and decodes its structured result into out.
func (e *env) callAs(t *testing.T, p *agentsmcp.Principal, name string, args any, out any) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx := agentsmcp.WithPrincipal(t.Context(), p)
	res, err := e.router.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: raw}})
	if err != nil {
		t.Fatalf("%s as %s: %v", name, p.ID, err)
	}
	if res.IsError {
		t.Fatalf("%s as %s: %s", name, p.ID, res.Content[0].(*mcp.TextContent).Text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
}

// aliceMemory stores what alice's calls and tasks left: an insight through
// store_insight, and a learning and a plan pattern as her task's learner
// writes them. It returns their ids.
func aliceMemory(t *testing.T, e *env) (insightID, learningID, patternID string) {
	t.Helper()
	var stored mcptools.StoreInsightResult
	e.callAs(t, alice, mcptools.StoreInsightName, map[string]any{
		"text": "the payroll export of acme lives in the finance vault", "type": "observation", "appliesTo": []string{"vault__read"},
	}, &stored)
	if stored.Insight.Principal != alice.ID {
		t.Fatalf("store_insight recorded principal %q, want %q", stored.Insight.Principal, alice.ID)
	}
	l := &agentsmcp.Learning{Query: "export the payroll of acme from the finance vault", Goal: "export payroll acme finance vault",
		Outcome: agentsmcp.OutcomeSuccess, Tools: []string{"vault__read"}, Steps: []string{"vault__read"}, Principal: alice.ID}
	if err := e.db.CreateLearning(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	p, err := e.db.RecordPatternUse(t.Context(), alice.ID, "export payroll acme finance vault", []string{"vault__read"}, true, l.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	return stored.Insight.ID, l.ID, p.ID
}

// seen runs every memory tool that reads learnings, insights or patterns
// as p, with a query that matches alice's memory, and returns the ids of
// the items found.
func seen(t *testing.T, e *env, p *agentsmcp.Principal) (ids []string, modes []string) {
	t.Helper()
	const query = "payroll export acme finance vault"
	var qm mcptools.QueryMemoryResult
	e.callAs(t, p, mcptools.QueryMemoryName, map[string]any{"query": query, "limit": 50}, &qm)
	modes = append(modes, qm.Mode)
	for _, it := range qm.Items {
		ids = append(ids, it.ID)
	}
	var st mcptools.SimilarTasksResult
	e.callAs(t, p, mcptools.GetSimilarTasksName, map[string]any{"query": query}, &st)
	modes = append(modes, st.Mode)
	for _, l := range st.Tasks {
		ids = append(ids, l.Learning.ID)
	}
	var sp mcptools.SuccessfulPlansResult
	e.callAs(t, p, mcptools.GetSuccessfulPlansName, map[string]any{"goal": query}, &sp)
	modes = append(modes, sp.Mode)
	for _, m := range sp.Plans {
		ids = append(ids, m.Pattern.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids), modes
}

// The attack: with several API keys, bob's query_memory (and every other
// memory tool) must not return what alice's calls and tasks left, by
// meaning or by words, unless memory is shared.
func TestMemoryIsConfinedToThePrincipal(t *testing.T) {
	for _, tt := range []struct {
		visibility agentsmcp.MemoryVisibility
		bobSees    bool
	}{
		{"", false}, // the zero value is the safe default
		{agentsmcp.VisibilityPrincipal, false},
		{agentsmcp.VisibilityShared, true},
	} {
		for _, mode := range []string{recall.ModeSemantic, recall.ModeLexical} {
			t.Run(fmt.Sprintf("%s/%s", cmpOr(string(tt.visibility), "zero"), mode), func(t *testing.T) {
				e := newEnvWith(t, tt.visibility)
				ins, lrn, pat := aliceMemory(t, e)
				all := []string{ins, lrn, pat}
				slices.Sort(all)
				e.embedder.hang.Store(mode == recall.ModeLexical)

				got, modes := seen(t, e, alice)
				if !slices.Equal(got, all) {
					t.Errorf("alice sees %v, want her own %v", got, all)
				}
				for _, m := range modes {
					if m != mode {
						t.Errorf("searched in mode %s, want %s", m, mode)
					}
				}
				got, _ = seen(t, e, bob)
				switch {
				case tt.bobSees && !slices.Equal(got, all):
					t.Errorf("bob sees %v under shared memory, want alice's %v", got, all)
				case !tt.bobSees && len(got) > 0:
					t.Errorf("bob sees %v of alice's memory", got)
				}
			})
		}
	}
}

// Memory without a principal (a server without credentials, or from
// before principals were recorded) is the anonymous principal's: the only
// caller of a server without credentials sees it, a key does not.
func TestAnonymousMemoryUnderPrincipalVisibility(t *testing.T) {
	e := newEnvWith(t, agentsmcp.VisibilityPrincipal)
	if err := e.db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "the payroll export of acme is monthly", Type: agentsmcp.InsightObservation}); err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	anonymous := &agentsmcp.Principal{ID: agentsmcp.AnonymousPrincipal, Scopes: agentsmcp.Scopes}
	if got, _ := seen(t, e, anonymous); len(got) != 1 {
		t.Errorf("the anonymous principal sees %v, want its insight", got)
	}
	var qm mcptools.QueryMemoryResult
	if msg := e.call(t, mcptools.QueryMemoryName, map[string]any{"query": "payroll export acme"}, &qm); msg != "" || len(qm.Items) != 1 {
		t.Errorf("a caller without principal sees %+v %s, want the insight", qm.Items, msg)
	}
	if got, _ := seen(t, e, bob); len(got) != 0 {
		t.Errorf("a key sees %v of the anonymous memory", got)
	}
}

// The vector index knows no principals: a semantic search confined to one
// principal must find its records even when more than a page of another
// principal's records are nearer to the query, and never return those.
func TestConfinedSemanticSearchLooksPastOtherPrincipals(t *testing.T) {
	e := newEnvWith(t, agentsmcp.VisibilityPrincipal)
	const text = "rotate the staging database credentials every week"
	for i := range 260 { // more than the first round of candidates
		in := &agentsmcp.Insight{Text: text, Type: agentsmcp.InsightObservation, Principal: bob.ID}
		if i%2 == 1 {
			in.Text = text + " now"
		}
		if err := e.db.CreateInsight(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	mine := &agentsmcp.Insight{Text: "rotate the staging database credentials every month", Type: agentsmcp.InsightObservation, Principal: alice.ID}
	if err := e.db.CreateInsight(t.Context(), mine); err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	var qm mcptools.QueryMemoryResult
	e.callAs(t, alice, mcptools.QueryMemoryName, map[string]any{"query": text, "kinds": []string{"insights"}}, &qm)
	if qm.Mode != recall.ModeSemantic || len(qm.Items) != 1 || qm.Items[0].ID != mine.ID {
		t.Errorf("alice's search = %s %+v, want only her insight %s", qm.Mode, qm.Items, mine.ID)
	}
	e.callAs(t, bob, mcptools.QueryMemoryName, map[string]any{"query": text, "kinds": []string{"insights"}, "limit": 50}, &qm)
	if len(qm.Items) != 50 || qm.NextCursor == "" {
		t.Errorf("bob's search found %d items (next %q), want a full page of his own", len(qm.Items), qm.NextCursor)
	}
	for _, it := range qm.Items {
		if it.Insight.Principal != bob.ID {
			t.Errorf("bob's search returned %s of %s", it.ID, it.Insight.Principal)
		}
	}
}

func cmpOr(s, zero string) string {
	if s == "" {
		return zero
	}
	return s
}
