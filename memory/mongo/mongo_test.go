package mongo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/ferrettest"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/memory/storetest"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// The tests run against FerretDB (SQLite backend), a real MongoDB
// wire-protocol server, in its own process (internal/ferrettest): no
// MongoDB server can run here. One FerretDB serves the whole package; every
// test gets a fresh database.

var ferretURI string // of the package's FerretDB, set by TestMain

func TestMain(m *testing.M) {
	os.Exit(runWithFerretDB(m))
}

func runWithFerretDB(m *testing.M) int {
	defer ferrettest.Cleanup()
	f, err := ferrettest.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "start FerretDB:", err)
		return 1
	}
	defer f.Stop()
	ferretURI = f.URI
	return m.Run()
}

var dbSeq atomic.Int64

// openDB opens a fresh database on the package's FerretDB, dropped and
// closed when t ends.
func openDB(t testing.TB) *DB {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	db, err := Open(t.Context(), ferretURI, name)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := db.db.Drop(ctx); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		if err := db.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Services {
		db := openDB(t)
		return storetest.Services{Insights: db, Learnings: db, ToolPerformance: db, Patterns: db, Outbox: db,
			Thoughts: db, Plans: db, Tasks: db, TaskCounts: db, Audit: db, Upstreams: db, VirtualServers: db,
			Credentials: db, RawCredentials: db.rawCredentials, Usage: db, InsightPruner: db, CallCounters: db}
	})
}

func TestOpenUnreachable(t *testing.T) {
	tests := []struct {
		name string
		uri  string
		opts []Option
	}{
		{"timeout in the URI", "mongodb://agent:secret@127.0.0.1:1/?serverSelectionTimeoutMS=500", nil},
		{"timeout as an option", "mongodb://agent:s3cr%40t-pw@127.0.0.1:1,127.0.0.1:2/agents", []Option{WithTimeout(500 * time.Millisecond)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			db, err := Open(t.Context(), tt.uri, "", tt.opts...)
			if err == nil {
				db.Close(t.Context())
				t.Fatal("Open of an unreachable server succeeded")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Open took %v to fail; want about the 500 ms server-selection timeout", d)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "mongodb: cannot reach 127.0.0.1:1") {
				t.Errorf("error %q does not say which hosts are unreachable", msg)
			}
			for _, secret := range []string{"secret", "s3cr", "agent:"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q leaks the credentials (%q)", msg, secret)
				}
			}
		})
	}
}

func TestOpenInvalidURI(t *testing.T) {
	for _, uri := range []string{"", "http://agent:secret@example.com/", "mongodb://agent:secret@/", "mongodb://agent:secret@host/?connectTimeoutMS=x"} {
		db, err := Open(t.Context(), uri, "")
		if err == nil {
			db.Close(t.Context())
			t.Fatalf("Open(%q) succeeded", uri)
		}
		if strings.Contains(err.Error(), "secret") || !strings.HasPrefix(err.Error(), "mongodb: ") {
			t.Errorf("Open(%q): error %q: want a mongodb: error without the password", uri, err)
		}
	}
	if _, err := Open(t.Context(), ferretURI, "bad.name"); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("Open with database %q: %v, want EINVALID", "bad.name", err)
	}
}

func TestOpenIsIdempotent(t *testing.T) {
	first := openDB(t)
	// A second Open of the same database, as a second replica or a restart
	// would do: nothing to create, nothing to migrate, no error.
	second, err := Open(t.Context(), ferretURI, first.Database())
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer second.Close(context.Background())
	if err := second.ensureIndexes(t.Context()); err != nil {
		t.Fatalf("ensureIndexes again: %v", err)
	}
	want := map[string][]string{}
	for _, ix := range indexes {
		want[ix.collection] = append(want[ix.collection], ix.name)
	}
	for col, names := range want {
		specs, err := second.db.Collection(col).Indexes().ListSpecifications(t.Context())
		if err != nil {
			t.Fatalf("list indexes of %s: %v", col, err)
		}
		var got []string
		for _, s := range specs {
			if s.Name != "_id_" {
				got = append(got, s.Name)
			}
		}
		slices.Sort(got)
		slices.Sort(names)
		if !slices.Equal(got, names) {
			t.Errorf("indexes of %s = %v, want %v", col, got, names)
		}
	}
	if v, err := second.schemaVersion(t.Context()); err != nil || v != SchemaVersion {
		t.Errorf("schema version %d, %v; want %d", v, err, SchemaVersion)
	}
}

