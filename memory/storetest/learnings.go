package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["LearningRoundTrip"] = testLearningRoundTrip
	suite["LearningAssignsIDAndTime"] = testLearningAssignsIDAndTime
	suite["LearningConflict"] = testLearningConflict
	suite["LearningInvalid"] = testLearningInvalid
	suite["LearningNotFound"] = testLearningNotFound
	suite["LearningFilters"] = testLearningFilters
	suite["LearningOrderAndPaging"] = testLearningOrderAndPaging
	suite["LearningBadCursor"] = testLearningBadCursor
	suite["LearningTextIsPlainWords"] = testLearningTextIsPlainWords
}

// checkLearning compares every field of got with want; times at millisecond
// precision, nil and empty lists alike.
func checkLearning(t *testing.T, got, want *agentsmcp.Learning) {
	t.Helper()
	if got == nil {
		t.Fatalf("learning %s: nil", want.ID)
	}
	g, w := *got, *want
	checkTime(t, "learning "+w.ID+" CreatedAt", g.CreatedAt, w.CreatedAt)
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	w.Principal = agentsmcp.MemoryOwner(w.Principal) // stores record the anonymous principal for none
	for _, p := range []struct{ g, w *[]string }{
		{&g.Steps, &w.Steps}, {&g.Tools, &w.Tools}, {&g.Sources, &w.Sources}, {&g.Errors, &w.Errors},
	} {
		*p.g, *p.w = orEmpty(*p.g), orEmpty(*p.w)
	}
	if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Errorf("learning %s:\n got %#v\nwant %#v", w.ID, g, w)
	}
}

func learningID(l *agentsmcp.Learning) string { return l.ID }

func testLearningRoundTrip(t *testing.T, s Services) {
	ctx := t.Context()
	tests := []struct {
		name string
		l    agentsmcp.Learning
	}{
		{"every field", agentsmcp.Learning{
			TaskID:    "task_01",
			PlanID:    "pln_01",
			Query:     "Summarise the open issues of agents-mcp and file a report",
			Goal:      "summarise repository issues",
			Steps:     []string{"github__list_issues", "github__get_issue", "github__get_issue", "files__write_file"},
			Tools:     []string{"github__list_issues", "github__get_issue", "files__write_file"},
			Sources:   []string{"github", "files"},
			Outcome:   agentsmcp.OutcomePartial,
			Duration:  12*time.Second + 345678901,
			Errors:    []string{"rate limited", "timeout after 30s"},
			Retries:   2,
			Principal: "key:0123456789ab",
			CreatedAt: time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("PST", -8*3600)),
		}},
		{"explicit id and minimal", agentsmcp.Learning{
			ID:        agentsmcp.NewID(agentsmcp.LearningIDPrefix),
			Query:     "ping",
			Outcome:   agentsmcp.OutcomeSuccess,
			CreatedAt: at(1),
		}},
		{"failure with empty lists", agentsmcp.Learning{
			Query:     "naïve café ☕ \"quoted\" \\ $where",
			Steps:     []string{},
			Tools:     []string{},
			Sources:   []string{},
			Errors:    []string{},
			Outcome:   agentsmcp.OutcomeFailure,
			Duration:  1,
			CreatedAt: at(2),
		}},
		{"cancelled", agentsmcp.Learning{
			Query:     "long task",
			Goal:      "g",
			Outcome:   agentsmcp.OutcomeCancelled,
			Duration:  time.Duration(1<<62 + 7),
			Retries:   1 << 30,
			CreatedAt: at(3),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.l
			if err := s.Learnings.CreateLearning(ctx, &l); err != nil {
				t.Fatalf("CreateLearning: %v", err)
			}
			if tt.l.ID != "" && l.ID != tt.l.ID {
				t.Errorf("CreateLearning changed the given id %q to %q", tt.l.ID, l.ID)
			}
			checkID(t, "ID", l.ID, agentsmcp.LearningIDPrefix)
			want := tt.l
			want.ID = l.ID
			got, err := s.Learnings.FindLearningByID(ctx, l.ID)
			if err != nil {
				t.Fatalf("FindLearningByID: %v", err)
			}
			checkLearning(t, got, &want)
			items, _, err := s.Learnings.FindLearnings(ctx, agentsmcp.LearningFilter{Outcome: tt.l.Outcome})
			if err != nil || len(items) != 1 {
				t.Fatalf("FindLearnings by outcome: %d items, %v; want 1", len(items), err)
			}
			checkLearning(t, items[0], &want)
		})
	}
}

