package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["PatternRecordAndFind"] = testPatternRecordAndFind
	suite["PatternKey"] = testPatternKey
	suite["PatternConcurrent"] = testPatternConcurrent
	suite["PatternInvalid"] = testPatternInvalid
	suite["PatternNotFound"] = testPatternNotFound
	suite["PatternOrderAndPaging"] = testPatternOrderAndPaging
	suite["PatternBadCursor"] = testPatternBadCursor
	suite["PatternTextIsPlainWords"] = testPatternTextIsPlainWords
}

func use(t *testing.T, s Services, goal string, steps []string, success bool, when time.Time) *agentsmcp.PlanPattern {
	t.Helper()
	p, err := s.Patterns.RecordPatternUse(t.Context(), "", goal, steps, success, when)
	if err != nil {
		t.Fatalf("RecordPatternUse(%.40q, %d steps): %v", goal, len(steps), err)
	}
	return p
}

// checkPattern compares every field of got with want.
func checkPattern(t *testing.T, what string, got, want *agentsmcp.PlanPattern) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil pattern", what)
	}
	checkTime(t, what+" LastUsed", got.LastUsed, want.LastUsed)
	if got.ID != want.ID || got.Principal != agentsmcp.MemoryOwner(want.Principal) || got.Goal != want.Goal || !slices.Equal(orEmpty(got.Steps), orEmpty(want.Steps)) ||
		got.Uses != want.Uses || got.Successes != want.Successes {
		t.Errorf("%s:\n got %+v\nwant %+v", what, *got, *want)
	}
}

func patternID(p *agentsmcp.PlanPattern) string { return p.ID }

func testPatternRecordAndFind(t *testing.T, s Services) {
	ctx := t.Context()
	goal := "summarise repository issues"
	steps := []string{"github__list_issues", "github__get_issue", "files__write_file"}
	when := time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("CET", 3600))

	p := use(t, s, goal, steps, true, when)
	checkID(t, "pattern ID", p.ID, agentsmcp.PatternIDPrefix)
	want := &agentsmcp.PlanPattern{ID: p.ID, Goal: goal, Steps: steps, Uses: 1, Successes: 1, LastUsed: when}
	checkPattern(t, "first use", p, want)

	// A failed use of the same pattern, recorded late with an older time.
	p = use(t, s, goal, slices.Clone(steps), false, when.Add(-time.Hour))
	want.Uses = 2
	checkPattern(t, "second use", p, want)
	if got := p.SuccessRate(); got != 0.5 {
		t.Errorf("success rate %v, want 0.5", got)
	}
	p = use(t, s, goal, steps, true, when.Add(time.Minute))
	want.Uses, want.Successes, want.LastUsed = 3, 2, when.Add(time.Minute)
	checkPattern(t, "third use", p, want)

	got, err := s.Patterns.FindPatternByID(ctx, want.ID)
	if err != nil {
		t.Fatalf("FindPatternByID: %v", err)
	}
	checkPattern(t, "FindPatternByID", got, want)
	items, next, err := s.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{})
	if err != nil || len(items) != 1 || next != "" {
		t.Fatalf("FindPatterns: %d items, next %q, %v; want 1 and no cursor", len(items), next, err)
	}
	checkPattern(t, "FindPatterns", items[0], want)

	// A zero time means now.
	before := time.Now()
	p = use(t, s, "other goal", []string{"x"}, false, time.Time{})
	checkRecent(t, "LastUsed of a use without time", p.LastUsed, before, time.Now())
	if p.Uses != 1 || p.Successes != 0 || p.SuccessRate() != 0 {
		t.Errorf("failed first use: %+v", *p)
	}
}

func testPatternKey(t *testing.T, s Services) {
	ctx := t.Context()
	uses := []struct {
		goal  string
		steps []string
	}{
		{"report", []string{"a", "b"}},      // 0
		{"report", []string{"b", "a"}},      // 1: order matters
		{"report", []string{"a", "b", "b"}}, // 2
		{"report", []string{"a"}},           // 3
		{"Report", []string{"a", "b"}},      // 4: goals are exact
		{"report ", []string{"a", "b"}},     // 5
		{"report", []string{"a b"}},         // 6: no ambiguous joining
		{"report", []string{"ab"}},          // 7
		{"report a", []string{"b"}},         // 8
		{"report", []string{"a,b"}},         // 9
		{"report", []string{`a","b`}},       // 10
	}
	ids := map[string]int{}
	for round := range 2 {
		for i, u := range uses {
			p := use(t, s, u.goal, u.steps, true, at(round))
			if round == 0 {
				if j, ok := ids[p.ID]; ok {
					t.Errorf("(%q, %q) and (%q, %q) share pattern %s", u.goal, u.steps, uses[j].goal, uses[j].steps, p.ID)
				}
				ids[p.ID] = i
			} else if ids[p.ID] != i {
				t.Errorf("(%q, %q): second use went to pattern %s, not its own", u.goal, u.steps, p.ID)
			}
			if p.Goal != u.goal || !slices.Equal(p.Steps, u.steps) || p.Uses != int64(round+1) {
				t.Errorf("use %d of (%q, %q): %+v", round+1, u.goal, u.steps, *p)
			}
		}
	}
	items, _, err := s.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{Limit: agentsmcp.MaxPageSize})
	if err != nil || len(items) != len(uses) {
		t.Fatalf("FindPatterns: %d patterns, %v; want %d", len(items), err, len(uses))
	}
}