func TestOpenConcurrently(t *testing.T) {
	name := fmt.Sprintf("t%d_concurrent", os.Getpid())
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := Open(t.Context(), ferretURI, name)
			if err == nil {
				err = db.Close(context.Background())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	db, err := Open(t.Context(), ferretURI, name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	defer db.db.Drop(context.Background())
	if v, err := db.schemaVersion(t.Context()); err != nil || v != SchemaVersion {
		t.Errorf("schema version %d, %v; want %d", v, err, SchemaVersion)
	}
}

func TestMigrationsRunForwardOnce(t *testing.T) {
	if last := migrations[len(migrations)-1].version; last != SchemaVersion {
		t.Fatalf("the last migration is version %d, SchemaVersion is %d", last, SchemaVersion)
	}
	for i, m := range migrations {
		if m.version != i+1 {
			t.Fatalf("migration %d has version %d; versions must be 1, 2, 3…", i, m.version)
		}
	}
	db := openDB(t)
	var runs atomic.Int64
	next := append(slices.Clone(migrations), migration{
		version: SchemaVersion + 1,
		name:    "test: count runs",
		up: func(ctx context.Context, d *mongo.Database) error {
			runs.Add(1)
			_, err := d.Collection("migration_marks").InsertOne(ctx, bson.D{{Key: "n", Value: runs.Load()}})
			return err
		},
	})
	for range 2 {
		if err := db.migrateWith(t.Context(), next); err != nil {
			t.Fatalf("migrate to %d: %v", SchemaVersion+1, err)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("the new migration ran %d times, want once", runs.Load())
	}
	if v, err := db.schemaVersion(t.Context()); err != nil || v != SchemaVersion+1 {
		t.Errorf("schema version %d, %v; want %d", v, err, SchemaVersion+1)
	}
	// This binary, which knows only SchemaVersion, now refuses the database.
	if err := db.migrate(t.Context()); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("migrate with the older list: %v, want ErrSchemaTooNew", err)
	}
}

func TestDetectsFerretDB(t *testing.T) {
	// The tests rely on it: without it, concurrent counts are lost on
	// FerretDB (see DB.lockKey).
	if db := openDB(t); !db.serialize {
		t.Error("the server was not recognised as FerretDB")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	db := openDB(t)
	_, err := db.db.Collection(colSchemaMeta).UpdateOne(t.Context(),
		bson.D{{Key: "_id", Value: "schema"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: SchemaVersion + 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Open(t.Context(), ferretURI, db.Database())
	if err == nil {
		again.Close(t.Context())
		t.Fatal("Open accepted a database with a newer schema")
	}
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), fmt.Sprint(SchemaVersion+1)) {
		t.Errorf("error %q: want ErrSchemaTooNew naming version %d", err, SchemaVersion+1)
	}
}

func TestPingAndUnavailable(t *testing.T) {
	f, err := ferrettest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	db, err := Open(t.Context(), f.URI, "ping", WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if err := db.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	f.Stop()
	if err := db.Ping(t.Context()); agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("Ping with the server gone: %v, want EUNAVAILABLE", err)
	}
	_, err = db.FindInsightByID(t.Context(), agentsmcp.NewID(agentsmcp.InsightIDPrefix))
	if code := agentsmcp.ErrorCode(err); code != agentsmcp.EUNAVAILABLE {
		t.Errorf("FindInsightByID with the server gone: %v (%s), want EUNAVAILABLE", err, code)
	}
	if msg := agentsmcp.ErrorMessage(err); strings.Contains(msg, "127.0.0.1") {
		t.Errorf("the caller's message %q shows internals", msg)
	}
}

func TestRecordToolCallConcurrent(t *testing.T) {
	db := openDB(t)
	const goroutines, perGoroutine = 8, 30
	classes := []string{"timeout", "http 503", "rate limited"}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				c := agentsmcp.ToolCall{Tool: "hot", Duration: time.Duration(i) * time.Millisecond, At: at(g)}
				if i%2 == 0 {
					c.Error = []string{"timeout", "$x: HTTP 503 Service Unavailable", "quota.exceeded"}[(g+i)%len(classes)]
				}
				if err := db.RecordToolCall(t.Context(), c); err != nil {
					t.Errorf("RecordToolCall: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	p, err := db.FindToolPerformance(t.Context(), "hot")
	if err != nil {
		t.Fatal(err)
	}
	const total = goroutines * perGoroutine
	if p.Calls != total || p.Errors != total/2 {
		t.Errorf("calls %d errors %d, want %d and %d", p.Calls, p.Errors, total, total/2)
	}
	var inClasses int64
	for class, n := range p.CommonErrors {
		if !slices.Contains(classes, class) {
			t.Errorf("unexpected class %q", class)
		}
		inClasses += n
	}
	if len(p.CommonErrors) != len(classes) || inClasses != total/2 {
		t.Errorf("common errors %v: want the %d classes holding all %d errors", p.CommonErrors, len(classes), total/2)
	}
	checkStoredClasses(t, db, "hot", len(classes))
}

// checkStoredClasses checks the raw document: n error classes, counted in
// errorClasses, and keys MongoDB accepts.
func checkStoredClasses(t *testing.T, db *DB, tool string, n int) {
	t.Helper()
	var raw struct {
		CommonErrors map[string]int64 `bson:"commonErrors"`
		ErrorClasses int64            `bson:"errorClasses"`
	}
	if err := db.db.Collection(colToolPerf).FindOne(t.Context(), bson.D{{Key: "_id", Value: tool}}).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.CommonErrors) != n || raw.ErrorClasses != int64(n) {
		t.Errorf("stored %d classes, errorClasses %d; want %d", len(raw.CommonErrors), raw.ErrorClasses, n)
	}
	for k := range raw.CommonErrors {
		if strings.ContainsAny(k, ".$") {
			t.Errorf("stored key %q holds '.' or '$'", k)
		}
	}
}

func TestErrorClassesAreBounded(t *testing.T) {
	db := openDB(t)
	// Rarer classes first: the store must still report the most frequent
	// ones, as long as they are among the first KeptErrorClasses seen.
	for c := range KeptErrorClasses + 3 {
		for range c%7 + 1 {
			err := db.RecordToolCall(t.Context(), agentsmcp.ToolCall{Tool: "flaky", Error: fmt.Sprintf("$x.y: HTTP %d\nstack trace…", 400+c)})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	p, err := db.FindToolPerformance(t.Context(), "flaky")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"http 406": 7, "http 413": 7, "http 405": 6, "http 412": 6, "http 419": 6}
	if fmt.Sprint(p.CommonErrors) != fmt.Sprint(want) {
		t.Errorf("common errors %v, want %v", p.CommonErrors, want)
	}
	checkStoredClasses(t, db, "flaky", KeptErrorClasses)
}

func TestEscapeKey(t *testing.T) {
	for _, s := range []string{"a.b", "$where", "100%", "%2E", "nul\x00byte", "plain"} {
		k := escapeKey(s)
		if strings.ContainsAny(k, ".$\x00") {
			t.Errorf("escapeKey(%q) = %q", s, k)
		}
		if back, err := unescapeKey(k); err != nil || back != s {
			t.Errorf("unescapeKey(escapeKey(%q)) = %q, %v", s, back, err)
		}
	}
}

func TestTextFoldsAccents(t *testing.T) {
	db := openDB(t)
	for i, text := range []string{"Café au lait", "CAFE NOIR", "cafeteria", "naïve résumé"} {
		in := agentsmcp.Insight{Text: text, Type: agentsmcp.InsightObservation, CreatedAt: at(i)}
		if err := db.CreateInsight(t.Context(), &in); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"cafe", []string{"CAFE NOIR", "Café au lait"}},
		{"CAFÉ", []string{"CAFE NOIR", "Café au lait"}},
		{"naive resume", []string{"naïve résumé"}},
		{"RÉSUMÉ", []string{"naïve résumé"}},
		{"caf", nil},
	} {
		items, _, err := db.FindInsights(t.Context(), agentsmcp.InsightFilter{Text: tt.text})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Text)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("text %q found %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestCursorOfAnotherKindIsInvalid(t *testing.T) {
	db := openDB(t)
	for i := range 3 {
		l := agentsmcp.Learning{Query: "q", Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(i)}
		if err := db.CreateLearning(t.Context(), &l); err != nil {
			t.Fatal(err)
		}
	}
	_, next, err := db.FindLearnings(t.Context(), agentsmcp.LearningFilter{Limit: 1})
	if err != nil || next == "" {
		t.Fatalf("FindLearnings: next %q, %v", next, err)
	}
	if _, _, err := db.FindInsights(t.Context(), agentsmcp.InsightFilter{Cursor: next}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("a learning cursor given to FindInsights: %v, want EINVALID", err)
	}
	if _, _, err := db.FindPatterns(t.Context(), agentsmcp.PatternFilter{Cursor: next}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("a learning cursor given to FindPatterns: %v, want EINVALID", err)
	}
}

// at is a fixed test time plus sec seconds.
func at(sec int) time.Time {
	return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second)
}

// TestMemoryBeforePrincipals: documents stored before schema 5 gave memory
// a principal belong to the anonymous principal afterwards, and a pattern
// keeps its id and counters.
func TestMemoryBeforePrincipals(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	patID := storedform.PatternID("", "rotate credentials", []string{"vault__rotate"})
	old := map[string]bson.D{
		colInsights: {{Key: "_id", Value: agentsmcp.NewID(agentsmcp.InsightIDPrefix)}, {Key: "text", Value: "old insight"},
			{Key: "type", Value: "observation"}, {Key: "appliesTo", Value: bson.A{}}, {Key: "confidence", Value: 0.5},
			{Key: "evidence", Value: bson.A{}}, {Key: "createdAt", Value: time.UnixMilli(1000)}, {Key: "words", Value: bson.A{"old", "insight"}}},
		colLearnings: {{Key: "_id", Value: agentsmcp.NewID(agentsmcp.LearningIDPrefix)}, {Key: "query", Value: "old learning"},
			{Key: "goal", Value: ""}, {Key: "steps", Value: bson.A{}}, {Key: "tools", Value: bson.A{}}, {Key: "upstreams", Value: bson.A{}},
			{Key: "outcome", Value: "success"}, {Key: "durationNs", Value: int64(0)}, {Key: "errors", Value: bson.A{}},
			{Key: "retries", Value: int64(0)}, {Key: "createdAt", Value: time.UnixMilli(1000)}, {Key: "words", Value: bson.A{"old", "learning"}}},
		colPatterns: {{Key: "_id", Value: patID}, {Key: "goal", Value: "rotate credentials"}, {Key: "steps", Value: bson.A{"vault__rotate"}},
			{Key: "uses", Value: int64(3)}, {Key: "successes", Value: int64(2)}, {Key: "lastUsed", Value: time.UnixMilli(1000)},
			{Key: "words", Value: bson.A{"rotate", "credentials"}}},
	}
	for col, doc := range old {
		if _, err := db.db.Collection(col).InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	// Back to version 4, as a binary from before principals left it.
	if err := db.setSchemaVersion(ctx, SchemaVersion, 4); err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := db.migrate(ctx); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	anon := agentsmcp.AnonymousPrincipal
	if ins, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{Principal: anon}); err != nil || len(ins) != 1 || ins[0].Principal != anon {
		t.Errorf("the anonymous principal's insights = %v, %v; want the old one", ins, err)
	}
	if ins, _, err := db.FindInsights(ctx, agentsmcp.InsightFilter{Principal: "key:aaaaaaaaaaaa"}); err != nil || len(ins) != 0 {
		t.Errorf("another principal's insights = %v, %v; want none", ins, err)
	}
	if ls, _, err := db.FindLearnings(ctx, agentsmcp.LearningFilter{Principal: anon}); err != nil || len(ls) != 1 || ls[0].Principal != anon {
		t.Errorf("the anonymous principal's learnings = %v, %v; want the old one", ls, err)
	}
	if ps, _, err := db.FindPatterns(ctx, agentsmcp.PatternFilter{Principal: anon}); err != nil || len(ps) != 1 || ps[0].ID != patID {
		t.Errorf("the anonymous principal's patterns = %v, %v; want the old one", ps, err)
	}
	p, err := db.RecordPatternUse(ctx, "", "rotate credentials", []string{"vault__rotate"}, true, time.Time{})
	if err != nil || p.ID != patID || p.Uses != 4 || p.Successes != 3 || p.Principal != anon {
		t.Errorf("a use of the old pattern = %+v, %v; want id %s, 4 uses, 3 successes, anonymous", p, err, patID)
	}
}

// TestUpstreamKindMigration checks schema 9 on an upstream definition
// written before kinds existed: it becomes an MCP upstream, listed as one
// and not as an HTTP source, and running the migration again changes
// nothing.
func TestUpstreamKindMigration(t *testing.T) {
	db := openDB(t)
	old := bson.D{{Key: "_id", Value: "files"}, {Key: "config", Value: `{"url":"https://files.example"}`},
		{Key: "revision", Value: "urev_old"}, {Key: "createdBy", Value: ""}, {Key: "createdAt", Value: time.Now().UTC()}}
	if _, err := db.db.Collection(colUpstreams).InsertOne(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := setMissingUpstreamKind(t.Context(), db.db); err != nil {
			t.Fatalf("setMissingUpstreamKind: %v", err)
		}
	}
	mcp, err := db.ListUpstreamDefinitions(t.Context(), agentsmcp.UpstreamKindMCP)
	if err != nil || len(mcp) != 1 || mcp[0].Name != "files" || mcp[0].Kind != agentsmcp.UpstreamKindMCP || mcp[0].Revision != "urev_old" {
		t.Fatalf("MCP definitions after the migration: %+v, %v; want files", mcp, err)
	}
	if http, err := db.ListUpstreamDefinitions(t.Context(), agentsmcp.UpstreamKindHTTP); err != nil || len(http) != 0 {
		t.Fatalf("HTTP definitions after the migration: %d, %v; want none", len(http), err)
	}
}

// Documents written before error classes were normalised hold error
// texts, which quote a caller's request and the credential it carried:
// readers get their classes, never the text.
func TestLegacyErrorTextsAreReadAsClasses(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	if err := db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "api__get", Duration: time.Millisecond, Error: "timeout"}); err != nil {
		t.Fatal(err)
	}
	const legacy = `GET /items/{id}: Get "http://127.0.0.1:1/items/alice-note?k=Zq7secret": dial tcp: connect: connection refused`
	if _, err := db.db.Collection(colToolPerf).UpdateOne(ctx, bson.D{{Key: "_id", Value: "api__get"}}, bson.D{{Key: "$set", Value: bson.D{
		{Key: "commonErrors." + escapeKey(legacy), Value: int64(3)}, {Key: "lastErrorClass", Value: legacy},
	}}}); err != nil {
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
