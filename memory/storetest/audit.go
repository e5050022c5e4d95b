package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["AuditRoundTrip"] = testAuditRoundTrip
	suite["AuditAssignsIDAndTime"] = testAuditAssignsIDAndTime
	suite["AuditInvalid"] = testAuditInvalid
	suite["AuditBatchIsAtomic"] = testAuditBatchIsAtomic
	suite["AuditRetryStoresOnce"] = testAuditRetryStoresOnce
	suite["AuditFilters"] = testAuditFilters
	suite["AuditOrderAndPaging"] = testAuditOrderAndPaging
	suite["AuditTimeRange"] = testAuditTimeRange
	suite["AuditBadFilter"] = testAuditBadFilter
	suite["AuditRetention"] = testAuditRetention
	suite["AuditSizeBound"] = testAuditSizeBound
}

// auditStore returns the store's AuditService, failing t when the store
// under test did not provide one.
func auditStore(t *testing.T, s Services) agentsmcp.AuditService {
	t.Helper()
	if s.Audit == nil {
		t.Fatal("Services.Audit is nil: the store must provide an AuditService")
	}
	return s.Audit
}

func auditID(e *agentsmcp.AuditEntry) string { return e.ID }

// checkAuditEntry compares every field of got with want; At at
// millisecond precision, Arguments as bytes.
func checkAuditEntry(t *testing.T, got, want *agentsmcp.AuditEntry) {
	t.Helper()
	if got == nil {
		t.Fatalf("audit entry %s: nil", want.ID)
	}
	g, w := *got, *want
	checkTime(t, "audit entry "+w.ID+" At", g.At, w.At)
	g.At, w.At = time.Time{}, time.Time{}
	if string(g.Arguments) != string(w.Arguments) {
		t.Errorf("audit entry %s Arguments = %s, want %s", w.ID, g.Arguments, w.Arguments)
	}
	g.Arguments, w.Arguments = nil, nil
	if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
		t.Errorf("audit entry %s:\n got %#v\nwant %#v", w.ID, g, w)
	}
}

// findAllAudit pages through the entries f selects with the default page
// size and returns them in order.
func findAllAudit(t *testing.T, svc agentsmcp.AuditService, f agentsmcp.AuditFilter) []*agentsmcp.AuditEntry {
	t.Helper()
	var all []*agentsmcp.AuditEntry
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("more than 100 pages")
		}
		items, next, err := svc.FindAuditEntries(t.Context(), f)
		if err != nil {
			t.Fatalf("FindAuditEntries(%+v): %v", f, err)
		}
		all = append(all, items...)
		if next == "" {
			return all
		}
		f.Cursor = next
	}
}

func testAuditRoundTrip(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := []*agentsmcp.AuditEntry{
		{
			ID:            agentsmcp.NewID(agentsmcp.AuditIDPrefix),
			At:            time.Date(2026, 10, 3, 9, 8, 7, 654321987, time.FixedZone("PST", -8*3600)),
			RequestID:     "req-42",
			Principal:     "key:0123456789ab",
			Kind:          agentsmcp.AuditToolCall,
			Target:        "files__read_file",
			Transport:     "streamable",
			Client:        "claude-code/2.1.0 ☕",
			ClientProfile: "standard",
			Arguments:     json.RawMessage(`{"path":"/tmp/naïve café ☕","n":[1,2.5,null,true],"password":"[redacted]"}`),
			Outcome:       agentsmcp.AuditError,
			Error:         `internal: upstream "files" said "no such file" \ $where`,
			Latency:       1234567891 * time.Nanosecond,
		},
		{
			At:        at(1),
			Principal: "",
			Kind:      agentsmcp.AuditAuthFailure,
			Target:    "POST /mcp",
			Outcome:   agentsmcp.AuditDenied,
		},
		{
			At:        at(2),
			Principal: "jwt:alice@example.com",
			Kind:      agentsmcp.AuditAdminWrite,
			Target:    "PUT /admin/upstreams/{name}",
			Transport: "admin",
			Arguments: json.RawMessage(`"[not valid JSON: 3 bytes]"`),
			Outcome:   agentsmcp.AuditOK,
			Latency:   time.Duration(1<<62 + 3),
		},
	}
	want := make([]agentsmcp.AuditEntry, len(entries))
	for i, e := range entries {
		want[i] = *e
	}
	if err := svc.CreateAuditEntries(t.Context(), entries); err != nil {
		t.Fatalf("CreateAuditEntries: %v", err)
	}
	if entries[0].ID != want[0].ID {
		t.Errorf("CreateAuditEntries changed the given id %q to %q", want[0].ID, entries[0].ID)
	}
	for i, e := range entries {
		want[i].ID = e.ID
		checkID(t, "ID", e.ID, agentsmcp.AuditIDPrefix)
		checkTime(t, "assigned At", e.At, want[i].At)
		items, _, err := svc.FindAuditEntries(t.Context(), agentsmcp.AuditFilter{Kind: e.Kind})
		if err != nil || len(items) != 1 {
			t.Fatalf("FindAuditEntries by kind %s: %d items, %v; want 1", e.Kind, len(items), err)
		}
		checkAuditEntry(t, items[0], &want[i])
	}
}

