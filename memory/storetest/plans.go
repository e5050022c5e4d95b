package storetest

import (
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
	suite["ThoughtRoundTrip"] = testThoughtRoundTrip
	suite["ThoughtAssignsIDAndTime"] = testThoughtAssignsIDAndTime
	suite["ThoughtConflict"] = testThoughtConflict
	suite["ThoughtInvalid"] = testThoughtInvalid
	suite["ThoughtNotFound"] = testThoughtNotFound
	suite["ThoughtOrderAndPaging"] = testThoughtOrderAndPaging
	suite["ThoughtBadCursor"] = testThoughtBadCursor
	suite["ThoughtTextIsPlainWords"] = testThoughtTextIsPlainWords

	suite["PlanRoundTrip"] = testPlanRoundTrip
	suite["PlanConflict"] = testPlanConflict
	suite["PlanInvalid"] = testPlanInvalid
	suite["PlanNotFound"] = testPlanNotFound
	suite["PlanFilterAndPaging"] = testPlanFilterAndPaging
	suite["PlanBadCursor"] = testPlanBadCursor
}

// checkThought compares every field of got with want.
func checkThought(t *testing.T, got, want *agentsmcp.Thought) {
	t.Helper()
	if got == nil {
		t.Fatalf("thought %s: nil", want.ID)
	}
	g, w := *got, *want
	checkTime(t, "thought "+w.ID+" CreatedAt", g.CreatedAt, w.CreatedAt)
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	for _, p := range []struct{ g, w *[]string }{
		{&g.SubGoals, &w.SubGoals}, {&g.Approaches, &w.Approaches}, {&g.Constraints, &w.Constraints},
		{&g.Assumptions, &w.Assumptions}, {&g.Uncertainties, &w.Uncertainties},
	} {
		*p.g, *p.w = orEmpty(*p.g), orEmpty(*p.w)
	}
	if g.RecommendedTools == nil {
		g.RecommendedTools = []agentsmcp.ToolRecommendation{}
	}
	if w.RecommendedTools == nil {
		w.RecommendedTools = []agentsmcp.ToolRecommendation{}
	}
	if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Errorf("thought %s:\n got %#v\nwant %#v", w.ID, g, w)
	}
}

func thoughtID(th *agentsmcp.Thought) string { return th.ID }

func testThoughtRoundTrip(t *testing.T, s Services) {
	ctx := t.Context()
	tests := []struct {
		name string
		th   agentsmcp.Thought
	}{
		{"every field", agentsmcp.Thought{
			Principal:     "key:0123456789ab",
			Request:       "Summarise the open issues of agents-mcp and file a report",
			SubGoals:      []string{"list open issues", "read each issue", "write the report"},
			Reasoning:     "The github upstream lists issues;\nthe files upstream writes.\t\"quoted\" \\ naïve ☕",
			Approaches:    []string{"list then read", "search"},
			Constraints:   []string{"read-only on github"},
			Assumptions:   []string{"the repository is public"},
			Uncertainties: []string{"how many issues there are"},
			Confidence:    0.875,
			RecommendedTools: []agentsmcp.ToolRecommendation{
				{Tool: "github__list_issues", Reason: "lists them"},
				{Tool: "files__write_file"},
			},
			CreatedAt: time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("CET", 3600)),
		}},
		{"explicit id and minimal", agentsmcp.Thought{
			ID:        agentsmcp.NewID(agentsmcp.ThoughtIDPrefix),
			Request:   "ping",
			CreatedAt: at(1),
		}},
		{"empty lists", agentsmcp.Thought{
			Request: "x", SubGoals: []string{}, Approaches: []string{}, RecommendedTools: []agentsmcp.ToolRecommendation{},
			Confidence: math.SmallestNonzeroFloat64, CreatedAt: at(2),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := tt.th
			if err := s.Thoughts.CreateThought(ctx, &th); err != nil {
				t.Fatalf("CreateThought: %v", err)
			}
			if tt.th.ID != "" && th.ID != tt.th.ID {
				t.Errorf("CreateThought changed the given id %q to %q", tt.th.ID, th.ID)
			}
			checkID(t, "ID", th.ID, agentsmcp.ThoughtIDPrefix)
			checkTime(t, "returned CreatedAt", th.CreatedAt, tt.th.CreatedAt)
			want := tt.th
			want.ID = th.ID
			got, err := s.Thoughts.FindThoughtByID(ctx, th.ID)
			if err != nil {
				t.Fatalf("FindThoughtByID: %v", err)
			}
			checkThought(t, got, &want)
			items, _, err := s.Thoughts.FindThoughts(ctx, agentsmcp.ThoughtFilter{Text: tt.th.Request})
			if err != nil || len(items) != 1 {
				t.Fatalf("FindThoughts by its request: %d items, %v; want 1", len(items), err)
			}
			checkThought(t, items[0], &want)
		})
	}
}