func testLearningAssignsIDAndTime(t *testing.T, s Services) {
	ctx := t.Context()
	ids := map[string]bool{}
	for i := range 3 {
		l := &agentsmcp.Learning{Query: "assigned", Outcome: agentsmcp.OutcomeSuccess}
		before := time.Now()
		if err := s.Learnings.CreateLearning(ctx, l); err != nil {
			t.Fatalf("CreateLearning %d: %v", i, err)
		}
		after := time.Now()
		checkID(t, "assigned ID", l.ID, agentsmcp.LearningIDPrefix)
		checkRecent(t, "assigned CreatedAt", l.CreatedAt, before, after)
		if ids[l.ID] {
			t.Fatalf("id %s assigned twice", l.ID)
		}
		ids[l.ID] = true
		got, err := s.Learnings.FindLearningByID(ctx, l.ID)
		if err != nil {
			t.Fatalf("FindLearningByID: %v", err)
		}
		checkTime(t, "stored CreatedAt", got.CreatedAt, l.CreatedAt)
	}
}

func testLearningConflict(t *testing.T, s Services) {
	ctx := t.Context()
	id := agentsmcp.NewID(agentsmcp.LearningIDPrefix)
	first := agentsmcp.Learning{ID: id, Query: "first", Tools: []string{"a"}, Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(0)}
	if err := s.Learnings.CreateLearning(ctx, &first); err != nil {
		t.Fatalf("CreateLearning: %v", err)
	}
	second := agentsmcp.Learning{ID: id, Query: "second", Tools: []string{"b"}, Outcome: agentsmcp.OutcomeFailure, CreatedAt: at(1)}
	wantCode(t, s.Learnings.CreateLearning(ctx, &second), agentsmcp.ECONFLICT, "CreateLearning with a taken id")
	got, err := s.Learnings.FindLearningByID(ctx, id)
	if err != nil {
		t.Fatalf("FindLearningByID: %v", err)
	}
	checkLearning(t, got, &first)
	// The refused learning left nothing behind in any index.
	for _, f := range []agentsmcp.LearningFilter{{Tool: "b"}, {Text: "second"}, {Outcome: agentsmcp.OutcomeFailure}} {
		items, _, err := s.Learnings.FindLearnings(ctx, f)
		if err != nil || len(items) != 0 {
			t.Errorf("FindLearnings(%+v) after a conflict: %d items, %v; want none", f, len(items), err)
		}
	}
}

func testLearningInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	valid := func() agentsmcp.Learning {
		return agentsmcp.Learning{Query: "valid", Outcome: agentsmcp.OutcomeSuccess}
	}
	many := make([]string, agentsmcp.MaxListItems+1)
	for i := range many {
		many[i] = fmt.Sprint("item", i)
	}
	tests := []struct {
		name   string
		change func(l *agentsmcp.Learning)
	}{
		{"empty query", func(l *agentsmcp.Learning) { l.Query = "" }},
		{"huge query", func(l *agentsmcp.Learning) { l.Query = strings.Repeat("q", agentsmcp.MaxQueryTextBytes+1) }},
		{"huge goal", func(l *agentsmcp.Learning) { l.Goal = strings.Repeat("g", agentsmcp.MaxQueryTextBytes+1) }},
		{"empty outcome", func(l *agentsmcp.Learning) { l.Outcome = "" }},
		{"unknown outcome", func(l *agentsmcp.Learning) { l.Outcome = "meh" }},
		{"negative duration", func(l *agentsmcp.Learning) { l.Duration = -time.Nanosecond }},
		{"negative retries", func(l *agentsmcp.Learning) { l.Retries = -1 }},
		{"malformed id", func(l *agentsmcp.Learning) { l.ID = "lrn-01" }},
		{"too many steps", func(l *agentsmcp.Learning) { l.Steps = many }},
		{"too many tools", func(l *agentsmcp.Learning) { l.Tools = many }},
		{"too many upstreams", func(l *agentsmcp.Learning) { l.Sources = many }},
		{"too many errors", func(l *agentsmcp.Learning) { l.Errors = many }},
	}
	for _, tt := range tests {
		l := valid()
		tt.change(&l)
		wantCode(t, s.Learnings.CreateLearning(ctx, &l), agentsmcp.EINVALID, tt.name)
	}
	wantCode(t, s.Learnings.CreateLearning(ctx, nil), agentsmcp.EINVALID, "nil learning")
	items, _, err := s.Learnings.FindLearnings(ctx, agentsmcp.LearningFilter{})
	if err != nil || len(items) != 0 {
		t.Fatalf("invalid learnings were stored: %d items, %v", len(items), err)
	}
	// The limits themselves are accepted.
	full := make([]string, agentsmcp.MaxListItems)
	for i := range full {
		full[i] = fmt.Sprint("tool", i)
	}
	l := agentsmcp.Learning{
		Query: strings.Repeat("q", agentsmcp.MaxQueryTextBytes), Goal: strings.Repeat("g", agentsmcp.MaxQueryTextBytes),
		Steps: full, Tools: full, Sources: full, Errors: full, Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(0),
	}
	if err := s.Learnings.CreateLearning(ctx, &l); err != nil {
		t.Fatalf("CreateLearning at the limits: %v", err)
	}
	got, err := s.Learnings.FindLearningByID(ctx, l.ID)
	if err != nil {
		t.Fatalf("FindLearningByID: %v", err)
	}
	checkLearning(t, got, &l)
}

func testLearningNotFound(t *testing.T, s Services) {
	ctx := t.Context()
	l := agentsmcp.Learning{Query: "present", Outcome: agentsmcp.OutcomeSuccess}
	if err := s.Learnings.CreateLearning(ctx, &l); err != nil {
		t.Fatalf("CreateLearning: %v", err)
	}
	for _, id := range []string{agentsmcp.NewID(agentsmcp.LearningIDPrefix), "", "nope", l.ID + "x", strings.ToLower(l.ID)} {
		_, err := s.Learnings.FindLearningByID(ctx, id)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindLearningByID(%q)", id))
	}
}