func testAuditAssignsIDAndTime(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := make([]*agentsmcp.AuditEntry, 5)
	for i := range entries {
		entries[i] = &agentsmcp.AuditEntry{Kind: agentsmcp.AuditToolCall, Target: "t", Outcome: agentsmcp.AuditOK}
	}
	before := time.Now()
	if err := svc.CreateAuditEntries(t.Context(), entries); err != nil {
		t.Fatalf("CreateAuditEntries: %v", err)
	}
	after := time.Now()
	ids := map[string]bool{}
	for _, e := range entries {
		checkID(t, "ID", e.ID, agentsmcp.AuditIDPrefix)
		checkRecent(t, "At", e.At, before, after)
		if e.At.Location() != time.UTC || !e.At.Equal(e.At.Truncate(time.Millisecond)) {
			t.Errorf("assigned At %v is not UTC at millisecond precision", e.At)
		}
		ids[e.ID] = true
	}
	if len(ids) != len(entries) {
		t.Errorf("%d distinct ids for %d entries", len(ids), len(entries))
	}
	got := findAllAudit(t, svc, agentsmcp.AuditFilter{})
	if len(got) != len(entries) {
		t.Fatalf("found %d entries, want %d", len(got), len(entries))
	}
	for _, g := range got {
		if !ids[g.ID] {
			t.Errorf("found unknown entry %s", g.ID)
		}
	}
	if err := svc.CreateAuditEntries(t.Context(), nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func testAuditInvalid(t *testing.T, s Services) {
	svc := auditStore(t, s)
	valid := func() *agentsmcp.AuditEntry {
		return &agentsmcp.AuditEntry{Kind: agentsmcp.AuditToolCall, Target: "t", Outcome: agentsmcp.AuditOK, At: at(0)}
	}
	tests := []struct {
		name   string
		change func(e *agentsmcp.AuditEntry)
	}{
		{"unknown kind", func(e *agentsmcp.AuditEntry) { e.Kind = "login" }},
		{"unknown outcome", func(e *agentsmcp.AuditEntry) { e.Outcome = "" }},
		{"no target", func(e *agentsmcp.AuditEntry) { e.Target = "" }},
		{"negative latency", func(e *agentsmcp.AuditEntry) { e.Latency = -time.Second }},
		{"long principal", func(e *agentsmcp.AuditEntry) {
			e.Principal = strings.Repeat("p", agentsmcp.MaxAuditFieldBytes+1)
		}},
		{"arguments not JSON", func(e *agentsmcp.AuditEntry) { e.Arguments = json.RawMessage("password=hunter2") }},
		{"malformed id", func(e *agentsmcp.AuditEntry) { e.ID = "aud_x" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := valid()
			tt.change(e)
			wantCode(t, svc.CreateAuditEntries(t.Context(), []*agentsmcp.AuditEntry{e}), agentsmcp.EINVALID, "CreateAuditEntries")
		})
	}
	wantCode(t, svc.CreateAuditEntries(t.Context(), []*agentsmcp.AuditEntry{valid(), nil}), agentsmcp.EINVALID, "batch with a nil entry")
	big := make([]*agentsmcp.AuditEntry, agentsmcp.MaxAuditBatchEntries+1)
	for i := range big {
		big[i] = valid()
	}
	wantCode(t, svc.CreateAuditEntries(t.Context(), big), agentsmcp.EINVALID, "batch over MaxAuditBatchEntries")
	if got := findAllAudit(t, svc, agentsmcp.AuditFilter{}); len(got) != 0 {
		t.Errorf("invalid batches stored %d entries", len(got))
	}
}

func testAuditBatchIsAtomic(t *testing.T, s Services) {
	svc := auditStore(t, s)
	batch := []*agentsmcp.AuditEntry{
		{Kind: agentsmcp.AuditToolCall, Target: "a", Outcome: agentsmcp.AuditOK, At: at(1)},
		{Kind: agentsmcp.AuditToolCall, Target: "b", Outcome: agentsmcp.AuditOK, At: at(2)},
		{Kind: agentsmcp.AuditToolCall, Target: "c", Outcome: "exploded", At: at(3)},
	}
	wantCode(t, svc.CreateAuditEntries(t.Context(), batch), agentsmcp.EINVALID, "batch with an invalid last entry")
	if got := findAllAudit(t, svc, agentsmcp.AuditFilter{}); len(got) != 0 {
		t.Fatalf("a batch with an invalid entry stored %d entries; want none", len(got))
	}
	batch[2].Outcome = agentsmcp.AuditError
	if err := svc.CreateAuditEntries(t.Context(), batch); err != nil {
		t.Fatalf("fixed batch: %v", err)
	}
	if got := findAllAudit(t, svc, agentsmcp.AuditFilter{}); len(got) != 3 {
		t.Fatalf("fixed batch stored %d entries, want 3", len(got))
	}
}

func testAuditRetryStoresOnce(t *testing.T, s Services) {
	svc := auditStore(t, s)
	batch := []*agentsmcp.AuditEntry{
		{Kind: agentsmcp.AuditToolCall, Target: "a", Outcome: agentsmcp.AuditOK, At: at(1)},
		{Kind: agentsmcp.AuditToolCall, Target: "b", Outcome: agentsmcp.AuditOK},
	}
	if err := svc.CreateAuditEntries(t.Context(), batch); err != nil {
		t.Fatalf("CreateAuditEntries: %v", err)
	}
	first := []string{batch[0].ID, batch[1].ID}
	// A retry after an unknown outcome sends the same entries again, with
	// their assigned ids, possibly together with new ones.
	batch = append(batch, &agentsmcp.AuditEntry{Kind: agentsmcp.AuditToolCall, Target: "c", Outcome: agentsmcp.AuditOK, At: at(3)})
	if err := svc.CreateAuditEntries(t.Context(), batch); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if batch[0].ID != first[0] || batch[1].ID != first[1] {
		t.Errorf("the retry changed the assigned ids")
	}
	got := findAllAudit(t, svc, agentsmcp.AuditFilter{})
	if len(got) != 3 {
		t.Fatalf("after a retry: %d entries, want 3 (each once)", len(got))
	}
}

// auditFixture stores entries spread over every filter field, one second
// apart (entry i at at(i)), and returns them in creation order.
func auditFixture(t *testing.T, svc agentsmcp.AuditService, n int) []*agentsmcp.AuditEntry {
	t.Helper()
	principals := []string{"key:aaaaaaaaaaaa", "jwt:bob", "anonymous"}
	targets := []string{"files__read_file", "POST /admin/upstreams", "github__create_issue", "GET /x"}
	entries := make([]*agentsmcp.AuditEntry, n)
	for i := range entries {
		entries[i] = &agentsmcp.AuditEntry{
			At:        at(i),
			RequestID: []string{"", "r1", "r2"}[i%3],
			Principal: principals[i%len(principals)],
			Kind:      agentsmcp.AuditKinds[i%len(agentsmcp.AuditKinds)],
			Target:    targets[i%len(targets)],
			Transport: "sse",
			Outcome:   agentsmcp.AuditOutcomes[(i/2)%len(agentsmcp.AuditOutcomes)],
			Latency:   time.Duration(i) * time.Millisecond,
		}
	}
	if err := svc.CreateAuditEntries(t.Context(), entries); err != nil {
		t.Fatalf("CreateAuditEntries: %v", err)
	}
	return entries
}

// newestFirstAuditIDs returns the ids of the entries keep selects, newest first
// (ties by id, higher first).
func newestFirstAuditIDs(entries []*agentsmcp.AuditEntry, keep func(*agentsmcp.AuditEntry) bool) []string {
	var sel []*agentsmcp.AuditEntry
	for _, e := range entries {
		if keep(e) {
			sel = append(sel, e)
		}
	}
	slices.SortFunc(sel, func(a, b *agentsmcp.AuditEntry) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	ids := make([]string, len(sel))
	for i, e := range sel {
		ids[i] = e.ID
	}
	return ids
}

func testAuditFilters(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := auditFixture(t, svc, 36)
	// A denied auth failure of the fixture, whichever principal it has (how
	// the fields combine depends on the number of kinds).
	i := slices.IndexFunc(entries, func(e *agentsmcp.AuditEntry) bool {
		return e.Kind == agentsmcp.AuditAuthFailure && e.Outcome == agentsmcp.AuditDenied
	})
	if i < 0 {
		t.Fatal("the fixture has no denied auth failure")
	}
	denied := entries[i]
	tests := []struct {
		name string
		f    agentsmcp.AuditFilter
		keep func(e *agentsmcp.AuditEntry) bool
	}{
		{"everything", agentsmcp.AuditFilter{}, func(*agentsmcp.AuditEntry) bool { return true }},
		{"principal", agentsmcp.AuditFilter{Principal: "jwt:bob"}, func(e *agentsmcp.AuditEntry) bool { return e.Principal == "jwt:bob" }},
		{"principal is exact", agentsmcp.AuditFilter{Principal: "jwt"}, func(*agentsmcp.AuditEntry) bool { return false }},
		{"kind", agentsmcp.AuditFilter{Kind: agentsmcp.AuditAdminWrite}, func(e *agentsmcp.AuditEntry) bool { return e.Kind == agentsmcp.AuditAdminWrite }},
		{"target", agentsmcp.AuditFilter{Target: "POST /admin/upstreams"}, func(e *agentsmcp.AuditEntry) bool { return e.Target == "POST /admin/upstreams" }},
		{"target is exact", agentsmcp.AuditFilter{Target: "files"}, func(*agentsmcp.AuditEntry) bool { return false }},
		{"outcome", agentsmcp.AuditFilter{Outcome: agentsmcp.AuditDenied}, func(e *agentsmcp.AuditEntry) bool { return e.Outcome == agentsmcp.AuditDenied }},
		{"request id", agentsmcp.AuditFilter{RequestID: "r2"}, func(e *agentsmcp.AuditEntry) bool { return e.RequestID == "r2" }},
		{"combined", agentsmcp.AuditFilter{Principal: denied.Principal, Outcome: agentsmcp.AuditDenied, Kind: agentsmcp.AuditAuthFailure},
			func(e *agentsmcp.AuditEntry) bool {
				return e.Principal == denied.Principal && e.Outcome == agentsmcp.AuditDenied && e.Kind == agentsmcp.AuditAuthFailure
			}},
		{"combined with time", agentsmcp.AuditFilter{Target: "files__read_file", Since: at(8), Until: at(30)},
			func(e *agentsmcp.AuditEntry) bool {
				return e.Target == "files__read_file" && !e.At.Before(at(8)) && e.At.Before(at(30))
			}},
		{"metacharacters match nothing", agentsmcp.AuditFilter{Principal: ".*"}, func(*agentsmcp.AuditEntry) bool { return false }},
		{"operator text matches nothing", agentsmcp.AuditFilter{Target: `{"$gt":""}`}, func(*agentsmcp.AuditEntry) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := newestFirstAuditIDs(entries, tt.keep)
			if !strings.Contains(tt.name, "nothing") && !strings.Contains(tt.name, "exact") &&
				(len(want) == 0 || len(want) == len(entries) && tt.name != "everything") {
				t.Fatalf("the fixture selects %d of %d entries: the test would prove nothing", len(want), len(entries))
			}
			got := findAllAudit(t, svc, tt.f)
			gotIDs := make([]string, len(got))
			for i, e := range got {
				gotIDs[i] = e.ID
			}
			if !slices.Equal(gotIDs, want) {
				t.Errorf("FindAuditEntries(%+v):\n got %v\nwant %v", tt.f, gotIDs, want)
			}
		})
	}
}

func testAuditOrderAndPaging(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := auditFixture(t, svc, 25)
	// Five more share one millisecond: ties are ordered by id.
	ties := make([]*agentsmcp.AuditEntry, 5)
	for i := range ties {
		ties[i] = &agentsmcp.AuditEntry{At: at(12).Add(300 * time.Microsecond), Kind: agentsmcp.AuditToolCall,
			Target: "tie", Outcome: agentsmcp.AuditOK}
	}
	if err := svc.CreateAuditEntries(t.Context(), ties); err != nil {
		t.Fatal(err)
	}
	entries = append(entries, ties...)
	for _, fc := range []struct {
		name string
		f    agentsmcp.AuditFilter
		keep func(e *agentsmcp.AuditEntry) bool
	}{
		{"all", agentsmcp.AuditFilter{}, func(*agentsmcp.AuditEntry) bool { return true }},
		{"kind", agentsmcp.AuditFilter{Kind: agentsmcp.AuditToolCall}, func(e *agentsmcp.AuditEntry) bool { return e.Kind == agentsmcp.AuditToolCall }},
		{"until", agentsmcp.AuditFilter{Until: at(20)}, func(e *agentsmcp.AuditEntry) bool { return e.At.Before(at(20)) }},
	} {
		want := newestFirstAuditIDs(entries, fc.keep)
		for _, limit := range pageLimits {
			f := fc.f
			got := pageAll(t, func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.AuditEntry, string, error) {
				f.Cursor, f.Limit = cursor, limit
				return svc.FindAuditEntries(ctx, f)
			}, limit, auditID)
			if !slices.Equal(got, want) {
				t.Errorf("%s, limit %d:\n got %v\nwant %v", fc.name, limit, got, want)
			}
		}
	}
}

func testAuditTimeRange(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := auditFixture(t, svc, 10)
	half := 500 * time.Microsecond
	tests := []struct {
		name         string
		since, until time.Time
	}{
		{"since is inclusive", at(3), time.Time{}},
		{"until is exclusive", time.Time{}, at(7)},
		{"both", at(2), at(5)},
		{"sub-millisecond bounds", at(2).Add(half), at(5).Add(half)},
		{"empty range", at(5), at(5)},
		{"other zone", at(4).In(time.FixedZone("CET", 3600)), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := newestFirstAuditIDs(entries, func(e *agentsmcp.AuditEntry) bool {
				return (tt.since.IsZero() || !e.At.Before(tt.since)) && (tt.until.IsZero() || e.At.Before(tt.until))
			})
			got := findAllAudit(t, svc, agentsmcp.AuditFilter{Since: tt.since, Until: tt.until})
			gotIDs := make([]string, len(got))
			for i, e := range got {
				gotIDs[i] = e.ID
			}
			if !slices.Equal(gotIDs, want) {
				t.Errorf("got %v\nwant %v", gotIDs, want)
			}
		})
	}
}