func testThoughtAssignsIDAndTime(t *testing.T, s Services) {
	th := &agentsmcp.Thought{Request: "assigned"}
	before := time.Now()
	if err := s.Thoughts.CreateThought(t.Context(), th); err != nil {
		t.Fatalf("CreateThought: %v", err)
	}
	after := time.Now()
	checkID(t, "assigned ID", th.ID, agentsmcp.ThoughtIDPrefix)
	checkRecent(t, "assigned CreatedAt", th.CreatedAt, before, after)
	got, err := s.Thoughts.FindThoughtByID(t.Context(), th.ID)
	if err != nil {
		t.Fatalf("FindThoughtByID: %v", err)
	}
	checkThought(t, got, th)
}

func testThoughtConflict(t *testing.T, s Services) {
	id := agentsmcp.NewID(agentsmcp.ThoughtIDPrefix)
	first := agentsmcp.Thought{ID: id, Request: "first", CreatedAt: at(0)}
	if err := s.Thoughts.CreateThought(t.Context(), &first); err != nil {
		t.Fatalf("CreateThought: %v", err)
	}
	second := agentsmcp.Thought{ID: id, Request: "second", CreatedAt: at(1)}
	wantCode(t, s.Thoughts.CreateThought(t.Context(), &second), agentsmcp.ECONFLICT, "CreateThought with a taken id")
	got, err := s.Thoughts.FindThoughtByID(t.Context(), id)
	if err != nil {
		t.Fatalf("FindThoughtByID: %v", err)
	}
	checkThought(t, got, &first)
}

func testThoughtInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	for name, th := range map[string]*agentsmcp.Thought{
		"nil":              nil,
		"empty request":    {},
		"blank request":    {Request: " \n"},
		"huge request":     {Request: strings.Repeat("x", agentsmcp.MaxQueryTextBytes+1)},
		"huge reasoning":   {Request: "r", Reasoning: strings.Repeat("x", agentsmcp.MaxThoughtTextBytes+1)},
		"confidence":       {Request: "r", Confidence: 1.5},
		"NaN confidence":   {Request: "r", Confidence: math.NaN()},
		"too many goals":   {Request: "r", SubGoals: make([]string, agentsmcp.MaxListItems+1)},
		"tool without one": {Request: "r", RecommendedTools: []agentsmcp.ToolRecommendation{{Reason: "why"}}},
		"id of a plan":     {Request: "r", ID: agentsmcp.NewID(agentsmcp.PlanIDPrefix)},
	} {
		wantCode(t, s.Thoughts.CreateThought(ctx, th), agentsmcp.EINVALID, name)
	}
	items, _, err := s.Thoughts.FindThoughts(ctx, agentsmcp.ThoughtFilter{})
	if err != nil || len(items) != 0 {
		t.Fatalf("invalid thoughts were stored: %d items, %v", len(items), err)
	}
}

func testThoughtNotFound(t *testing.T, s Services) {
	th := agentsmcp.Thought{Request: "present"}
	if err := s.Thoughts.CreateThought(t.Context(), &th); err != nil {
		t.Fatalf("CreateThought: %v", err)
	}
	for _, id := range []string{agentsmcp.NewID(agentsmcp.ThoughtIDPrefix), "", "nope", th.ID + "x", strings.ToLower(th.ID)} {
		_, err := s.Thoughts.FindThoughtByID(t.Context(), id)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindThoughtByID(%q)", id))
	}
}

func testThoughtOrderAndPaging(t *testing.T, s Services) {
	ctx := t.Context()
	var all []*agentsmcp.Thought
	for i := range 23 {
		th := &agentsmcp.Thought{Request: fmt.Sprint("request ", i), CreatedAt: at(i / 3)}
		if err := s.Thoughts.CreateThought(ctx, th); err != nil {
			t.Fatalf("CreateThought %d: %v", i, err)
		}
		all = append(all, th)
	}
	want := newestFirstIDs(all, func(th *agentsmcp.Thought) (time.Time, string) { return th.CreatedAt, th.ID })
	for _, limit := range pageLimits {
		find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Thought, string, error) {
			return s.Thoughts.FindThoughts(ctx, agentsmcp.ThoughtFilter{Cursor: cursor, Limit: limit})
		}
		if got := pageAll(t, find, limit, thoughtID); !slices.Equal(got, want) {
			t.Errorf("limit %d: paged\n%v\nwant\n%v", limit, got, want)
		}
	}
	// A text filter pages too: "request" is in every one.
	find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Thought, string, error) {
		return s.Thoughts.FindThoughts(ctx, agentsmcp.ThoughtFilter{Text: "REQUEST", Cursor: cursor, Limit: limit})
	}
	if got := pageAll(t, find, 4, thoughtID); !slices.Equal(got, want) {
		t.Errorf("text filter: paged\n%v\nwant\n%v", got, want)
	}
}

