package storetest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["InsightRoundTrip"] = testInsightRoundTrip
	suite["InsightAssignsIDAndTime"] = testInsightAssignsIDAndTime
	suite["InsightConflict"] = testInsightConflict
	suite["InsightInvalid"] = testInsightInvalid
	suite["InsightLimitsAccepted"] = testInsightLimitsAccepted
	suite["InsightNotFound"] = testInsightNotFound
	suite["InsightDelete"] = testInsightDelete
	suite["InsightFilters"] = testInsightFilters
	suite["InsightOrderAndPaging"] = testInsightOrderAndPaging
	suite["InsightBadCursor"] = testInsightBadCursor
	suite["InsightTextIsPlainWords"] = testInsightTextIsPlainWords
}

// checkInsight compares every field of got with want; times at millisecond
// precision, nil and empty lists alike.
func checkInsight(t *testing.T, got, want *agentsmcp.Insight) {
	t.Helper()
	if got == nil {
		t.Fatalf("insight %s: nil", want.ID)
	}
	g, w := *got, *want
	checkTime(t, "insight "+w.ID+" CreatedAt", g.CreatedAt, w.CreatedAt)
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	w.Principal = agentsmcp.MemoryOwner(w.Principal) // stores record the anonymous principal for none
	g.AppliesTo, w.AppliesTo = orEmpty(g.AppliesTo), orEmpty(w.AppliesTo)
	g.Evidence, w.Evidence = orEmpty(g.Evidence), orEmpty(w.Evidence)
	if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Errorf("insight %s:\n got %#v\nwant %#v", w.ID, g, w)
	}
}

func insightID(in *agentsmcp.Insight) string { return in.ID }

func insightIDs(items []*agentsmcp.Insight) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

func testInsightRoundTrip(t *testing.T, s Services) {
	ctx := t.Context()
	tests := []struct {
		name string
		in   agentsmcp.Insight
	}{
		{"every field", agentsmcp.Insight{
			Text:       "server-filesystem's search_files is slow on large trees; prefer list_directory first",
			Type:       agentsmcp.InsightBestPractice,
			AppliesTo:  []string{"files__search_files", "files", "goal:report"},
			Confidence: 0.875,
			Evidence:   []string{agentsmcp.NewID("lrn"), "task-42"},
			Source:     "agent",
			Principal:  "jwt:alice@example.com",
			// Not UTC and finer than a millisecond: stores keep the
			// instant at millisecond precision and return UTC.
			CreatedAt: time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("CET", 3600)),
		}},
		{"explicit id", agentsmcp.Insight{
			ID:         agentsmcp.NewID(agentsmcp.InsightIDPrefix),
			Text:       "naïve café ☕ — unicode survives; so do \"quotes\", 'apostrophes' and \\ backslashes",
			Type:       agentsmcp.InsightPitfall,
			Confidence: 1,
			CreatedAt:  at(1),
		}},
		{"empty lists and zero confidence", agentsmcp.Insight{
			Text:      "x",
			Type:      agentsmcp.InsightObservation,
			AppliesTo: []string{},
			Evidence:  nil,
			CreatedAt: at(2),
		}},
		{"preference with one entry", agentsmcp.Insight{
			Text:       "the user prefers tables",
			Type:       agentsmcp.InsightPreference,
			AppliesTo:  []string{"user:alice"},
			Confidence: math.SmallestNonzeroFloat64,
			Source:     "user",
			CreatedAt:  at(3),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.AppliesTo = slices.Clone(tt.in.AppliesTo)
			if err := s.Insights.CreateInsight(ctx, &in); err != nil {
				t.Fatalf("CreateInsight: %v", err)
			}
			if tt.in.ID != "" && in.ID != tt.in.ID {
				t.Errorf("CreateInsight changed the given id %q to %q", tt.in.ID, in.ID)
			}
			checkID(t, "ID", in.ID, agentsmcp.InsightIDPrefix)
			want := tt.in
			want.ID = in.ID
			got, err := s.Insights.FindInsightByID(ctx, in.ID)
			if err != nil {
				t.Fatalf("FindInsightByID: %v", err)
			}
			checkInsight(t, got, &want)
			items, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{Type: tt.in.Type})
			if err != nil {
				t.Fatalf("FindInsights: %v", err)
			}
			if len(items) != 1 {
				t.Fatalf("FindInsights by type: %d items, want 1", len(items))
			}
			checkInsight(t, items[0], &want)
		})
	}
}