func testAuditBadFilter(t *testing.T, s Services) {
	svc := auditStore(t, s)
	auditFixture(t, svc, 3)
	for _, c := range badCursors {
		_, _, err := svc.FindAuditEntries(t.Context(), agentsmcp.AuditFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("cursor %q", c))
	}
	_, _, err := svc.FindAuditEntries(t.Context(), agentsmcp.AuditFilter{Kind: "toolcall"})
	wantCode(t, err, agentsmcp.EINVALID, "unknown kind")
	_, _, err = svc.FindAuditEntries(t.Context(), agentsmcp.AuditFilter{Outcome: "failed"})
	wantCode(t, err, agentsmcp.EINVALID, "unknown outcome")
	if s.Learnings != nil {
		// A cursor of another list is not valid here.
		for i := range 2 {
			l := &agentsmcp.Learning{Query: "q", Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(i)}
			if err := s.Learnings.CreateLearning(t.Context(), l); err != nil {
				t.Fatal(err)
			}
		}
		_, next, err := s.Learnings.FindLearnings(t.Context(), agentsmcp.LearningFilter{Limit: 1})
		if err != nil || next == "" {
			t.Fatalf("FindLearnings: %q, %v; want a cursor", next, err)
		}
		_, _, err = svc.FindAuditEntries(t.Context(), agentsmcp.AuditFilter{Cursor: next})
		wantCode(t, err, agentsmcp.EINVALID, "a learning cursor")
	}
}

