package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/memory/storetest"
)

// openTest opens a store on a fresh file, closed when t ends.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "agents-mcp.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Services {
		db := openTest(t)
		return storetest.Services{Insights: db, Learnings: db, ToolPerformance: db, Patterns: db, Outbox: db,
			Thoughts: db, Plans: db, Tasks: db, TaskCounts: db, Audit: db, Upstreams: db, VirtualServers: db,
			Credentials: db, RawCredentials: db.rawCredentials, Usage: db, InsightPruner: db, CallCounters: db}
	})
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "nested", "dir", "agents-mcp.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	in := &agentsmcp.Insight{Text: "kept across restarts", Type: agentsmcp.InsightObservation, AppliesTo: []string{"t"}}
	l := &agentsmcp.Learning{Query: "kept", Tools: []string{"t"}, Outcome: agentsmcp.OutcomeSuccess}
	if err := db.CreateInsight(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateLearning(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "t", Duration: time.Millisecond, Error: "x"}); err != nil {
		t.Fatal(err)
	}
	p, err := db.RecordPatternUse(ctx, "", "goal", []string{"t"}, true, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if _, err := db.FindInsightByID(ctx, in.ID); err != nil {
		t.Errorf("insight after reopen: %v", err)
	}
	if items, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{Text: "restarts", AppliesTo: "t"}); err != nil || len(items) != 1 {
		t.Errorf("insight search after reopen: %d items, %v", len(items), err)
	}
	if items, _, err := db.FindLearnings(ctx, agentsmcp.LearningFilter{Tool: "t"}); err != nil || len(items) != 1 || items[0].ID != l.ID {
		t.Errorf("learnings after reopen: %v, %v", items, err)
	}
	if perf, err := db.FindToolPerformance(ctx, "t"); err != nil || perf.Calls != 1 || perf.CommonErrors["error"] != 1 {
		t.Errorf("tool performance after reopen: %+v, %v", perf, err)
	}
	if got, err := db.RecordPatternUse(ctx, "", "goal", []string{"t"}, true, time.Time{}); err != nil || got.ID != p.ID || got.Uses != 2 {
		t.Errorf("pattern after reopen: %+v, %v", got, err)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	for range 3 {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		rows, err := db.reader.QueryContext(ctx, "SELECT version, name FROM schema_migrations ORDER BY version")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var v int
			var name string
			if err := rows.Scan(&v, &name); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprint(v, " ", name))
		}
		rows.Close()
		var want []string
		for _, m := range migrations {
			want = append(want, fmt.Sprint(m.version, " ", m.name))
		}
		if !slices.Equal(got, want) {
			t.Errorf("schema_migrations = %v, want %v", got, want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if SchemaVersion < 1 || migrations[0].version != 1 {
		t.Fatalf("SchemaVersion %d, first migration %+v", SchemaVersion, migrations[0])
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.writer.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)", SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a database whose schema is newer than the binary")
	}
	if want := fmt.Sprintf("schema version %d is newer than this binary knows (%d)", SchemaVersion+1, SchemaVersion); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func TestOpenRefusesNonFiles(t *testing.T) {
	for _, path := range []string{"", ":memory:"} {
		if db, err := Open(t.Context(), path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	// URI metacharacters in a directory name stay part of the path.
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars&mode=ro")
	db, err := Open(t.Context(), filepath.Join(dir, "agents-mcp.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if err := db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "x", Type: agentsmcp.InsightObservation}); err != nil {
		t.Fatalf("CreateInsight: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "agents-mcp.db")); err != nil {
		t.Errorf("database file not at the given path: %v", err)
	}
}

func TestPragmas(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	for _, tt := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"}, {"synchronous", "1"}, {"foreign_keys", "1"}, {"busy_timeout", "5000"},
	} {
		var got string
		if err := db.writer.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("writer PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
		}
	}
	if n := db.writer.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer pool allows %d connections, want 1", n)
	}
	// Readers refuse writes.
	_, err := db.reader.ExecContext(ctx, "INSERT INTO tool_performance (tool, calls, errors, last_call_at) VALUES ('x', 1, 0, 0)")
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "readonly") {
		t.Errorf("write through a reader: %v, want a read-only error", err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// TestConcurrentReadersAndWriters: 4 writers and 4 readers at once, under
// -race in CI, must see no SQLITE_BUSY or other error, and lose nothing.
func TestConcurrentReadersAndWriters(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	const writers, perWriter, readers = 4, 25, 4
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		done    = make(chan struct{})
		readsMu sync.Mutex
		reads   int
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			for i := range perWriter {
				tool := fmt.Sprint("tool", w)
				l := &agentsmcp.Learning{Query: fmt.Sprintf("writer %d item %d", w, i), Tools: []string{tool}, Outcome: agentsmcp.OutcomeSuccess}
				if err := db.CreateLearning(ctx, l); err != nil {
					fail(fmt.Errorf("CreateLearning: %w", err))
				}
				if err := db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "shared", Duration: time.Duration(i) * time.Millisecond}); err != nil {
					fail(fmt.Errorf("RecordToolCall: %w", err))
				}
				if _, err := db.RecordPatternUse(ctx, "", "shared goal", []string{"a", "b"}, i%2 == 0, time.Time{}); err != nil {
					fail(fmt.Errorf("RecordPatternUse: %w", err))
				}
				if err := db.CreateInsight(ctx, &agentsmcp.Insight{Text: "concurrent insight", Type: agentsmcp.InsightObservation}); err != nil {
					fail(fmt.Errorf("CreateInsight: %w", err))
				}
			}
		})
	}
	for r := range readers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					readsMu.Lock()
					reads += n
					readsMu.Unlock()
					return
				default:
				}
				var err error
				switch (n + r) % 4 {
				case 0:
					_, _, err = db.FindLearnings(ctx, agentsmcp.LearningFilter{Tool: fmt.Sprint("tool", r), Limit: 5})
				case 1:
					_, err = db.FindToolPerformance(ctx, "shared")
					if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
						err = nil // not recorded yet
					}
				case 2:
					_, _, err = db.FindPatterns(ctx, agentsmcp.PatternFilter{Text: "shared"})
				case 3:
					_, _, err = db.FindInsights(ctx, agentsmcp.InsightFilter{Text: "concurrent"})
				}
				if err != nil {
					fail(fmt.Errorf("reader %d: %w", r, err))
				}
			}
		})
	}
	writersWG.Wait()
	close(done)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if reads == 0 {
		t.Error("the readers never read")
	}
	perf, err := db.FindToolPerformance(ctx, "shared")
	if err != nil || perf.Calls != writers*perWriter {
		t.Errorf("shared tool: %+v, %v; want %d calls", perf, err, writers*perWriter)
	}
	for w := range writers {
		var ids []string
		cursor := ""
		for {
			items, next, err := db.FindLearnings(ctx, agentsmcp.LearningFilter{Tool: fmt.Sprint("tool", w), Cursor: cursor, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range items {
				ids = append(ids, l.ID)
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if len(ids) != perWriter {
			t.Errorf("tool%d: %d learnings, want %d", w, len(ids), perWriter)
		}
	}
	items, _, err := db.FindPatterns(ctx, agentsmcp.PatternFilter{})
	if err != nil || len(items) != 1 || items[0].Uses != writers*perWriter || items[0].Successes != writers*((perWriter+1)/2) {
		t.Errorf("patterns: %+v, %v", items, err)
	}
}

// TestCrashAfterWriteKeepsData kills a process with SIGKILL right after
// CreateLearning returned, before any Close or checkpoint, and checks that
// the learning is there on the next Open: WAL with synchronous=NORMAL
// survives a process crash.
func TestCrashAfterWriteKeepsData(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the crash child")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "written "); ok {
			ids = append(ids, id)
		}
		if sc.Text() == "ready to die" {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(ids) == 0 {
		t.Fatal("the child wrote nothing")
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Logf("no WAL file left by the killed process (%v): the test proves less", err)
	}
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open after kill -9: %v", err)
	}
	defer db.Close()
	for _, id := range ids {
		if _, err := db.FindLearningByID(t.Context(), id); err != nil {
			t.Errorf("learning %s written before kill -9: %v", id, err)
		}
	}
	if perf, err := db.FindToolPerformance(t.Context(), "crash"); err != nil || perf.Calls != int64(len(ids)) {
		t.Errorf("tool calls before kill -9: %+v, %v; want %d", perf, err, len(ids))
	}
}

const crashChildEnv = "AGENTS_MCP_SQLITE_CRASH_CHILD"

// TestCrashChild is the process TestCrashAfterWriteKeepsData kills: it
// writes, reports, and waits to be killed without closing the store.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("run by TestCrashAfterWriteKeepsData")
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		l := &agentsmcp.Learning{Query: fmt.Sprint("before the crash ", i), Outcome: agentsmcp.OutcomeSuccess}
		if err := db.CreateLearning(ctx, l); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "crash", Duration: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		fmt.Println("written", l.ID)
	}
	fmt.Println("ready to die")
	time.Sleep(time.Minute) // killed long before
	t.Fatal("not killed")
}

