package sqlite

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestAuditQueryPlans checks with EXPLAIN QUERY PLAN that each audit
// filter reads its page off its own index in order (no sort), or off the
// table's key (at, id) where that is the index it needs, and that
// retention deletes through the table's key.
func TestAuditQueryPlans(t *testing.T) {
	const tableKey = "the table's key (at, id)"
	db := openTest(t)
	since, until := time.Unix(100, 0), time.Unix(200, 0)
	cur := encodeCursor(auditCursor, cursor{n: 150_000, id: agentsmcp.NewID(agentsmcp.AuditIDPrefix)})
	tests := []struct {
		name  string
		f     agentsmcp.AuditFilter
		index string
	}{
		{"all", agentsmcp.AuditFilter{}, tableKey},
		{"all, paged", agentsmcp.AuditFilter{Cursor: cur}, tableKey},
		{"time range", agentsmcp.AuditFilter{Since: since, Until: until}, tableKey},
		// The common kind and outcome: nearly every entry matches.
		{"tool calls", agentsmcp.AuditFilter{Kind: agentsmcp.AuditToolCall, Cursor: cur}, tableKey},
		{"successes", agentsmcp.AuditFilter{Outcome: agentsmcp.AuditOK}, tableKey},
		{"tool calls of a tool", agentsmcp.AuditFilter{Kind: agentsmcp.AuditToolCall, Target: "files__read_file"}, "audit_entries_target_at"},
		{"failed calls", agentsmcp.AuditFilter{Kind: agentsmcp.AuditToolCall, Outcome: agentsmcp.AuditError}, "audit_entries_outcome_at"},
		{"principal", agentsmcp.AuditFilter{Principal: "jwt:bob", Cursor: cur}, "audit_entries_principal_at"},
		{"kind", agentsmcp.AuditFilter{Kind: agentsmcp.AuditAdminWrite, Since: since}, "audit_entries_kind_at"},
		{"target", agentsmcp.AuditFilter{Target: "files__read_file", Until: until}, "audit_entries_target_at"},
		{"outcome", agentsmcp.AuditFilter{Outcome: agentsmcp.AuditDenied, Cursor: cur}, "audit_entries_outcome_at"},
		{"request id", agentsmcp.AuditFilter{RequestID: "r1"}, "audit_entries_request_at"},
	}
	type stmt struct {
		name, sql, index string
		args             []any
	}
	var stmts []stmt
	for _, tt := range tests {
		q, err := auditQuery(tt.f)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		s, args := q.sql(21)
		stmts = append(stmts, stmt{tt.name, s, tt.index, args})
	}
	stmts = append(stmts, stmt{"retention", deleteAuditSQL, tableKey, []any{int64(1), auditDeleteChunk}})
	for _, s := range stmts {
		rows, err := db.writer.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+s.sql, s.args...)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var details []string
		for rows.Next() {
			var id, parent, notUsed int
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			details = append(details, detail)
		}
		rows.Close()
		plan := strings.Join(details, "\n")
		if s.index == tableKey {
			if strings.Contains(plan, "INDEX") || !strings.Contains(plan, "PRIMARY KEY") && !strings.Contains(plan, "SCAN a") {
				t.Errorf("%s: plan does not read the table by its key:\n%s\n%s", s.name, s.sql, plan)
			}
		} else if !strings.Contains(plan, "USING INDEX "+s.index) && !strings.Contains(plan, "USING COVERING INDEX "+s.index) {
			t.Errorf("%s: plan does not use %s:\n%s\n%s", s.name, s.index, s.sql, plan)
		}
		if strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s: plan sorts:\n%s\n%s", s.name, s.sql, plan)
		}
	}
}

