package storetest

import (
	"context"
	"slices"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// The principal of memory (see agentsmcp.MemoryVisibility): every
// insight, learning and plan pattern records whose call or task produced
// it, the anonymous principal for none, and the Find* methods select by it.

func init() {
	suite["MemoryPrincipalInsights"] = testPrincipalInsights
	suite["MemoryPrincipalLearnings"] = testPrincipalLearnings
	suite["MemoryPrincipalPatterns"] = testPrincipalPatterns
}

// Principals of the tests: two callers with credentials, and none.
const (
	principalA = "key:aaaaaaaaaaaa"
	principalB = "jwt:bob@example.com"
)

// idsOf returns ids[i] for every i of which, in order.
func idsOf(ids []string, which []int) []string {
	var out []string
	for _, i := range which {
		out = append(out, ids[i])
	}
	return out
}

func testPrincipalInsights(t *testing.T, s Services) {
	ctx := t.Context()
	data := []agentsmcp.Insight{
		{Text: "search files slowly", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"files"}, Principal: principalA},       // 0
		{Text: "search files slowly", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"files"}, Principal: principalB},       // 1
		{Text: "search files slowly", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"files"}},                              // 2: anonymous
		{Text: "list directory first", Type: agentsmcp.InsightBestPractice, AppliesTo: []string{"files"}, Principal: principalA}, // 3
		{Text: "secret plan of b", Type: agentsmcp.InsightObservation, Principal: principalB},                                    // 4
		{Text: "anonymous remark", Type: agentsmcp.InsightObservation, Principal: agentsmcp.AnonymousPrincipal},                  // 5
	}
	ids := make([]string, len(data))
	for i := range data {
		want := agentsmcp.MemoryOwner(data[i].Principal)
		data[i].CreatedAt = at(i)
		if err := s.Insights.CreateInsight(ctx, &data[i]); err != nil {
			t.Fatalf("CreateInsight %d: %v", i, err)
		}
		ids[i] = data[i].ID
		if data[i].Principal != want {
			t.Errorf("CreateInsight %d left Principal %q, want %q", i, data[i].Principal, want)
		}
		got, err := s.Insights.FindInsightByID(ctx, ids[i])
		if err != nil {
			t.Fatalf("FindInsightByID %d: %v", i, err)
		}
		if got.Principal != want {
			t.Errorf("insight %d has Principal %q, want %q", i, got.Principal, want)
		}
	}
	tests := []struct {
		f    agentsmcp.InsightFilter
		want []int
	}{
		{agentsmcp.InsightFilter{}, []int{5, 4, 3, 2, 1, 0}},
		{agentsmcp.InsightFilter{Principal: principalA}, []int{3, 0}},
		{agentsmcp.InsightFilter{Principal: principalB}, []int{4, 1}},
		{agentsmcp.InsightFilter{Principal: agentsmcp.AnonymousPrincipal}, []int{5, 2}},
		{agentsmcp.InsightFilter{Principal: "key:cccccccccccc"}, nil},
		{agentsmcp.InsightFilter{Principal: principalA, Text: "search"}, []int{0}},
		{agentsmcp.InsightFilter{Principal: principalB, Text: "directory"}, nil},
		{agentsmcp.InsightFilter{Principal: principalA, AppliesTo: "files"}, []int{3, 0}},
		{agentsmcp.InsightFilter{Principal: principalB, Type: agentsmcp.InsightPitfall}, []int{1}},
		{agentsmcp.InsightFilter{Principal: principalA, Type: agentsmcp.InsightObservation}, nil},
		{agentsmcp.InsightFilter{Principal: principalA, AppliesTo: "files", Text: "files", Type: agentsmcp.InsightPitfall}, []int{0}},
	}
	for _, tt := range tests {
		want := idsOf(ids, tt.want)
		for _, limit := range []int{0, 1} {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Insight, string, error) {
				f := tt.f
				f.Cursor, f.Limit = cursor, limit
				return s.Insights.FindInsights(ctx, f)
			}
			if got := pageAll(t, find, limit, insightID); !slices.Equal(got, want) {
				t.Errorf("FindInsights(%+v) limit %d = %v, want %v", tt.f, limit, got, want)
			}
		}
	}
}