// TestQueryPlans checks with EXPLAIN QUERY PLAN that every query reads
// through an index: the filtered list queries use the index of their
// filter and return rows in index order, so that no page sorts or scans
// the whole table. Only a text search, whose matches come from FTS5 in
// rowid order, sorts them.
func TestQueryPlans(t *testing.T) {
	db := openTest(t)
	c := cursor{n: 1, id: agentsmcp.NewID("xx")}
	since, until := time.Unix(100, 0), time.Unix(200, 0)
	type plan struct {
		name   string
		sql    string
		args   []any
		want   []string // substrings of the plan
		sorted bool     // a temp B-tree sort is expected
	}
	var plans []plan
	list := func(name string, q *listQuery, ok bool, err error, sorted bool, want ...string) {
		t.Helper()
		if err != nil || !ok {
			t.Fatalf("%s: %v, %v", name, ok, err)
		}
		s, args := q.sql(21)
		plans = append(plans, plan{name, s, args, want, sorted})
	}
	ic := encodeCursor(insightCursor, c)
	lc := encodeCursor(learningCursor, c)
	pc := encodeCursor(patternCursor, c)
	for _, cur := range []string{"", "cursor"} {
		ins := func(f agentsmcp.InsightFilter) agentsmcp.InsightFilter {
			if cur != "" {
				f.Cursor = ic
			}
			return f
		}
		lrn := func(f agentsmcp.LearningFilter) agentsmcp.LearningFilter {
			if cur != "" {
				f.Cursor = lc
			}
			return f
		}
		pat := func(f agentsmcp.PatternFilter) agentsmcp.PatternFilter {
			if cur != "" {
				f.Cursor = pc
			}
			return f
		}
		keyed := func(s string) string { // the cursor narrows the index range
			if cur != "" {
				return s + " AND (created_at,"
			}
			return s
		}
		q, ok, err := insightQuery(ins(agentsmcp.InsightFilter{}))
		list("insights "+cur, q, ok, err, false, "USING INDEX insights_created")
		q, ok, err = insightQuery(ins(agentsmcp.InsightFilter{Type: agentsmcp.InsightPitfall}))
		list("insights type "+cur, q, ok, err, false, keyed("SEARCH i USING INDEX insights_type_created (type=?"))
		q, ok, err = insightQuery(ins(agentsmcp.InsightFilter{AppliesTo: "x", Type: agentsmcp.InsightPitfall}))
		list("insights appliesTo "+cur, q, ok, err, false, keyed("SEARCH a USING PRIMARY KEY (value=?"), "SEARCH i USING INTEGER PRIMARY KEY")
		q, ok, err = insightQuery(ins(agentsmcp.InsightFilter{Text: "x"}))
		list("insights text "+cur, q, ok, err, true, "insights_fts VIRTUAL TABLE INDEX 0:M", "SEARCH i USING INTEGER PRIMARY KEY")
		q, ok, err = insightQuery(ins(agentsmcp.InsightFilter{Text: "x", Type: agentsmcp.InsightPitfall}))
		list("insights type text "+cur, q, ok, err, false, "insights_fts VIRTUAL TABLE INDEX 0:M", "insights_type_created (type=?")

		lq, ok, err := learningQuery(lrn(agentsmcp.LearningFilter{}))
		list("learnings "+cur, lq, ok, err, false, "USING INDEX learnings_created")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Tool: "t", Outcome: agentsmcp.OutcomeSuccess}))
		list("learnings tool "+cur, lq, ok, err, false, keyed("SEARCH d USING PRIMARY KEY (tool=?"), "SEARCH l USING INTEGER PRIMARY KEY")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Source: "u", Since: since}))
		list("learnings upstream "+cur, lq, ok, err, false, "SEARCH d USING PRIMARY KEY (upstream=? AND created_at>?")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Tool: "t", Source: "u"}))
		list("learnings tool upstream "+cur, lq, ok, err, false, "SEARCH d USING PRIMARY KEY (tool=?", "SEARCH u EXISTS USING PRIMARY KEY (upstream=? AND created_at=? AND learning_id=?)")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeFailure}))
		list("learnings outcome "+cur, lq, ok, err, false, keyed("SEARCH l USING INDEX learnings_outcome_created (outcome=?"))
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeFailure, Since: since, Until: until}))
		list("learnings outcome range "+cur, lq, ok, err, false, "learnings_outcome_created (outcome=? AND created_at>? AND created_at<?)")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Since: since, Until: until}))
		list("learnings range "+cur, lq, ok, err, false, "SEARCH l USING INDEX learnings_created (created_at>? AND created_at<?)")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Text: "x"}))
		list("learnings text "+cur, lq, ok, err, true, "learnings_fts VIRTUAL TABLE INDEX 0:M", "SEARCH l USING INTEGER PRIMARY KEY")
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Text: "x", Tool: "t"}))
		list("learnings tool text "+cur, lq, ok, err, false, "learnings_fts VIRTUAL TABLE INDEX 0:M", "SEARCH d USING PRIMARY KEY (tool=?")

		pq, ok, err := patternQuery(pat(agentsmcp.PatternFilter{}))
		list("patterns "+cur, pq, ok, err, false, "USING INDEX patterns_rank")

		// Confined to one principal (memory visibility).
		q, ok, err = insightQuery(ins(agentsmcp.InsightFilter{Principal: "p"}))
		list("insights principal "+cur, q, ok, err, false, keyed("SEARCH i USING INDEX insights_principal_created (principal=?"))
		lq, ok, err = learningQuery(lrn(agentsmcp.LearningFilter{Principal: "p"}))
		list("learnings principal "+cur, lq, ok, err, false, keyed("SEARCH l USING INDEX learnings_principal_created (principal=?"))
		pq, ok, err = patternQuery(pat(agentsmcp.PatternFilter{Principal: "p"}))
		list("patterns principal "+cur, pq, ok, err, false, "SEARCH p USING INDEX patterns_principal_rank (principal=?")
		pq, ok, err = patternQuery(pat(agentsmcp.PatternFilter{Text: "x"}))
		list("patterns text "+cur, pq, ok, err, true, "patterns_fts VIRTUAL TABLE INDEX 0:M")
	}
	plans = append(plans,
		plan{"insight by id", findInsightByIDSQL, []any{"x"}, []string{"SEARCH i USING INDEX sqlite_autoindex_insights_1 (id=?)"}, false},
		plan{"learning by id", findLearningByIDSQL, []any{"x"}, []string{"SEARCH l USING INDEX sqlite_autoindex_learnings_1 (id=?)"}, false},
		plan{"pattern by id", findPatternByIDSQL, []any{"x"}, []string{"SEARCH p USING INDEX sqlite_autoindex_patterns_1 (id=?)"}, false},
		plan{"delete insight", "DELETE FROM insights WHERE id = ?", []any{"x"}, []string{"SEARCH insights USING INDEX sqlite_autoindex_insights_1 (id=?)"}, false},
		plan{"tool performance list", selectToolPerformanceSQL + " ORDER BY calls DESC, tool", nil, []string{"USING INDEX tool_performance_calls"}, false},
		plan{"tool performance one", selectToolPerformanceSQL + " WHERE tool = ? ORDER BY calls DESC, tool", []any{"x"}, []string{"SEARCH tool_performance USING PRIMARY KEY (tool=?)"}, false},
		plan{"tool latency one", selectToolLatencySQL + " WHERE tool = ?", []any{"x"}, []string{"SEARCH tool_latency USING PRIMARY KEY (tool=?)"}, false},
		plan{"tool errors one", selectToolErrorsSQL + " WHERE tool = ? ORDER BY tool, count DESC, last_at DESC, class", []any{"x"}, []string{"tool_errors_rank (tool=?)"}, false},
		plan{"tool errors all", selectToolErrorsSQL + " ORDER BY tool, count DESC, last_at DESC, class", nil, []string{"tool_errors_rank"}, false},
		plan{"trim errors", trimErrorsSQL, []any{"x", 3}, []string{"tool_errors_rank (tool=?)"}, false},
	)
	// The agents' data: thoughts, plans, tasks.
	for _, cur := range []bool{false, true} {
		pick := func(kind string) string {
			if cur {
				return encodeCursor(kind, c)
			}
			return ""
		}
		keyed := func(s string) string {
			if cur {
				return s + " AND (created_at,"
			}
			return s
		}
		name := fmt.Sprint(" cursor=", cur)
		tq, ok, err := thoughtQuery(agentsmcp.ThoughtFilter{Cursor: pick(thoughtCursor)})
		list("thoughts"+name, tq, ok, err, false, "USING INDEX thoughts_created")
		tq, ok, err = thoughtQuery(agentsmcp.ThoughtFilter{Text: "x", Cursor: pick(thoughtCursor)})
		list("thoughts text"+name, tq, ok, err, true, "thoughts_fts VIRTUAL TABLE INDEX 0:M", "SEARCH t USING INTEGER PRIMARY KEY")
		pq, err := planQuery(agentsmcp.PlanFilter{Cursor: pick(planCursor)})
		list("plans"+name, pq, true, err, false, "USING INDEX plans_created")
		pq, err = planQuery(agentsmcp.PlanFilter{ThoughtID: "x", Cursor: pick(planCursor)})
		list("plans thought"+name, pq, true, err, false, keyed("SEARCH p USING INDEX plans_thought_created (thought_id=?"))
		kq, err := taskQuery(agentsmcp.TaskFilter{Cursor: pick(taskCursor)})
		list("tasks"+name, kq, true, err, false, "USING INDEX tasks_created")
		kq, err = taskQuery(agentsmcp.TaskFilter{Status: agentsmcp.TaskRunning, Cursor: pick(taskCursor)})
		list("tasks status"+name, kq, true, err, false, keyed("SEARCH t USING INDEX tasks_status_created (status=?"))
		kq, err = taskQuery(agentsmcp.TaskFilter{PlanID: "x", Cursor: pick(taskCursor)})
		list("tasks plan"+name, kq, true, err, false, keyed("SEARCH t USING INDEX tasks_plan_created (plan_id=?"))
		kq, err = taskQuery(agentsmcp.TaskFilter{PlanID: "x", Status: agentsmcp.TaskRunning, Cursor: pick(taskCursor)})
		list("tasks plan status"+name, kq, true, err, false, keyed("SEARCH t USING INDEX tasks_plan_created (plan_id=?"))
	}
	plans = append(plans,
		plan{"thought by id", findThoughtByIDSQL, []any{"x"}, []string{"SEARCH t USING INDEX sqlite_autoindex_thoughts_1 (id=?)"}, false},
		plan{"plan by id", findPlanByIDSQL, []any{"x"}, []string{"SEARCH p USING INDEX sqlite_autoindex_plans_1 (id=?)"}, false},
		plan{"task by id", findTaskByIDSQL, []any{"x"}, []string{"SEARCH t USING INDEX sqlite_autoindex_tasks_1 (id=?)"}, false},
		plan{"update task", updateTaskSQL, make([]any, strings.Count(updateTaskSQL, "?")), []string{"SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 (id=?)"}, false},
		plan{"update task indexed", updateTaskIndexedSQL, make([]any, strings.Count(updateTaskIndexedSQL, "?")), []string{"SEARCH tasks USING INTEGER PRIMARY KEY (rowid=?)"}, false},
		plan{"insert task events", insertTaskEventsSQL, []any{1, "[]"}, []string{"SEARCH task_events USING PRIMARY KEY (task_pk=?)"}, false},
		plan{"delete task steps", deleteTaskStepsFromSQL, []any{1, 0}, []string{"SEARCH task_steps USING PRIMARY KEY (task_pk=? AND idx>?)"}, false},
		plan{"delete task events", deleteTaskEventsSQL, []any{1}, []string{"SEARCH task_events USING PRIMARY KEY (task_pk=?)"}, false},
		plan{"acquire task lease", acquireTaskLeaseSQL, make([]any, 5), []string{"SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 (id=?)"}, false},
		plan{"release task lease", releaseTaskLeaseSQL, make([]any, 2), []string{"SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 (id=?)"}, false},
		plan{"task exists", taskExistsSQL, []any{"x"}, []string{"SEARCH tasks USING COVERING INDEX sqlite_autoindex_tasks_1 (id=?)"}, false},
		plan{"tasks to resume", findTasksToResumeSQL, []any{1, 20}, []string{"SCAN t USING INDEX tasks_resume"}, false},
	)
	// A full scan of a table shows as "SCAN t" with no index after it.
	tableScan := regexp.MustCompile(`^SCAN \w+$`)
	for _, p := range plans {
		rows, err := db.writer.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+p.sql, p.args...)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
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
		got := strings.Join(details, "\n")
		for _, w := range p.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: plan lacks %q:\n%s\n%s", p.name, w, p.sql, got)
			}
		}
		for _, d := range details {
			if tableScan.MatchString(d) {
				t.Errorf("%s: full table scan %q:\n%s", p.name, d, got)
			}
		}
		// A task's step states and events are put in order per task
		// (taskColumnsOf): a sort of at most MaxPlanSteps or
		// MaxTaskHistory rows read by primary key, not a sort of the page.
		page := strings.ReplaceAll(got, "USE TEMP B-TREE FOR group_concat(ORDER BY)", "")
		if sorted := strings.Contains(page, "TEMP B-TREE"); sorted != p.sorted {
			t.Errorf("%s: sorts in a temp B-tree = %v, want %v:\n%s", p.name, sorted, p.sorted, got)
		}
	}
}

