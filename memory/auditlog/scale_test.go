package auditlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
)

// TestReadThroughSeesEntriesRecordedBefore: with an hour-long flush
// interval, a read through ReadThrough right after Record sees the
// entries, written in full batches (one store call, one transaction,
// each).
func TestReadThroughSeesEntriesRecordedBefore(t *testing.T) {
	db := openStore(t)
	store := &countingStore{AuditService: db}
	rec := auditlog.New(store, auditlog.Options{QueueSize: 1000, BatchSize: 256, FlushInterval: time.Hour})
	start(t, rec)
	for range 600 {
		rec.Record(toolCall("t"))
	}
	items, _, err := rec.ReadThrough(db, 0).FindAuditEntries(t.Context(), agentsmcp.AuditFilter{Limit: 1})
	if err != nil || len(items) != 1 {
		t.Fatalf("read through: %d items, %v", len(items), err)
	}
	if got := store.batches(); !slices.Equal(got, []int{256, 256, 88}) {
		t.Errorf("batches %v, want [256 256 88]", got)
	}
	if n := len(stored(t, db)); n != 600 || rec.Pending() != 0 {
		t.Errorf("stored %d, pending %d; want 600, 0", n, rec.Pending())
	}
}

// TestFlushWaitsForRun: before Run starts, Flush waits until its context
// ends; after Run returned, it returns at once.
func TestFlushWaitsForRun(t *testing.T) {
	rec := auditlog.New(openStore(t), auditlog.Options{})
	rec.Record(toolCall("t"))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := rec.Flush(ctx); err == nil {
		t.Errorf("Flush before Run returned nil, want the context's error")
	}
	stop := start(t, rec)
	stop()
	if err := rec.Flush(t.Context()); err != nil || rec.Written() != 1 {
		t.Errorf("Flush after Run: %v, Written %d; want nil, 1", err, rec.Written())
	}
}

// TestSizeBoundDropsOldestFirst: with MaxEntries 10, the newest 10 stay
// and the 22 oldest are deleted and counted.
func TestSizeBoundDropsOldestFirst(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{BatchSize: 4, FlushInterval: time.Hour, MaxEntries: 10})
	start(t, rec)
	base := time.Now().Add(-time.Hour)
	var want []string
	for i := range 32 { // full batches: each write asks for a check
		e := toolCall("t")
		e.At = base.Add(time.Duration(i) * time.Second)
		e.Target = "t" + string(rune('a'+i))
		if i >= 22 {
			want = append(want, e.Target)
		}
		rec.Record(e)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The check comes after every max(10/16, 4) entries written, off the
	// writer's path; the last one leaves the newest ten.
	testutil.Eventually(t, 5*time.Second, "22 entries evicted", func() bool { return rec.Evicted() == 22 })
	var got []string
	for _, e := range stored(t, db) {
		got = append(got, e.Target)
	}
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("kept %v, want the newest ten %v", got, want)
	}
}

// TestCallLog: with CallLog set, the entries of calls that ran go to the
// log, redacted; a refused call and an admin write still go to the store.
func TestCallLog(t *testing.T) {
	db := openStore(t)
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	rec := auditlog.New(db, auditlog.Options{FlushInterval: time.Hour, CallLog: logger})
	start(t, rec)

	ok := toolCall("files__read_file")
	ok.Arguments = json.RawMessage(`{"path":"/tmp/x","api_key":"sk-live-secret-value-123456"}`)
	failed := toolCall("files__write_file")
	failed.Outcome, failed.Error = agentsmcp.AuditError, "disk full"
	denied := toolCall("files__delete")
	denied.Outcome, denied.Error = agentsmcp.AuditDenied, "not in the allowlist"
	write := &agentsmcp.AuditEntry{Principal: "jwt:alice", Kind: agentsmcp.AuditAdminWrite, Target: "PUT /admin/upstreams/{name}",
		Transport: "admin", Outcome: agentsmcp.AuditOK}
	for _, e := range []*agentsmcp.AuditEntry{ok, failed, denied, write} {
		rec.Record(e)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var inStore []string
	for _, e := range stored(t, db) {
		inStore = append(inStore, e.Target)
	}
	slices.Sort(inStore)
	if !slices.Equal(inStore, []string{"PUT /admin/upstreams/{name}", "files__delete"}) {
		t.Errorf("in the store: %v; want the refusal and the admin write", inStore)
	}
	mu.Lock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	mu.Unlock()
	byTarget := map[string]map[string]any{}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		byTarget[rec["target"].(string)] = rec
	}
	if len(lines) != 2 || byTarget["files__read_file"] == nil || byTarget["files__write_file"] == nil {
		t.Fatalf("logged %d lines, want the two calls that ran:\n%s", len(lines), buf.String())
	}
	r := byTarget["files__read_file"]
	if r["msg"] != "audit" || r["outcome"] != "ok" || r["principal"] != "key:0123456789ab" || r["id"] == "" {
		t.Errorf("logged entry %v", r)
	}
	if args, _ := json.Marshal(r["arguments"]); !strings.Contains(string(args), `"api_key":"[redacted]"`) || strings.Contains(string(args), "sk-live") {
		t.Errorf("logged arguments %s, want them redacted", args)
	}
	if r := byTarget["files__write_file"]; r["outcome"] != "error" || r["error"] != "disk full" {
		t.Errorf("logged failure %v", r)
	}
	if rec.Logged() != 2 || rec.Written() != 2 || rec.Pending() != 0 {
		t.Errorf("Logged %d Written %d Pending %d; want 2, 2, 0", rec.Logged(), rec.Written(), rec.Pending())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