func testPrincipalLearnings(t *testing.T, s Services) {
	ctx := t.Context()
	l := func(query string, outcome agentsmcp.Outcome, tools []string, principal string) agentsmcp.Learning {
		return agentsmcp.Learning{Query: query, Outcome: outcome, Tools: tools, Sources: tools, Principal: principal}
	}
	data := []agentsmcp.Learning{
		l("rotate the vault credentials", agentsmcp.OutcomeSuccess, []string{"vault"}, principalA), // 0
		l("rotate the vault credentials", agentsmcp.OutcomeSuccess, []string{"vault"}, principalB), // 1
		l("rotate the vault credentials", agentsmcp.OutcomeFailure, []string{"vault"}, ""),         // 2: anonymous
		l("list the files", agentsmcp.OutcomeFailure, []string{"files"}, principalA),               // 3
		l("payroll of b", agentsmcp.OutcomeSuccess, []string{"files"}, principalB),                 // 4
	}
	ids := make([]string, len(data))
	for i := range data {
		want := agentsmcp.MemoryOwner(data[i].Principal)
		data[i].CreatedAt = at(i)
		if err := s.Learnings.CreateLearning(ctx, &data[i]); err != nil {
			t.Fatalf("CreateLearning %d: %v", i, err)
		}
		ids[i] = data[i].ID
		if data[i].Principal != want {
			t.Errorf("CreateLearning %d left Principal %q, want %q", i, data[i].Principal, want)
		}
		got, err := s.Learnings.FindLearningByID(ctx, ids[i])
		if err != nil {
			t.Fatalf("FindLearningByID %d: %v", i, err)
		}
		if got.Principal != want {
			t.Errorf("learning %d has Principal %q, want %q", i, got.Principal, want)
		}
	}
	tests := []struct {
		f    agentsmcp.LearningFilter
		want []int
	}{
		{agentsmcp.LearningFilter{}, []int{4, 3, 2, 1, 0}},
		{agentsmcp.LearningFilter{Principal: principalA}, []int{3, 0}},
		{agentsmcp.LearningFilter{Principal: principalB}, []int{4, 1}},
		{agentsmcp.LearningFilter{Principal: agentsmcp.AnonymousPrincipal}, []int{2}},
		{agentsmcp.LearningFilter{Principal: "key:cccccccccccc"}, nil},
		{agentsmcp.LearningFilter{Principal: principalA, Text: "vault"}, []int{0}},
		{agentsmcp.LearningFilter{Principal: principalA, Text: "payroll"}, nil},
		{agentsmcp.LearningFilter{Principal: principalB, Tool: "files"}, []int{4}},
		{agentsmcp.LearningFilter{Principal: principalA, Source: "vault"}, []int{0}},
		{agentsmcp.LearningFilter{Principal: principalA, Tool: "files", Source: "files"}, []int{3}},
		{agentsmcp.LearningFilter{Principal: agentsmcp.AnonymousPrincipal, Outcome: agentsmcp.OutcomeSuccess}, nil},
		{agentsmcp.LearningFilter{Principal: principalB, Outcome: agentsmcp.OutcomeSuccess, Since: at(2)}, []int{4}},
	}
	for _, tt := range tests {
		want := idsOf(ids, tt.want)
		for _, limit := range []int{0, 1} {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Learning, string, error) {
				f := tt.f
				f.Cursor, f.Limit = cursor, limit
				return s.Learnings.FindLearnings(ctx, f)
			}
			if got := pageAll(t, find, limit, learningID); !slices.Equal(got, want) {
				t.Errorf("FindLearnings(%+v) limit %d = %v, want %v", tt.f, limit, got, want)
			}
		}
	}
}