func testPatternConcurrent(t *testing.T, s Services) {
	const goroutines, perGoroutine = 8, 10
	steps := []string{"search", "read", "write"}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perGoroutine)
	ids := make(chan string, goroutines*perGoroutine)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				p, err := s.Patterns.RecordPatternUse(t.Context(), "", "contended goal", steps, (g+i)%2 == 0, at(g))
				if err != nil {
					errs <- err
					continue
				}
				ids <- p.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Fatalf("concurrent RecordPatternUse: %v", err)
	}
	var id string
	for got := range ids {
		if id != "" && got != id {
			t.Fatalf("concurrent first uses created two patterns: %s and %s", id, got)
		}
		id = got
	}
	p, err := s.Patterns.FindPatternByID(t.Context(), id)
	if err != nil {
		t.Fatalf("FindPatternByID: %v", err)
	}
	const total = goroutines * perGoroutine
	if p.Uses != total || p.Successes != total/2 {
		t.Errorf("uses %d successes %d, want %d and %d: increments were lost", p.Uses, p.Successes, total, total/2)
	}
	checkTime(t, "LastUsed", p.LastUsed, at(goroutines-1))
	items, _, err := s.Patterns.FindPatterns(t.Context(), agentsmcp.PatternFilter{})
	if err != nil || len(items) != 1 {
		t.Errorf("FindPatterns: %d patterns, %v; want 1", len(items), err)
	}
}

func testPatternInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	many := make([]string, agentsmcp.MaxListItems+1)
	for i := range many {
		many[i] = fmt.Sprint("step", i)
	}
	tests := []struct {
		name  string
		goal  string
		steps []string
	}{
		{"empty goal", "", []string{"a"}},
		{"blank goal", " \t\n", []string{"a"}},
		{"huge goal", strings.Repeat("g", agentsmcp.MaxQueryTextBytes+1), []string{"a"}},
		{"too many steps", "goal", many},
	}
	for _, tt := range tests {
		_, err := s.Patterns.RecordPatternUse(ctx, "", tt.goal, tt.steps, true, at(0))
		wantCode(t, err, agentsmcp.EINVALID, tt.name)
	}
	items, _, err := s.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{})
	if err != nil || len(items) != 0 {
		t.Fatalf("invalid uses created patterns: %d, %v", len(items), err)
	}
	// The limits themselves are accepted.
	p := use(t, s, strings.Repeat("g", agentsmcp.MaxQueryTextBytes), many[:agentsmcp.MaxListItems], true, at(0))
	got, err := s.Patterns.FindPatternByID(ctx, p.ID)
	if err != nil {
		t.Fatalf("FindPatternByID: %v", err)
	}
	checkPattern(t, "pattern at the limits", got, p)
}

func testPatternNotFound(t *testing.T, s Services) {
	ctx := t.Context()
	p := use(t, s, "known", []string{"a"}, true, at(0))
	for _, id := range []string{agentsmcp.NewID(agentsmcp.PatternIDPrefix), "", "nope", p.ID + "x", strings.ToLower(p.ID)} {
		_, err := s.Patterns.FindPatternByID(ctx, id)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindPatternByID(%q)", id))
	}
}

func testPatternOrderAndPaging(t *testing.T, s Services) {
	// 21 patterns with 0 to 3 successes each: many ties, broken by id.
	var all []*agentsmcp.PlanPattern
	for i := range 21 {
		goal := fmt.Sprint("goal ", i)
		if i%2 == 1 {
			goal = fmt.Sprint("target ", i)
		}
		for range i % 4 {
			use(t, s, goal, []string{"step"}, true, at(i))
		}
		p := use(t, s, goal, []string{"step"}, false, at(i))
		if p.Uses != int64(i%4+1) || p.Successes != int64(i%4) {
			t.Fatalf("%q: %d uses, %d successes; want %d and %d", goal, p.Uses, p.Successes, i%4+1, i%4)
		}
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b *agentsmcp.PlanPattern) int {
		return cmp.Or(cmp.Compare(b.Successes, a.Successes), strings.Compare(b.ID, a.ID))
	})
	want := make([]string, len(all))
	for i, p := range all {
		want[i] = p.ID
	}
	for _, limit := range pageLimits {
		find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.PlanPattern, string, error) {
			return s.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{Cursor: cursor, Limit: limit})
		}
		if got := pageAll(t, find, limit, patternID); !slices.Equal(got, want) {
			t.Errorf("limit %d: paged\n%v\nwant (successes descending, ties by id descending)\n%v", limit, got, want)
		}
	}
	// The text filter keeps its meaning across pages.
	var wantGoal []string
	for _, p := range all {
		if strings.HasPrefix(p.Goal, "goal ") {
			wantGoal = append(wantGoal, p.ID)
		}
	}
	find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.PlanPattern, string, error) {
		return s.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{Text: "GOAL", Cursor: cursor, Limit: limit})
	}
	if got := pageAll(t, find, 2, patternID); !slices.Equal(got, wantGoal) {
		t.Errorf("FindPatterns(Text: GOAL) limit 2 = %v, want %v", got, wantGoal)
	}
}

func testPatternBadCursor(t *testing.T, s Services) {
	use(t, s, "goal", []string{"a"}, true, at(0))
	for _, c := range badCursors {
		_, _, err := s.Patterns.FindPatterns(t.Context(), agentsmcp.PatternFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindPatterns(cursor %q)", c))
	}
}

func testPatternTextIsPlainWords(t *testing.T, s Services) {
	for i, text := range textCorpus {
		use(t, s, text, []string{"step"}, true, at(i))
	}
	checkTextCases(t, false, func(text string) ([]string, error) {
		items, _, err := s.Patterns.FindPatterns(t.Context(), agentsmcp.PatternFilter{Text: text, Limit: agentsmcp.MaxPageSize})
		var goals []string
		for _, p := range items {
			goals = append(goals, p.Goal)
		}
		return goals, err
	})
}