// newestFirstIDs returns the ids of items newest first, ties by id
// descending.
func newestFirstIDs[T any](items []T, key func(T) (time.Time, string)) []string {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b T) int {
		ta, ia := key(a)
		tb, ib := key(b)
		if c := tb.Compare(ta); c != 0 {
			return c
		}
		return strings.Compare(ib, ia)
	})
	ids := make([]string, len(items))
	for i, it := range items {
		_, ids[i] = key(it)
	}
	return ids
}

func testThoughtBadCursor(t *testing.T, s Services) {
	th := agentsmcp.Thought{Request: "one"}
	if err := s.Thoughts.CreateThought(t.Context(), &th); err != nil {
		t.Fatalf("CreateThought: %v", err)
	}
	for _, c := range badCursors {
		_, _, err := s.Thoughts.FindThoughts(t.Context(), agentsmcp.ThoughtFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindThoughts(cursor %q)", c))
	}
}

func testThoughtTextIsPlainWords(t *testing.T, s Services) {
	ctx := t.Context()
	for i, text := range textCorpus {
		th := agentsmcp.Thought{Request: text, Reasoning: "alpha nomatch", SubGoals: []string{"alpha"}, CreatedAt: at(i)}
		if err := s.Thoughts.CreateThought(ctx, &th); err != nil {
			t.Fatalf("CreateThought(%q): %v", text, err)
		}
	}
	checkTextCases(t, true, func(text string) ([]string, error) {
		items, _, err := s.Thoughts.FindThoughts(ctx, agentsmcp.ThoughtFilter{Text: text, Limit: agentsmcp.MaxPageSize})
		var texts []string
		for _, it := range items {
			texts = append(texts, it.Request)
		}
		return texts, err
	})
}

// checkPlan compares every field of got with want, JSON byte for byte.
func checkPlan(t *testing.T, got, want *agentsmcp.Plan) {
	t.Helper()
	if got == nil {
		t.Fatalf("plan %s: nil", want.ID)
	}
	g, w := *got, *want
	checkTime(t, "plan "+w.ID+" CreatedAt", g.CreatedAt, w.CreatedAt)
	checkRaw(t, "plan "+w.ID+" Inputs", g.Inputs, w.Inputs)
	if len(g.Steps) != len(w.Steps) {
		t.Fatalf("plan %s: %d steps, want %d", w.ID, len(g.Steps), len(w.Steps))
	}
	g.Steps, w.Steps = slices.Clone(g.Steps), slices.Clone(w.Steps)
	for i := range w.Steps {
		checkRaw(t, fmt.Sprintf("plan %s step %d Arguments", w.ID, i), g.Steps[i].Arguments, w.Steps[i].Arguments)
		g.Steps[i].Arguments, w.Steps[i].Arguments = nil, nil
		if len(g.Steps[i].DependsOn) == 0 && len(w.Steps[i].DependsOn) == 0 {
			g.Steps[i].DependsOn, w.Steps[i].DependsOn = nil, nil
		}
		if (g.Steps[i].Retry == nil) != (w.Steps[i].Retry == nil) ||
			g.Steps[i].Retry != nil && *g.Steps[i].Retry != *w.Steps[i].Retry {
			t.Errorf("plan %s step %d Retry = %+v, want %+v", w.ID, i, g.Steps[i].Retry, w.Steps[i].Retry)
		}
		g.Steps[i].Retry, w.Steps[i].Retry = nil, nil
	}
	g.CreatedAt, w.CreatedAt, g.Inputs, w.Inputs = time.Time{}, time.Time{}, nil, nil
	if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Errorf("plan %s:\n got %#v\nwant %#v", w.ID, g, w)
	}
}

func planID(p *agentsmcp.Plan) string { return p.ID }