func testAuditRetention(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := auditFixture(t, svc, 20)
	n, err := svc.DeleteAuditEntriesBefore(t.Context(), at(0))
	if err != nil || n != 0 {
		t.Fatalf("delete before the oldest: %d, %v; want 0", n, err)
	}
	// Entry 8 is at exactly the bound: kept. A sub-millisecond bound
	// counts like its next millisecond.
	n, err = svc.DeleteAuditEntriesBefore(t.Context(), at(8))
	if err != nil || n != 8 {
		t.Fatalf("DeleteAuditEntriesBefore(at(8)): %d, %v; want 8", n, err)
	}
	want := newestFirstAuditIDs(entries, func(e *agentsmcp.AuditEntry) bool { return !e.At.Before(at(8)) })
	got := findAllAudit(t, svc, agentsmcp.AuditFilter{})
	gotIDs := make([]string, len(got))
	for i, e := range got {
		gotIDs[i] = e.ID
	}
	if !slices.Equal(gotIDs, want) {
		t.Errorf("after retention:\n got %v\nwant %v", gotIDs, want)
	}
	n, err = svc.DeleteAuditEntriesBefore(t.Context(), at(8))
	if err != nil || n != 0 {
		t.Errorf("repeated delete: %d, %v; want 0", n, err)
	}
	n, err = svc.DeleteAuditEntriesBefore(t.Context(), at(10).Add(time.Microsecond))
	if err != nil || n != 3 {
		t.Errorf("delete before at(10)+1µs: %d, %v; want 3 (8, 9 and 10)", n, err)
	}
	n, err = svc.DeleteAuditEntriesBefore(t.Context(), at(1000))
	if err != nil || n != 9 {
		t.Errorf("delete everything: %d, %v; want 9", n, err)
	}
	if got := findAllAudit(t, svc, agentsmcp.AuditFilter{}); len(got) != 0 {
		t.Errorf("%d entries left after deleting everything", len(got))
	}
}