func TestFTSQuery(t *testing.T) {
	for _, tt := range []struct {
		text, want string
		ok         bool
	}{
		{"alpha", `"alpha"`, true},
		{"  alpha   beta ", `"alpha" AND "beta"`, true},
		{`"quoted`, `"""quoted"`, true},
		{"(x OR y)", `"(x" AND "OR" AND "y)"`, true},
		{"a*b NEAR(c)", `"a*b" AND "NEAR(c)"`, true},
		{"col:value", `"col:value"`, true},
		{".* %_ \\ * \"", "", false},
		{"", "", false},
		{"   ", "", false},
		{"ok .*", `"ok"`, true},
		{"café 東京", `"café" AND "東京"`, true},
	} {
		got, ok := ftsQuery(tt.text)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ftsQuery(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCursor(t *testing.T) {
	c := cursor{n: 1764000000123, id: agentsmcp.NewID(agentsmcp.InsightIDPrefix)}
	s := encodeCursor(insightCursor, c)
	if strings.ContainsAny(s, "+/=") {
		t.Errorf("cursor %q is not URL-safe", s)
	}
	got, err := decodeCursor(insightCursor, s)
	if err != nil || got != c {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", c, got, err)
	}
	neg := cursor{n: -5, id: c.id}
	if got, err := decodeCursor(patternCursor, encodeCursor(patternCursor, neg)); err != nil || got != neg {
		t.Errorf("negative key: %+v, %v", got, err)
	}
	for _, bad := range []string{
		encodeCursor(learningCursor, c), // another list's cursor
		s + "x", s[:len(s)-1], "", "!!!!",
		b64("i:12:not-an-id"), b64("i:x:" + c.id), b64("i:12"), b64("i::" + c.id), b64("i:1:" + c.id + ":extra"),
	} {
		if _, err := decodeCursor(insightCursor, bad); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("decodeCursor(%q) = %v, want EINVALID", bad, err)
		}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestLatencyBucket(t *testing.T) {
	if got := toolperf.LatencyBucket(agentsmcp.LatencyBucketBounds[0]); got != 0 {
		t.Errorf("toolperf.LatencyBucket(first bound) = %d", got)
	}
	if got := toolperf.LatencyBucket(time.Hour); got != len(agentsmcp.LatencyBucketBounds) {
		t.Errorf("toolperf.LatencyBucket(1h) = %d", got)
	}
}

func TestContextCancelled(t *testing.T) {
	db := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := db.CreateInsight(ctx, &agentsmcp.Insight{Text: "x", Type: agentsmcp.InsightObservation})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("CreateInsight with a cancelled context: %v", err)
	}
	if _, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("FindInsights with a cancelled context: %v", err)
	}
	// The store still works.
	if err := db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "x", Type: agentsmcp.InsightObservation}); err != nil {
		t.Errorf("CreateInsight after a cancelled call: %v", err)
	}
}

