package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// Migration 0016 gives the insights and tasks stored before it their size,
// so that the quotas count them: the bytes of their texts and of the JSON
// that holds their lists, steps and events.
func TestMigrationGivesOldRowsTheirBytes(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var usage migration
	for _, m := range migrations {
		if m.name == "0016_usage.sql" {
			usage = m
			break
		}
		if err := apply(ctx, w, m); err != nil {
			t.Fatal(err)
		}
	}
	if usage.version == 0 {
		t.Fatal("no migration 0016_usage.sql")
	}
	for _, q := range []string{
		`INSERT INTO insights (id, text, type, applies_to, confidence, evidence, source, created_at, principal)
			VALUES ('ins_old', 'twelve bytes', 'observation', '["ab","c"]', 0.5, '["tsk_1"]', 'src', 1, 'key:alice')`,
		`INSERT INTO tasks (id, plan_id, request, status, steps, inputs, history, error, lease_owner, lease_expires, version, created_at, updated_at, ended_at, principal)
			VALUES ('tsk_old', '', 'a request', 'running', '', '{"a":1}', '', 'err', '', 0, 1, 1, 1, 0, 'key:alice')`,
		`INSERT INTO task_steps (task_pk, idx, state) SELECT pk, 0, '{"stepId":"s1"}' FROM tasks WHERE id = 'tsk_old'`,
		`INSERT INTO task_events (task_pk, seq, events) SELECT pk, 0, '[{"at":1,"type":"x"}]' FROM tasks WHERE id = 'tsk_old'`,
	} {
		if _, err := w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path) // applies 0016 and any later migration
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// "twelve bytes" + "src" + "ab" + "c" + "tsk_1"
	if u, err := db.InsightUsage(ctx, "key:alice"); err != nil || u.Count != 1 || u.Bytes != 12+3+2+1+5 {
		t.Errorf("InsightUsage = %+v, %v; want 1 insight of 23 bytes", u, err)
	}
	// "a request" + `{"a":1}` + "err" + the step's JSON + the events' JSON
	want := int64(9 + 7 + 3 + len(`{"stepId":"s1"}`) + len(`[{"at":1,"type":"x"}]`))
	if u, err := db.TaskUsage(ctx, "key:alice"); err != nil || u.Count != 1 || u.Bytes != want {
		t.Errorf("TaskUsage = %+v, %v; want 1 task of %d bytes", u, err, want)
	}
}