func testInsightAssignsIDAndTime(t *testing.T, s Services) {
	ctx := t.Context()
	ids := map[string]bool{}
	for i := range 3 {
		in := &agentsmcp.Insight{Text: "assigned", Type: agentsmcp.InsightObservation}
		before := time.Now()
		if err := s.Insights.CreateInsight(ctx, in); err != nil {
			t.Fatalf("CreateInsight %d: %v", i, err)
		}
		after := time.Now()
		checkID(t, "assigned ID", in.ID, agentsmcp.InsightIDPrefix)
		checkRecent(t, "assigned CreatedAt", in.CreatedAt, before, after)
		if ids[in.ID] {
			t.Fatalf("id %s assigned twice", in.ID)
		}
		ids[in.ID] = true
		got, err := s.Insights.FindInsightByID(ctx, in.ID)
		if err != nil {
			t.Fatalf("FindInsightByID: %v", err)
		}
		checkTime(t, "stored CreatedAt", got.CreatedAt, in.CreatedAt)
	}
}

func testInsightConflict(t *testing.T, s Services) {
	ctx := t.Context()
	id := agentsmcp.NewID(agentsmcp.InsightIDPrefix)
	first := agentsmcp.Insight{ID: id, Text: "first", Type: agentsmcp.InsightObservation, CreatedAt: at(0)}
	if err := s.Insights.CreateInsight(ctx, &first); err != nil {
		t.Fatalf("CreateInsight: %v", err)
	}
	second := agentsmcp.Insight{ID: id, Text: "second", Type: agentsmcp.InsightPitfall, CreatedAt: at(1)}
	wantCode(t, s.Insights.CreateInsight(ctx, &second), agentsmcp.ECONFLICT, "CreateInsight with a taken id")
	got, err := s.Insights.FindInsightByID(ctx, id)
	if err != nil {
		t.Fatalf("FindInsightByID: %v", err)
	}
	checkInsight(t, got, &first)
	items, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{})
	if err != nil || len(items) != 1 {
		t.Fatalf("FindInsights after a conflict: %d items, %v; want 1", len(items), err)
	}
}

func testInsightInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	valid := func() agentsmcp.Insight {
		return agentsmcp.Insight{Text: "valid", Type: agentsmcp.InsightObservation, Confidence: 0.5}
	}
	many := make([]string, agentsmcp.MaxListItems+1)
	for i := range many {
		many[i] = fmt.Sprint("item", i)
	}
	tests := []struct {
		name   string
		change func(in *agentsmcp.Insight)
	}{
		{"empty text", func(in *agentsmcp.Insight) { in.Text = "" }},
		{"huge text", func(in *agentsmcp.Insight) { in.Text = strings.Repeat("x", agentsmcp.MaxInsightTextBytes+1) }},
		{"1 MiB text", func(in *agentsmcp.Insight) { in.Text = strings.Repeat("word ", 1<<18) }},
		{"empty type", func(in *agentsmcp.Insight) { in.Type = "" }},
		{"unknown type", func(in *agentsmcp.Insight) { in.Type = "rumour" }},
		{"negative confidence", func(in *agentsmcp.Insight) { in.Confidence = -0.01 }},
		{"confidence above 1", func(in *agentsmcp.Insight) { in.Confidence = 1.01 }},
		{"NaN confidence", func(in *agentsmcp.Insight) { in.Confidence = math.NaN() }},
		{"infinite confidence", func(in *agentsmcp.Insight) { in.Confidence = math.Inf(1) }},
		{"malformed id", func(in *agentsmcp.Insight) { in.ID = "ins_1" }},
		{"id with a dollar", func(in *agentsmcp.Insight) { in.ID = "$where" }},
		{"too many appliesTo", func(in *agentsmcp.Insight) { in.AppliesTo = many }},
		{"too much evidence", func(in *agentsmcp.Insight) { in.Evidence = many }},
	}
	for _, tt := range tests {
		in := valid()
		tt.change(&in)
		wantCode(t, s.Insights.CreateInsight(ctx, &in), agentsmcp.EINVALID, tt.name)
	}
	wantCode(t, s.Insights.CreateInsight(ctx, nil), agentsmcp.EINVALID, "nil insight")
	items, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{})
	if err != nil {
		t.Fatalf("FindInsights: %v", err)
	}
	if len(items) != 0 {
		t.Fatalf("invalid insights were stored: %d items, first %q", len(items), items[0].Text[:min(len(items[0].Text), 40)])
	}
}

