package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// An up-to-date store opens without taking the write lock: another process
// holding it (a long write, a backup) does not delay the start, and a start
// does not queue behind it once per migration.
func TestOpenUpToDateStoreTakesNoWriteLock(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	start := time.Now()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("Open while another connection holds the write lock: %v", err)
	}
	defer db.Close()
	if took := time.Since(start); took >= busyTimeout/2 {
		t.Errorf("Open took %v while another connection held the write lock: it waited for the lock", took)
	}
}