func testAuditSizeBound(t *testing.T, s Services) {
	svc := auditStore(t, s)
	entries := auditFixture(t, svc, 12)
	// Two entries at one instant: the id breaks the tie, the lower one
	// is older.
	same := []*agentsmcp.AuditEntry{
		{Kind: agentsmcp.AuditToolCall, Target: "x", Outcome: agentsmcp.AuditOK, At: at(-1)},
		{Kind: agentsmcp.AuditToolCall, Target: "y", Outcome: agentsmcp.AuditOK, At: at(-1)},
	}
	if err := svc.CreateAuditEntries(t.Context(), same); err != nil {
		t.Fatal(err)
	}
	all := append(same, entries...)
	ids := func() []string {
		var out []string
		for _, e := range findAllAudit(t, svc, agentsmcp.AuditFilter{}) {
			out = append(out, e.ID)
		}
		return out
	}
	_, err := svc.DeleteOldestAuditEntries(t.Context(), -1)
	wantCode(t, err, agentsmcp.EINVALID, "DeleteOldestAuditEntries(-1)")
	n, err := svc.DeleteOldestAuditEntries(t.Context(), 20)
	if err != nil || n != 0 {
		t.Fatalf("bound above the size: deleted %d, %v; want 0", n, err)
	}
	// Keep 13 of 14: the older of the two at at(-1) goes.
	n, err = svc.DeleteOldestAuditEntries(t.Context(), 13)
	if err != nil || n != 1 {
		t.Fatalf("DeleteOldestAuditEntries(13): %d, %v; want 1", n, err)
	}
	older := min(same[0].ID, same[1].ID)
	want := newestFirstAuditIDs(all, func(e *agentsmcp.AuditEntry) bool { return e.ID != older })
	if got := ids(); !slices.Equal(got, want) {
		t.Errorf("after keeping 13:\n got %v\nwant %v", got, want)
	}
	n, err = svc.DeleteOldestAuditEntries(t.Context(), 5)
	if err != nil || n != 8 {
		t.Fatalf("DeleteOldestAuditEntries(5): %d, %v; want 8", n, err)
	}
	want = newestFirstAuditIDs(entries, func(e *agentsmcp.AuditEntry) bool { return !e.At.Before(at(7)) })
	if got := ids(); !slices.Equal(got, want) {
		t.Errorf("after keeping 5:\n got %v\nwant %v (the newest five)", got, want)
	}
	n, err = svc.DeleteOldestAuditEntries(t.Context(), 0)
	if err != nil || n != 5 || len(ids()) != 0 {
		t.Errorf("keep 0: deleted %d, %v, %d left; want 5, none left", n, err, len(ids()))
	}
}