func testLearningFilters(t *testing.T, s Services) {
	ctx := t.Context()
	data := []agentsmcp.Learning{
		{Query: "list the open issues", Goal: "triage issues", Tools: []string{"github__list_issues"}, Sources: []string{"github"}, Outcome: agentsmcp.OutcomeSuccess},                           // 0
		{Query: "write the weekly report", Goal: "report", Tools: []string{"files__write_file", "github__list_issues"}, Sources: []string{"files", "github"}, Outcome: agentsmcp.OutcomePartial}, // 1
		{Query: "deploy the service", Goal: "release pipeline", Tools: []string{"ci__deploy"}, Sources: []string{"ci"}, Outcome: agentsmcp.OutcomeFailure},                                       // 2
		{Query: "read the design doc", Tools: []string{"files__read_file"}, Sources: []string{"files"}, Outcome: agentsmcp.OutcomeSuccess},                                                       // 3
		{Query: "search issues about flaky tests", Goal: "triage flaky tests", Tools: []string{"github__search"}, Sources: []string{"github"}, Outcome: agentsmcp.OutcomeCancelled},              // 4
		{Query: "no tools at all", Outcome: agentsmcp.OutcomeSuccess},                                                                                     // 5
		{Query: "write a file", Tools: []string{"files__write_file", "files__write_file"}, Sources: []string{"Files"}, Outcome: agentsmcp.OutcomeSuccess}, // 6: duplicates, case
		{Query: "deploy again", Goal: "release pipeline", Tools: []string{"ci__deploy"}, Sources: []string{"ci"}, Outcome: agentsmcp.OutcomeSuccess},      // 7
	}
	ids := make([]string, len(data))
	for i := range data {
		data[i].CreatedAt = at(10 * i)
		if err := s.Learnings.CreateLearning(ctx, &data[i]); err != nil {
			t.Fatalf("CreateLearning %d: %v", i, err)
		}
		ids[i] = data[i].ID
	}
	tests := []struct {
		f    agentsmcp.LearningFilter
		want []int // newest first
	}{
		{agentsmcp.LearningFilter{}, []int{7, 6, 5, 4, 3, 2, 1, 0}},
		{agentsmcp.LearningFilter{Tool: "github__list_issues"}, []int{1, 0}},
		{agentsmcp.LearningFilter{Tool: "files__write_file"}, []int{6, 1}},
		{agentsmcp.LearningFilter{Tool: "github"}, nil}, // exact, not a prefix
		{agentsmcp.LearningFilter{Tool: ".*"}, nil},
		{agentsmcp.LearningFilter{Source: "files"}, []int{3, 1}},
		{agentsmcp.LearningFilter{Source: "Files"}, []int{6}},
		{agentsmcp.LearningFilter{Source: "github"}, []int{4, 1, 0}},
		{agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeSuccess}, []int{7, 6, 5, 3, 0}},
		{agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeFailure}, []int{2}},
		{agentsmcp.LearningFilter{Outcome: "bogus"}, nil},
		{agentsmcp.LearningFilter{Since: at(20)}, []int{7, 6, 5, 4, 3, 2}},                             // inclusive
		{agentsmcp.LearningFilter{Until: at(20)}, []int{1, 0}},                                         // exclusive
		{agentsmcp.LearningFilter{Since: at(20), Until: at(50)}, []int{4, 3, 2}},                       // [20s, 50s)
		{agentsmcp.LearningFilter{Since: at(19).Add(999 * time.Millisecond), Until: at(21)}, []int{2}}, // millisecond bounds
		{agentsmcp.LearningFilter{Since: at(50), Until: at(20)}, nil},
		{agentsmcp.LearningFilter{Text: "issues"}, []int{4, 0}},
		{agentsmcp.LearningFilter{Text: "triage"}, []int{4, 0}},          // in Goal only
		{agentsmcp.LearningFilter{Text: "deploy pipeline"}, []int{7, 2}}, // one word in Query, one in Goal
		{agentsmcp.LearningFilter{Text: "deploy service"}, []int{2}},
		{agentsmcp.LearningFilter{Text: "REPORT weekly"}, []int{1}},
		{agentsmcp.LearningFilter{Tool: "files__write_file", Source: "github"}, []int{1}},
		{agentsmcp.LearningFilter{Tool: "ci__deploy", Outcome: agentsmcp.OutcomeSuccess}, []int{7}},
		{agentsmcp.LearningFilter{Source: "github", Outcome: agentsmcp.OutcomeSuccess}, []int{0}},
		{agentsmcp.LearningFilter{Source: "github", Since: at(10)}, []int{4, 1}},
		{agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeSuccess, Since: at(30), Until: at(70)}, []int{6, 5, 3}},
		{agentsmcp.LearningFilter{Source: "github", Text: "issues"}, []int{4, 0}},
		{agentsmcp.LearningFilter{Text: "release", Outcome: agentsmcp.OutcomeFailure}, []int{2}},
		{agentsmcp.LearningFilter{Tool: "github__search", Source: "github", Outcome: agentsmcp.OutcomeCancelled, Since: at(40), Until: at(41), Text: "flaky"}, []int{4}},
		{agentsmcp.LearningFilter{Tool: "github__search", Outcome: agentsmcp.OutcomeSuccess}, nil},
	}
	for _, tt := range tests {
		var want []string
		for _, i := range tt.want {
			want = append(want, ids[i])
		}
		for _, limit := range []int{0, 1, 2} {
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

func testLearningOrderAndPaging(t *testing.T, s Services) {
	ctx := t.Context()
	// 23 learnings, up to four per CreatedAt, inserted out of time order:
	// ties are broken by id, and insertion order does not matter.
	var all []*agentsmcp.Learning
	for i := range 23 {
		l := &agentsmcp.Learning{Query: fmt.Sprint("learning ", i), Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at((i * 7 % 23) / 4)}
		if err := s.Learnings.CreateLearning(ctx, l); err != nil {
			t.Fatalf("CreateLearning %d: %v", i, err)
		}
		all = append(all, l)
	}
	slices.SortFunc(all, func(a, b *agentsmcp.Learning) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	want := make([]string, len(all))
	for i, l := range all {
		want[i] = l.ID
	}
	for _, limit := range pageLimits {
		find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Learning, string, error) {
			return s.Learnings.FindLearnings(ctx, agentsmcp.LearningFilter{Cursor: cursor, Limit: limit})
		}
		if got := pageAll(t, find, limit, learningID); !slices.Equal(got, want) {
			t.Errorf("limit %d: paged\n%v\nwant (newest first, ties by id descending)\n%v", limit, got, want)
		}
	}
	// Filters keep their meaning across pages.
	find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Learning, string, error) {
		return s.Learnings.FindLearnings(ctx, agentsmcp.LearningFilter{Since: at(2), Until: at(4), Cursor: cursor, Limit: limit})
	}
	var wantRange []string
	for _, l := range all {
		if !l.CreatedAt.Before(at(2)) && l.CreatedAt.Before(at(4)) {
			wantRange = append(wantRange, l.ID)
		}
	}
	if got := pageAll(t, find, 3, learningID); !slices.Equal(got, wantRange) {
		t.Errorf("Since/Until limit 3: paged %v, want %v", got, wantRange)
	}
}

func testLearningBadCursor(t *testing.T, s Services) {
	ctx := t.Context()
	l := agentsmcp.Learning{Query: "one", Outcome: agentsmcp.OutcomeSuccess, Tools: []string{"t"}}
	if err := s.Learnings.CreateLearning(ctx, &l); err != nil {
		t.Fatalf("CreateLearning: %v", err)
	}
	for _, c := range badCursors {
		for _, f := range []agentsmcp.LearningFilter{{Cursor: c}, {Cursor: c, Tool: "t"}} {
			_, _, err := s.Learnings.FindLearnings(ctx, f)
			wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindLearnings(%+v)", f))
		}
	}
}

func testLearningTextIsPlainWords(t *testing.T, s Services) {
	ctx := t.Context()
	for i, text := range textCorpus {
		l := agentsmcp.Learning{Query: text, Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(i)}
		// Every other corpus text is the Goal instead: both are searched.
		if i%2 == 1 {
			l.Query, l.Goal = fmt.Sprint("learning ", i), text
		}
		if err := s.Learnings.CreateLearning(ctx, &l); err != nil {
			t.Fatalf("CreateLearning(%q): %v", text, err)
		}
	}
	checkTextCases(t, true, func(text string) ([]string, error) {
		items, _, err := s.Learnings.FindLearnings(ctx, agentsmcp.LearningFilter{Text: text, Limit: agentsmcp.MaxPageSize})
		var texts []string
		for _, it := range items {
			if it.Goal != "" {
				texts = append(texts, it.Goal)
			} else {
				texts = append(texts, it.Query)
			}
		}
		return texts, err
	})
}
