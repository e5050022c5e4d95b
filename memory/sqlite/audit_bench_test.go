package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// schema0004Audit is the audit table as migration 0004 created it: seven
// B-trees besides the table (the id key and six indexes). The benchmark
// recreates it to measure the schema before 0011 in the same run.
const schema0004Audit = `DROP TABLE audit_entries;
CREATE TABLE audit_entries (
    id         TEXT    PRIMARY KEY,
    at         INTEGER NOT NULL,
    request_id TEXT    NOT NULL,
    principal  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    transport  TEXT    NOT NULL,
    arguments  TEXT    NOT NULL,
    outcome    TEXT    NOT NULL,
    error      TEXT    NOT NULL,
    latency_ns INTEGER NOT NULL
);
CREATE INDEX audit_entries_at           ON audit_entries (at, id);
CREATE INDEX audit_entries_principal_at ON audit_entries (principal, at, id);
CREATE INDEX audit_entries_kind_at      ON audit_entries (kind, at, id);
CREATE INDEX audit_entries_target_at    ON audit_entries (target, at, id);
CREATE INDEX audit_entries_outcome_at   ON audit_entries (outcome, at, id);
CREATE INDEX audit_entries_request_at   ON audit_entries (request_id, at, id) WHERE request_id != '';`

// benchAuditEntry is a typical entry of a relayed tool call.
func benchAuditEntry(i int) *agentsmcp.AuditEntry {
	return &agentsmcp.AuditEntry{
		Principal: fmt.Sprintf("key:%012x", i%8), Kind: agentsmcp.AuditToolCall,
		Target: []string{"everything__echo", "files__read_file", "github__search_issues"}[i%3], Transport: "streamable",
		RequestID: fmt.Sprintf("req-%08x-%04x", i, i%97),
		Arguments: json.RawMessage(`{"message":"hello world","path":"/tmp/some/file.txt"}`),
		Outcome:   agentsmcp.AuditOK, Latency: time.Duration(i%50) * time.Millisecond,
	}
}

// BenchmarkAuditInsert is the cost of storing the audit entry of one call:
// ns/op is per entry, B/entry the file's growth per entry. schema=0004 is
// the table before migration 0011, recreated in the same run as the
// baseline; batch=1 is a transaction per entry, batch=256 the recorder's
// default batch.
func BenchmarkAuditInsert(b *testing.B) {
	for _, schema := range []string{"0004", "current"} {
		for _, batch := range []int{1, 256} {
			b.Run(fmt.Sprintf("schema=%s/batch=%d", schema, batch), func(b *testing.B) {
				db := openTest(b)
				ctx := context.Background()
				if schema == "0004" {
					if _, err := db.writer.ExecContext(ctx, schema0004Audit); err != nil {
						b.Fatal(err)
					}
				}
				// Entries already stored, so that the indexes are not
				// trivially small.
				const seed = 20_000
				insertAuditEntries(b, db, 0, seed, 256)
				before := fileBytes(b, db)
				b.ResetTimer()
				insertAuditEntries(b, db, seed, b.N, batch)
				b.StopTimer()
				b.ReportMetric(float64(fileBytes(b, db)-before)/float64(b.N), "B/entry")
			})
		}
	}
}

func insertAuditEntries(b *testing.B, db *DB, from, n, batch int) {
	entries := make([]*agentsmcp.AuditEntry, 0, batch)
	for i := from; i < from+n; i++ {
		entries = append(entries, benchAuditEntry(i))
		if len(entries) == batch || i == from+n-1 {
			if err := db.CreateAuditEntries(context.Background(), entries); err != nil {
				b.Fatal(err)
			}
			entries = entries[:0]
		}
	}
}

// fileBytes is the size of the database's used pages, WAL included (a
// checkpoint first moves it into the file).
func fileBytes(b *testing.B, db *DB) int64 {
	ctx := context.Background()
	if _, err := db.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	var pages, free, size int64
	row := db.writer.QueryRowContext(ctx, "SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size)")
	if err := row.Scan(&pages, &free, &size); err != nil {
		b.Fatal(err)
	}
	return (pages - free) * size
}