func testInsightLimitsAccepted(t *testing.T, s Services) {
	ctx := t.Context()
	full := make([]string, agentsmcp.MaxListItems)
	for i := range full {
		full[i] = fmt.Sprintf("tool_%03d", i)
	}
	in := agentsmcp.Insight{
		Text:       strings.Repeat("é", agentsmcp.MaxInsightTextBytes/2), // exactly the limit, in bytes
		Type:       agentsmcp.InsightObservation,
		AppliesTo:  full,
		Evidence:   full,
		Confidence: 1,
		CreatedAt:  at(0),
	}
	if err := s.Insights.CreateInsight(ctx, &in); err != nil {
		t.Fatalf("CreateInsight at the limits: %v", err)
	}
	got, err := s.Insights.FindInsightByID(ctx, in.ID)
	if err != nil {
		t.Fatalf("FindInsightByID: %v", err)
	}
	checkInsight(t, got, &in)
	items, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: full[agentsmcp.MaxListItems-1]})
	if err != nil || len(items) != 1 {
		t.Fatalf("FindInsights by the last appliesTo entry: %d items, %v; want 1", len(items), err)
	}
}

func testInsightNotFound(t *testing.T, s Services) {
	ctx := t.Context()
	in := agentsmcp.Insight{Text: "present", Type: agentsmcp.InsightObservation}
	if err := s.Insights.CreateInsight(ctx, &in); err != nil {
		t.Fatalf("CreateInsight: %v", err)
	}
	for _, id := range []string{agentsmcp.NewID(agentsmcp.InsightIDPrefix), "", "nope", in.ID + "x", strings.ToLower(in.ID)} {
		_, err := s.Insights.FindInsightByID(ctx, id)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindInsightByID(%q)", id))
		wantCode(t, s.Insights.DeleteInsight(ctx, id), agentsmcp.ENOTFOUND, fmt.Sprintf("DeleteInsight(%q)", id))
	}
	if _, err := s.Insights.FindInsightByID(ctx, in.ID); err != nil {
		t.Fatalf("FindInsightByID after failed deletes: %v", err)
	}
}

func testInsightDelete(t *testing.T, s Services) {
	ctx := t.Context()
	keep := agentsmcp.Insight{Text: "shared words kept", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"tool_a"}, CreatedAt: at(0)}
	gone := agentsmcp.Insight{Text: "shared words deleted", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"tool_a", "tool_b"}, CreatedAt: at(1)}
	for _, in := range []*agentsmcp.Insight{&keep, &gone} {
		if err := s.Insights.CreateInsight(ctx, in); err != nil {
			t.Fatalf("CreateInsight: %v", err)
		}
	}
	if err := s.Insights.DeleteInsight(ctx, gone.ID); err != nil {
		t.Fatalf("DeleteInsight: %v", err)
	}
	_, err := s.Insights.FindInsightByID(ctx, gone.ID)
	wantCode(t, err, agentsmcp.ENOTFOUND, "FindInsightByID after delete")
	wantCode(t, s.Insights.DeleteInsight(ctx, gone.ID), agentsmcp.ENOTFOUND, "second DeleteInsight")
	// The deleted insight is gone from every index, not only by id.
	for _, f := range []agentsmcp.InsightFilter{
		{}, {Type: agentsmcp.InsightPitfall}, {AppliesTo: "tool_a"}, {Text: "shared words"},
	} {
		items, _, err := s.Insights.FindInsights(ctx, f)
		if err != nil {
			t.Fatalf("FindInsights(%+v): %v", f, err)
		}
		if got := insightIDs(items); !slices.Equal(got, []string{keep.ID}) {
			t.Errorf("FindInsights(%+v) after delete = %v, want only %s", f, got, keep.ID)
		}
	}
	for _, f := range []agentsmcp.InsightFilter{{AppliesTo: "tool_b"}, {Text: "deleted"}} {
		items, _, err := s.Insights.FindInsights(ctx, f)
		if err != nil || len(items) != 0 {
			t.Errorf("FindInsights(%+v) after delete: %d items, %v; want none", f, len(items), err)
		}
	}
	got, err := s.Insights.FindInsightByID(ctx, keep.ID)
	if err != nil {
		t.Fatalf("FindInsightByID of the kept insight: %v", err)
	}
	checkInsight(t, got, &keep)
}