// fullPlan has every field set, arguments with references to other steps,
// and JSON whose spacing must survive.
func fullPlan() agentsmcp.Plan {
	return agentsmcp.Plan{
		ThoughtID: agentsmcp.NewID(agentsmcp.ThoughtIDPrefix),
		Principal: "jwt:alice@example.com",
		Request:   "Summarise the open issues and file a report — naïve ☕ \"q\"",
		Goal:      "summarise repository issues",
		Steps: []agentsmcp.PlanStep{
			{ID: "list", Tool: "github__list_issues", Arguments: json.RawMessage(`{"state": "open",  "labels": ["bug"], "a.b": {"$gt": 1}}`),
				Description: "list the open issues"},
			{ID: "read-1", Tool: "github__get_issue", DependsOn: []string{"list"},
				Arguments: json.RawMessage("{\n  \"number\": \"{{steps.list.output.items.0.number}}\",\n  \"html\": \"<b>&amp;</b> \\u00e9\"\n}"),
				Retry:     &agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: 1500 * time.Millisecond, MaxBackoff: time.Minute},
				Timeout:   30*time.Second + 1},
			{ID: "write_report", Tool: "files__write_file", DependsOn: []string{"read-1", "list"}, NeedsConfirmation: true,
				Retry: &agentsmcp.RetryPolicy{MaxAttempts: 1}},
		},
		Inputs:    json.RawMessage(`{"type":"object","properties":{"repo":{"type":"string"}},"required":["repo"]}`),
		CreatedAt: time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("PST", -8*3600)),
	}
}

func testPlanRoundTrip(t *testing.T, s Services) {
	ctx := t.Context()
	minimal := agentsmcp.Plan{Request: "ping", Steps: []agentsmcp.PlanStep{{ID: "p", Tool: "everything__echo"}}}
	explicit := fullPlan()
	explicit.ID = agentsmcp.NewID(agentsmcp.PlanIDPrefix)
	explicit.CreatedAt = at(3)
	for name, p := range map[string]agentsmcp.Plan{"every field": fullPlan(), "minimal": minimal, "explicit id": explicit} {
		t.Run(name, func(t *testing.T) {
			in := p
			in.Steps = slices.Clone(p.Steps)
			before := time.Now()
			if err := s.Plans.CreatePlan(ctx, &in); err != nil {
				t.Fatalf("CreatePlan: %v", err)
			}
			after := time.Now()
			checkID(t, "ID", in.ID, agentsmcp.PlanIDPrefix)
			if p.ID != "" && in.ID != p.ID {
				t.Errorf("CreatePlan changed the given id %q to %q", p.ID, in.ID)
			}
			want := p
			want.ID = in.ID
			if p.CreatedAt.IsZero() {
				checkRecent(t, "assigned CreatedAt", in.CreatedAt, before, after)
				want.CreatedAt = in.CreatedAt
			}
			got, err := s.Plans.FindPlanByID(ctx, in.ID)
			if err != nil {
				t.Fatalf("FindPlanByID: %v", err)
			}
			checkPlan(t, got, &want)
			items, _, err := s.Plans.FindPlans(ctx, agentsmcp.PlanFilter{ThoughtID: p.ThoughtID})
			if err != nil {
				t.Fatalf("FindPlans: %v", err)
			}
			if i := slices.IndexFunc(items, func(x *agentsmcp.Plan) bool { return x.ID == in.ID }); i < 0 {
				t.Errorf("FindPlans(thought %q) lacks %s", p.ThoughtID, in.ID)
			} else {
				checkPlan(t, items[i], &want)
			}
		})
	}
}

func testPlanConflict(t *testing.T, s Services) {
	first := fullPlan()
	first.ID = agentsmcp.NewID(agentsmcp.PlanIDPrefix)
	if err := s.Plans.CreatePlan(t.Context(), &first); err != nil {
		t.Fatalf("CreatePlan: %v", err)
	}
	second := agentsmcp.Plan{ID: first.ID, Request: "other", Steps: []agentsmcp.PlanStep{{ID: "x", Tool: "x"}}}
	wantCode(t, s.Plans.CreatePlan(t.Context(), &second), agentsmcp.ECONFLICT, "CreatePlan with a taken id")
	got, err := s.Plans.FindPlanByID(t.Context(), first.ID)
	if err != nil {
		t.Fatalf("FindPlanByID: %v", err)
	}
	checkPlan(t, got, &first)
}

func testPlanInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	tests := []struct {
		name   string
		change func(p *agentsmcp.Plan)
	}{
		{"no steps", func(p *agentsmcp.Plan) { p.Steps = nil }},
		{"no request", func(p *agentsmcp.Plan) { p.Request = "" }},
		{"cycle", func(p *agentsmcp.Plan) { p.Steps[0].DependsOn = []string{"write_report"} }},
		{"self dependency", func(p *agentsmcp.Plan) { p.Steps[0].DependsOn = []string{"list"} }},
		{"unknown dependency", func(p *agentsmcp.Plan) { p.Steps[1].DependsOn = []string{"nope"} }},
		{"duplicate step", func(p *agentsmcp.Plan) { p.Steps[1].ID = "list" }},
		{"bad step id", func(p *agentsmcp.Plan) { p.Steps[1].ID = "Read" }},
		{"arguments not an object", func(p *agentsmcp.Plan) { p.Steps[0].Arguments = json.RawMessage(`[]`) }},
		{"arguments not JSON", func(p *agentsmcp.Plan) { p.Steps[0].Arguments = json.RawMessage(`{`) }},
		{"negative timeout", func(p *agentsmcp.Plan) { p.Steps[0].Timeout = -time.Second }},
		{"negative backoff", func(p *agentsmcp.Plan) { p.Steps[1].Retry.InitialBackoff = -1 }},
		{"inputs not an object", func(p *agentsmcp.Plan) { p.Inputs = json.RawMessage(`"x"`) }},
		{"bad thought id", func(p *agentsmcp.Plan) { p.ThoughtID = "$where" }},
	}
	for _, tt := range tests {
		p := fullPlan()
		p.Steps = slices.Clone(p.Steps)
		p.Steps[1].Retry = &agentsmcp.RetryPolicy{MaxAttempts: 2}
		tt.change(&p)
		wantCode(t, s.Plans.CreatePlan(ctx, &p), agentsmcp.EINVALID, tt.name)
	}
	wantCode(t, s.Plans.CreatePlan(ctx, nil), agentsmcp.EINVALID, "nil plan")
	items, _, err := s.Plans.FindPlans(ctx, agentsmcp.PlanFilter{})
	if err != nil || len(items) != 0 {
		t.Fatalf("invalid plans were stored: %d items, %v", len(items), err)
	}
}

func testPlanNotFound(t *testing.T, s Services) {
	p := fullPlan()
	if err := s.Plans.CreatePlan(t.Context(), &p); err != nil {
		t.Fatalf("CreatePlan: %v", err)
	}
	for _, id := range []string{agentsmcp.NewID(agentsmcp.PlanIDPrefix), "", p.ThoughtID, p.ID + "x"} {
		_, err := s.Plans.FindPlanByID(t.Context(), id)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindPlanByID(%q)", id))
	}
}

func testPlanFilterAndPaging(t *testing.T, s Services) {
	ctx := t.Context()
	thoughts := []string{agentsmcp.NewID(agentsmcp.ThoughtIDPrefix), agentsmcp.NewID(agentsmcp.ThoughtIDPrefix)}
	var all []*agentsmcp.Plan
	byThought := map[string][]*agentsmcp.Plan{}
	for i := range 17 {
		p := &agentsmcp.Plan{Request: fmt.Sprint("plan ", i), Steps: []agentsmcp.PlanStep{{ID: "s", Tool: "t"}}, CreatedAt: at(i / 2)}
		if i%3 != 2 {
			p.ThoughtID = thoughts[i%3]
		}
		if err := s.Plans.CreatePlan(ctx, p); err != nil {
			t.Fatalf("CreatePlan %d: %v", i, err)
		}
		all = append(all, p)
		byThought[p.ThoughtID] = append(byThought[p.ThoughtID], p)
	}
	key := func(p *agentsmcp.Plan) (time.Time, string) { return p.CreatedAt, p.ID }
	for _, tt := range []struct {
		thought string
		want    []string
	}{
		{"", newestFirstIDs(all, key)},
		{thoughts[0], newestFirstIDs(byThought[thoughts[0]], key)},
		{thoughts[1], newestFirstIDs(byThought[thoughts[1]], key)},
		{agentsmcp.NewID(agentsmcp.ThoughtIDPrefix), nil},
	} {
		for _, limit := range pageLimits {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Plan, string, error) {
				return s.Plans.FindPlans(ctx, agentsmcp.PlanFilter{ThoughtID: tt.thought, Cursor: cursor, Limit: limit})
			}
			if got := pageAll(t, find, limit, planID); !slices.Equal(got, tt.want) {
				t.Errorf("thought %q limit %d: paged\n%v\nwant\n%v", tt.thought, limit, got, tt.want)
			}
		}
	}
}

func testPlanBadCursor(t *testing.T, s Services) {
	p := fullPlan()
	if err := s.Plans.CreatePlan(t.Context(), &p); err != nil {
		t.Fatalf("CreatePlan: %v", err)
	}
	for _, c := range badCursors {
		_, _, err := s.Plans.FindPlans(t.Context(), agentsmcp.PlanFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindPlans(cursor %q)", c))
	}
}