// TestMemoryBeforePrincipals: rows stored before migration 0006 gave
// memory a principal belong to the anonymous principal afterwards, and a
// pattern keeps its id and counters.
func TestMemoryBeforePrincipals(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	old, err := sql.Open("sqlite", dsn(path, url.Values{"_pragma": {"foreign_keys(1)"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const before = "0007_memory_principal.sql"
	for _, m := range migrations {
		if m.name == before {
			break
		}
		if err := apply(ctx, old, m); err != nil {
			t.Fatal(err)
		}
	}
	insID, lrnID := agentsmcp.NewID(agentsmcp.InsightIDPrefix), agentsmcp.NewID(agentsmcp.LearningIDPrefix)
	patID := storedform.PatternID("", "rotate credentials", []string{"vault__rotate"})
	for _, stmt := range []string{
		`INSERT INTO insights (id, text, type, applies_to, confidence, evidence, source, created_at)
			VALUES ('` + insID + `', 'old insight', 'observation', '[]', 0.5, '[]', 'mcp', 1000)`,
		`INSERT INTO learnings (id, task_id, query, goal, steps, tools, upstreams, outcome, duration_ns, errors, retries, created_at)
			VALUES ('` + lrnID + `', '', 'old learning', '', '[]', '[]', '[]', 'success', 0, '[]', 0, 1000)`,
		`INSERT INTO patterns (id, goal, steps, uses, successes, last_used)
			VALUES ('` + patID + `', 'rotate credentials', '["vault__rotate"]', 3, 2, 1000)`,
	} {
		if _, err := old.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	anon := agentsmcp.AnonymousPrincipal
	if ins, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{Principal: anon}); err != nil || len(ins) != 1 || ins[0].ID != insID || ins[0].Principal != anon {
		t.Errorf("the anonymous principal's insights = %v, %v; want the old one", ins, err)
	}
	if ins, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{Principal: "key:aaaaaaaaaaaa"}); err != nil || len(ins) != 0 {
		t.Errorf("another principal's insights = %v, %v; want none", ins, err)
	}
	if ls, _, err := db.FindLearnings(ctx, agentsmcp.LearningFilter{Principal: anon}); err != nil || len(ls) != 1 || ls[0].ID != lrnID || ls[0].Principal != anon {
		t.Errorf("the anonymous principal's learnings = %v, %v; want the old one", ls, err)
	}
	p, err := db.RecordPatternUse(ctx, "", "rotate credentials", []string{"vault__rotate"}, true, time.Time{})
	if err != nil || p.ID != patID || p.Uses != 4 || p.Successes != 3 || p.Principal != anon {
		t.Errorf("a use of the old pattern = %+v, %v; want id %s, 4 uses, 3 successes, anonymous", p, err, patID)
	}
}

// TestTasksStoredWholeBeforeStepTables checks migration 0013: a task
// stored whole (steps and history as JSON arrays in its row) reads back the
// same afterwards, and takes per-step writes.
func TestTasksStoredWholeBeforeStepTables(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agents-mcp.db")
	old, err := sql.Open("sqlite", dsn(path, url.Values{"_pragma": {"foreign_keys(1)"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const before = "0013_task_steps.sql"
	for _, m := range migrations {
		if m.name == before {
			break
		}
		if err := apply(ctx, old, m); err != nil {
			t.Fatal(err)
		}
	}
	id := agentsmcp.NewID(agentsmcp.TaskIDPrefix)
	steps := `[{"stepId":"a","status":"succeeded","attempts":1,"output":"{\"v\": 1}","startedAt":1000,"endedAt":2000},` +
		`{"stepId":"b","status":"running","attempts":2,"asks":1,"startedAt":3000}]`
	history := `[{"at":1000,"type":"step_started","stepId":"a"},{"at":2000,"type":"step_succeeded","stepId":"a","message":"1 attempt(s)"}]`
	if _, err := old.ExecContext(ctx, `INSERT INTO tasks (id, plan_id, principal, principal_tools, request, status, steps, inputs, history, error, error_code,
		lease_owner, lease_expires, version, created_at, updated_at, ended_at)
		VALUES (?, '', '', '', 'old task', 'running', ?, '', ?, '', '', '', 0, 7, 500, 3000, 0)`, id, steps, history); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	got, err := db.FindTaskByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []agentsmcp.StepState{
		{StepID: "a", Status: agentsmcp.StepSucceeded, Attempts: 1, Output: json.RawMessage(`{"v": 1}`), StartedAt: fromMillis(1000), EndedAt: fromMillis(2000)},
		{StepID: "b", Status: agentsmcp.StepRunning, Attempts: 2, Asks: 1, StartedAt: fromMillis(3000)},
	}
	gotJSON, _ := json.Marshal(got.Steps)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("steps after the migration:\n%s\nwant\n%s", gotJSON, wantJSON)
	}
	if len(got.History) != 2 || got.History[1].Message != "1 attempt(s)" || !got.History[1].At.Equal(fromMillis(2000)) || got.Version != 7 {
		t.Errorf("history after the migration: %+v, version %d", got.History, got.Version)
	}
	got.Steps[1].Status, got.Steps[1].EndedAt = agentsmcp.StepSucceeded, fromMillis(4000)
	storedform.AddEvent(got, agentsmcp.TaskEvent{At: fromMillis(4000), Type: "step_succeeded", StepID: "b"})
	if err := db.UpdateTaskSteps(ctx, got, agentsmcp.TaskChange{Steps: []int{1}, Events: 1}); err != nil {
		t.Fatal(err)
	}
	again, err := db.FindTaskByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps[0].Status != agentsmcp.StepSucceeded || again.Steps[1].Status != agentsmcp.StepSucceeded || len(again.History) != 3 || again.History[2].StepID != "b" {
		t.Errorf("after a per-step write: %+v, %+v", again.Steps, again.History)
	}
}

// Rows written before error classes were normalised hold error texts,
// which quote a caller's request and the credential it carried: readers
// get their classes, never the text.
func TestLegacyErrorTextsAreReadAsClasses(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	if err := db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "api__get", Duration: time.Millisecond, Error: "timeout"}); err != nil {
		t.Fatal(err)
	}
	const legacy = `GET /items/{id}: Get "http://127.0.0.1:1/items/alice-note?k=Zq7secret": dial tcp: connect: connection refused`
	if _, err := db.writer.ExecContext(ctx, `INSERT INTO tool_errors (tool, class, count, last_at) VALUES ('api__get', ?, 3, 1)`, legacy); err != nil {
		t.Fatal(err)
	}
	if _, err := db.writer.ExecContext(ctx, `UPDATE tool_performance SET last_error_class = ? WHERE tool = 'api__get'`, legacy); err != nil {
		t.Fatal(err)
	}
	p, err := db.FindToolPerformance(ctx, "api__get")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{toolperf.ErrorClassConnRefused: 3, toolperf.ErrorClassTimeout: 1}
	if fmt.Sprint(p.CommonErrors) != fmt.Sprint(want) || p.LastErrorClass != toolperf.ErrorClassConnRefused {
		t.Errorf("common errors %v, last %q; want %v, last %q", p.CommonErrors, p.LastErrorClass, want, toolperf.ErrorClassConnRefused)
	}
}