func testPrincipalPatterns(t *testing.T, s Services) {
	ctx := t.Context()
	goal, steps := "rotate vault credentials", []string{"vault__list", "vault__rotate"}
	record := func(principal string, success bool, when int) *agentsmcp.PlanPattern {
		t.Helper()
		p, err := s.Patterns.RecordPatternUse(ctx, principal, goal, steps, success, at(when))
		if err != nil {
			t.Fatalf("RecordPatternUse(%q): %v", principal, err)
		}
		return p
	}
	// The same goal and steps are one pattern per principal, each with its
	// own counters; no principal is the anonymous one, whose id is the
	// principal-less PatternID of the patterns stored before principals.
	record(principalA, true, 1)
	b := record(principalB, false, 2)
	anon := record("", true, 3)
	a := record(principalA, true, 4)
	anon2 := record(agentsmcp.AnonymousPrincipal, false, 5)
	for _, c := range []struct {
		p               *agentsmcp.PlanPattern
		principal       string
		uses, successes int64
		wantID          string
	}{
		{a, principalA, 2, 2, storedform.PatternID(principalA, goal, steps)},
		{b, principalB, 1, 0, storedform.PatternID(principalB, goal, steps)},
		{anon2, agentsmcp.AnonymousPrincipal, 2, 1, storedform.PatternID("", goal, steps)},
	} {
		if c.p.ID != c.wantID || c.p.Principal != c.principal || c.p.Uses != c.uses || c.p.Successes != c.successes {
			t.Errorf("pattern of %s = %+v, want id %s, %d uses, %d successes", c.principal, *c.p, c.wantID, c.uses, c.successes)
		}
		got, err := s.Patterns.FindPatternByID(ctx, c.wantID)
		if err != nil {
			t.Fatalf("FindPatternByID(%s): %v", c.wantID, err)
		}
		checkPattern(t, "pattern of "+c.principal, got, c.p)
	}
	if anon.ID != anon2.ID || a.ID == b.ID || a.ID == anon.ID {
		t.Errorf("pattern ids: a %s, b %s, anonymous %s then %s", a.ID, b.ID, anon.ID, anon2.ID)
	}
	other, err := s.Patterns.RecordPatternUse(ctx, principalB, "read b's payroll", []string{"files__read"}, true, at(6))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		f    agentsmcp.PatternFilter
		want []string
	}{
		{agentsmcp.PatternFilter{Principal: principalA}, []string{a.ID}},
		{agentsmcp.PatternFilter{Principal: principalB}, sortedByRank(other, b)},
		{agentsmcp.PatternFilter{Principal: agentsmcp.AnonymousPrincipal}, []string{anon.ID}},
		{agentsmcp.PatternFilter{Principal: "key:cccccccccccc"}, nil},
		{agentsmcp.PatternFilter{Principal: principalA, Text: "payroll"}, nil},
		{agentsmcp.PatternFilter{Principal: principalB, Text: "payroll"}, []string{other.ID}},
		{agentsmcp.PatternFilter{Text: "vault"}, sortedByRank(a, b, anon2)},
	}
	for _, tt := range tests {
		for _, limit := range []int{0, 1} {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.PlanPattern, string, error) {
				f := tt.f
				f.Cursor, f.Limit = cursor, limit
				return s.Patterns.FindPatterns(ctx, f)
			}
			if got := pageAll(t, find, limit, patternID); !slices.Equal(got, tt.want) {
				t.Errorf("FindPatterns(%+v) limit %d = %v, want %v", tt.f, limit, got, tt.want)
			}
		}
	}
}

// sortedByRank returns the ids of ps in the order of FindPatterns: most
// successes first, ties by id, higher first.
func sortedByRank(ps ...*agentsmcp.PlanPattern) []string {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(x, y *agentsmcp.PlanPattern) int {
		if x.Successes != y.Successes {
			return int(y.Successes - x.Successes)
		}
		switch {
		case x.ID > y.ID:
			return -1
		case x.ID < y.ID:
			return 1
		}
		return 0
	})
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}