func testInsightFilters(t *testing.T, s Services) {
	ctx := t.Context()
	data := []agentsmcp.Insight{
		{Text: "search files slowly", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"files__search_files", "files"}},         // 0
		{Text: "list directory first", Type: agentsmcp.InsightBestPractice, AppliesTo: []string{"files__list_directory", "files"}}, // 1
		{Text: "user wants tables", Type: agentsmcp.InsightPreference, AppliesTo: []string{"goal:report"}},                         // 2
		{Text: "github search rate limits", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"github__search", "github"}},       // 3
		{Text: "files server restarts", Type: agentsmcp.InsightObservation, AppliesTo: []string{"files"}},                          // 4
		{Text: "search before reading", Type: agentsmcp.InsightBestPractice},                                                       // 5
		{Text: "Files and FILES", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"Files"}},                                    // 6: AppliesTo is exact
	}
	ids := make([]string, len(data))
	for i := range data {
		data[i].CreatedAt = at(i)
		if err := s.Insights.CreateInsight(ctx, &data[i]); err != nil {
			t.Fatalf("CreateInsight %d: %v", i, err)
		}
		ids[i] = data[i].ID
	}
	tests := []struct {
		f    agentsmcp.InsightFilter
		want []int // newest first
	}{
		{agentsmcp.InsightFilter{}, []int{6, 5, 4, 3, 2, 1, 0}},
		{agentsmcp.InsightFilter{Type: agentsmcp.InsightPitfall}, []int{6, 3, 0}},
		{agentsmcp.InsightFilter{Type: agentsmcp.InsightPreference}, []int{2}},
		{agentsmcp.InsightFilter{Type: "unknown"}, nil},
		{agentsmcp.InsightFilter{AppliesTo: "files"}, []int{4, 1, 0}},
		{agentsmcp.InsightFilter{AppliesTo: "Files"}, []int{6}},
		{agentsmcp.InsightFilter{AppliesTo: "file"}, nil},
		{agentsmcp.InsightFilter{AppliesTo: "files__search_files"}, []int{0}},
		{agentsmcp.InsightFilter{AppliesTo: ".*"}, nil},
		{agentsmcp.InsightFilter{Text: "search"}, []int{5, 3, 0}},
		{agentsmcp.InsightFilter{Text: "files"}, []int{6, 4, 0}},
		{agentsmcp.InsightFilter{Type: agentsmcp.InsightPitfall, AppliesTo: "files"}, []int{0}},
		{agentsmcp.InsightFilter{Type: agentsmcp.InsightPitfall, Text: "search"}, []int{3, 0}},
		{agentsmcp.InsightFilter{AppliesTo: "files", Text: "search"}, []int{0}},
		{agentsmcp.InsightFilter{Type: agentsmcp.InsightBestPractice, AppliesTo: "files", Text: "directory"}, []int{1}},
		{agentsmcp.InsightFilter{Type: agentsmcp.InsightObservation, AppliesTo: "github"}, nil},
	}
	for _, tt := range tests {
		var want []string
		for _, i := range tt.want {
			want = append(want, ids[i])
		}
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

func testInsightOrderAndPaging(t *testing.T, s Services) {
	ctx := t.Context()
	// 23 insights, three per CreatedAt: ties are broken by id.
	var all []*agentsmcp.Insight
	for i := range 23 {
		in := &agentsmcp.Insight{Text: fmt.Sprint("insight ", i), Type: agentsmcp.InsightObservation, CreatedAt: at(i / 3)}
		if err := s.Insights.CreateInsight(ctx, in); err != nil {
			t.Fatalf("CreateInsight %d: %v", i, err)
		}
		all = append(all, in)
	}
	slices.SortFunc(all, func(a, b *agentsmcp.Insight) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	want := insightIDs(all)
	for _, limit := range pageLimits {
		find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Insight, string, error) {
			return s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{Cursor: cursor, Limit: limit})
		}
		if got := pageAll(t, find, limit, insightID); !slices.Equal(got, want) {
			t.Errorf("limit %d: paged\n%v\nwant (newest first, ties by id descending)\n%v", limit, got, want)
		}
	}
}

func testInsightBadCursor(t *testing.T, s Services) {
	ctx := t.Context()
	in := agentsmcp.Insight{Text: "one", Type: agentsmcp.InsightObservation}
	if err := s.Insights.CreateInsight(ctx, &in); err != nil {
		t.Fatalf("CreateInsight: %v", err)
	}
	for _, c := range badCursors {
		_, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindInsights(cursor %q)", c))
	}
}

func testInsightTextIsPlainWords(t *testing.T, s Services) {
	ctx := t.Context()
	for i, text := range textCorpus {
		in := agentsmcp.Insight{Text: text, Type: agentsmcp.InsightObservation, CreatedAt: at(i)}
		if err := s.Insights.CreateInsight(ctx, &in); err != nil {
			t.Fatalf("CreateInsight(%q): %v", text, err)
		}
	}
	checkTextCases(t, true, func(text string) ([]string, error) {
		items, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{Text: text, Limit: agentsmcp.MaxPageSize})
		var texts []string
		for _, it := range items {
			texts = append(texts, it.Text)
		}
		return texts, err
	})
}