// TestAuditRetentionInChunks deletes more entries than one chunk holds:
// the count covers every chunk and newer entries stay.
func TestAuditRetentionInChunks(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const nOld = 2*auditDeleteChunk + 137
	for done := 0; done < nOld; {
		batch := make([]*agentsmcp.AuditEntry, 0, agentsmcp.MaxAuditBatchEntries)
		for ; done < nOld && len(batch) < agentsmcp.MaxAuditBatchEntries; done++ {
			batch = append(batch, &agentsmcp.AuditEntry{At: old.Add(time.Duration(done) * time.Second),
				Kind: agentsmcp.AuditToolCall, Target: "t", Outcome: agentsmcp.AuditOK})
		}
		if err := db.CreateAuditEntries(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := old.Add(48 * time.Hour)
	recent := []*agentsmcp.AuditEntry{
		{At: cutoff, Kind: agentsmcp.AuditToolCall, Target: "kept", Outcome: agentsmcp.AuditOK},
		{At: cutoff.Add(time.Hour), Kind: agentsmcp.AuditToolCall, Target: "kept", Outcome: agentsmcp.AuditOK},
	}
	if err := db.CreateAuditEntries(ctx, recent); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteAuditEntriesBefore(ctx, cutoff)
	if err != nil || n != nOld {
		t.Fatalf("DeleteAuditEntriesBefore: %d, %v; want %d", n, err, nOld)
	}
	items, next, err := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{Limit: agentsmcp.MaxPageSize})
	if err != nil || next != "" || len(items) != 2 || items[0].ID != recent[1].ID || items[1].ID != recent[0].ID {
		t.Fatalf("left after retention: %d items, cursor %q, %v; want the 2 recent entries", len(items), next, err)
	}
}

// TestAuditMigrationKeepsEntries stores entries in the audit table of
// migration 0004, then opens the file with every migration: 0011 moves them
// into the table clustered on (at, id), every field intact, and the
// retried insert of one of them is still skipped.
func TestAuditMigrationKeepsEntries(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(migrations, func(m migration) bool { return strings.HasSuffix(m.name, "_audit_compact.sql") })
	if i < 0 {
		t.Fatal("no audit_compact migration")
	}
	for _, m := range migrations[:i] {
		if err := apply(ctx, w, m); err != nil {
			t.Fatal(err)
		}
	}
	old := []*agentsmcp.AuditEntry{
		{ID: agentsmcp.NewID(agentsmcp.AuditIDPrefix), At: time.UnixMilli(1_700_000_000_000).UTC(), RequestID: "r1", Principal: "key:abc",
			Kind: agentsmcp.AuditToolCall, Target: "files__read_file", Transport: "sse", Arguments: json.RawMessage(`{"path":"/x"}`),
			Outcome: agentsmcp.AuditError, Error: "boom", Latency: 3 * time.Millisecond},
		{ID: agentsmcp.NewID(agentsmcp.AuditIDPrefix), At: time.UnixMilli(1_700_000_001_000).UTC(), Principal: "jwt:alice",
			Kind: agentsmcp.AuditAdminWrite, Target: "PUT /admin/upstreams/{name}", Transport: "admin", Outcome: agentsmcp.AuditOK},
	}
	for _, e := range old {
		if _, err := w.ExecContext(ctx, `INSERT INTO audit_entries (id, at, request_id, principal, kind, target, transport, arguments, outcome, error, latency_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.At.UnixMilli(), e.RequestID, e.Principal, string(e.Kind), e.Target, e.Transport,
			string(e.Arguments), string(e.Outcome), e.Error, int64(e.Latency)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, _, err := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{})
	if err != nil || len(got) != 2 {
		t.Fatalf("after the migration: %d entries, %v", len(got), err)
	}
	slices.Reverse(got)
	for i, e := range got {
		a, _ := json.Marshal(e)
		b, _ := json.Marshal(old[i])
		if string(a) != string(b) {
			t.Errorf("entry %d after the migration:\n got %s\nwant %s", i, a, b)
		}
	}
	if err := db.CreateAuditEntries(ctx, []*agentsmcp.AuditEntry{old[0]}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{}); len(got) != 2 {
		t.Errorf("a migrated entry sent again was stored again: %d entries", len(got))
	}
	if got, _, _ := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{Kind: agentsmcp.AuditAdminWrite}); len(got) != 1 || got[0].ID != old[1].ID {
		t.Errorf("kind filter after the migration: %+v", got)
	}
}
