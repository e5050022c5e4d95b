package pinecone

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/pineconetest"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
	"github.com/agents-mcp/agents-mcp/memory/vectortest"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc/codes"
)

// The tests in this file run go-pinecone's own client, both planes, against
// internal/pineconetest: Pinecone's published gRPC protocol and its
// published control-plane document, on loopback.

const wireKey = "pcsk_wire_SECRET_0123456789"

// startPinecone starts a test Pinecone and points go-pinecone's control
// plane at it. Its cleanup fails the test if any control-plane exchange
// left Pinecone's OpenAPI document.
func startPinecone(t *testing.T, opts pineconetest.Options) *pineconetest.Server {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = wireKey
	}
	srv, err := pineconetest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		for _, e := range srv.ProtocolErrors() {
			t.Errorf("control plane: %s", e)
		}
	})
	t.Setenv("PINECONE_CONTROLLER_HOST", srv.ControlURL())
	return srv
}

// openWire opens an Index on srv through describe-index, as serve does
// with PINECONE_INDEX, with quick retries.
func openWire(t *testing.T, srv *pineconetest.Server, dims int, key string) (*Index, error) {
	t.Helper()
	x, err := Open(context.Background(), Config{APIKey: key, Index: srv.IndexName(), Dimensions: dims, NamespacePrefix: "t-", Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	x.backoff = time.Millisecond
	t.Cleanup(func() { x.Close() })
	return x, nil
}

func TestWireBehaviour(t *testing.T) {
	vectortest.Run(t, func(t *testing.T) agentsmcp.VectorIndex {
		srv := startPinecone(t, pineconetest.Options{Dimension: vectortest.Dims})
		x, err := openWire(t, srv, vectortest.Dims, wireKey)
		if err != nil {
			t.Fatal(err)
		}
		return x
	})
}

// TestWireRequests looks at what reached the server through go-pinecone:
// the prefixed namespace, the metadata as stored, the filter as Pinecone
// evaluates it, batches within Pinecone's limits.
func TestWireRequests(t *testing.T) {
	srv := startPinecone(t, pineconetest.Options{Dimension: 4})
	x, err := openWire(t, srv, 4, wireKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	vs := make([]agentsmcp.Vector, 250)
	for i := range vs {
		v := []float32{1, float32(i), 0, 0}
		vs[i] = agentsmcp.Vector{ID: fmt.Sprintf("l%03d", i), Values: v, Metadata: map[string]string{"kind": "learning", "empty": ""}}
	}
	if err := x.Upsert(ctx, "learnings", vs); err != nil {
		t.Fatal(err)
	}
	if n := srv.Calls("Upsert"); n != 3 {
		t.Errorf("%d upsert requests for 250 vectors, want 3 (batches of 100)", n)
	}

	// Read back with go-pinecone directly: namespace and metadata as stored.
	client, err := pc.NewClient(pc.NewClientParams{ApiKey: wireKey})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := client.Index(pc.NewIndexConnParams{Host: srv.DataHost(), Namespace: "t-learnings"})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	got, err := raw.FetchVectors(ctx, []string{"l007"})
	if err != nil {
		t.Fatal(err)
	}
	v := got.Vectors["l007"]
	if v == nil || v.Metadata == nil {
		t.Fatalf("fetch l007 from t-learnings: %+v", got)
	}
	if md := v.Metadata.AsMap(); len(md) != 1 || md["kind"] != "learning" {
		t.Errorf("stored metadata %v, want only kind=learning (empty values are not stored)", md)
	}
	stats, err := raw.DescribeIndexStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ns := stats.Namespaces["t-learnings"]; ns == nil || ns.VectorCount != 250 || stats.TotalVectorCount != 250 {
		t.Errorf("stats %+v, want 250 vectors in t-learnings", stats)
	}

	// The empty filter value asks for vectors without the key: all of them.
	ms, err := x.Query(ctx, "learnings", agentsmcp.VectorQuery{Values: []float32{1, 0, 0, 0}, TopK: 5, Filter: map[string]string{"empty": "", "kind": "learning"}})
	if err != nil || len(ms) != 5 {
		t.Fatalf("filtered query: %v, %v; want 5 matches", ms, err)
	}
	if ms[0].ID != "l000" {
		t.Errorf("best match %s, want l000", ms[0].ID)
	}
}

// TestWireRetriesTransientFailures: RESOURCE_EXHAUSTED (Pinecone's 429)
// and UNAVAILABLE are retried within a call; past the attempts the call is
// EUNAVAILABLE; INVALID_ARGUMENT and UNAUTHENTICATED are not retried.
func TestWireRetriesTransientFailures(t *testing.T) {
	srv := startPinecone(t, pineconetest.Options{Dimension: 2})
	x, err := openWire(t, srv, 2, wireKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	vec := []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0}}}

	srv.FailNext("Upsert", codes.ResourceExhausted, 1)
	srv.FailNext("Upsert", codes.Unavailable, 1)
	if err := x.Upsert(ctx, "tools", vec); err != nil {
		t.Fatalf("two transient failures then success: %v", err)
	}
	if n := srv.Calls("Upsert"); n != 3 {
		t.Errorf("%d upsert attempts, want 3", n)
	}

	srv.FailNext("Query", codes.Unavailable, 3)
	_, err = x.Query(ctx, "tools", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 1})
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("three UNAVAILABLE: %v, want EUNAVAILABLE", err)
	}

	before := srv.Calls("Delete")
	srv.FailNext("Delete", codes.InvalidArgument, 1)
	if err := x.Delete(ctx, "tools", []string{"a"}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("INVALID_ARGUMENT: %v, want EINVALID", err)
	}
	if n := srv.Calls("Delete") - before; n != 1 {
		t.Errorf("INVALID_ARGUMENT was tried %d times, want once", n)
	}
	// The server's own refusal (not an injected one) comes back as EINVALID too:
	// a vector of the wrong size sent past the client's check.
	x.dims = 3
	if err := x.Upsert(ctx, "tools", []agentsmcp.Vector{{ID: "b", Values: []float32{1, 0, 0}}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("wrong size at the server: %v, want EINVALID naming the dimension", err)
	}
}

// TestWireOutboxLosesNothing runs the real outbox (SQLite) into Pinecone
// while the data plane refuses writes: entries stay queued through
// UNAVAILABLE and RESOURCE_EXHAUSTED, are retried with backoff, and every
// learning ends up in Pinecone. The API key appears in no log line.
func TestWireOutboxLosesNothing(t *testing.T) {
	srv := startPinecone(t, pineconetest.Options{Dimension: embed.HashDimensions})
	x, err := openWire(t, srv, embed.HashDimensions, wireKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs bytes.Buffer
	syncer, err := vectorsync.New(vectorsync.Config{
		Outbox: db, Index: x, Embedder: embed.Hash{},
		Sources:    []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 60 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"summarise the weekly sales report", "restart the staging database", "archive old invoices", "rotate the api credentials"}
	var learnings []*agentsmcp.Learning
	for _, q := range queries {
		l := &agentsmcp.Learning{Query: q, Outcome: agentsmcp.OutcomeSuccess}
		if err := db.CreateLearning(ctx, l); err != nil {
			t.Fatal(err)
		}
		learnings = append(learnings, l)
	}

	// Six refusals: two whole calls of three attempts each.
	srv.FailNext("Upsert", codes.Unavailable, 3)
	srv.FailNext("Upsert", codes.ResourceExhausted, 3)
	_, err = syncer.ProcessBatch(ctx)
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Fatalf("first batch with Pinecone down: %v, want EUNAVAILABLE", err)
	}
	if n, _, _ := db.OutboxBacklog(ctx); n != int64(len(queries)) {
		t.Fatalf("backlog %d after a failed batch, want all %d kept", n, len(queries))
	}
	testutil.Eventually(t, 10*time.Second, "the outbox drains into Pinecone", func() bool {
		_, _ = syncer.Drain(ctx)
		n, _, _ := db.OutboxBacklog(ctx)
		return n == 0
	})
	if n := srv.Calls("Upsert"); n < 7 {
		t.Errorf("%d upsert calls; want the 6 refused and at least one more", n)
	}
	for i, l := range learnings {
		v, _ := embed.Hash{}.Embed(ctx, []string{queries[i]})
		ms, err := x.Query(ctx, agentsmcp.NamespaceLearnings, agentsmcp.VectorQuery{Values: v[0], TopK: 1})
		if err != nil || len(ms) != 1 || ms[0].ID != l.ID {
			t.Errorf("learning %q: %+v, %v; want %s first", queries[i], ms, err, l.ID)
		}
	}
	if strings.Contains(logs.String(), wireKey) {
		t.Errorf("the API key is in the outbox's logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "unavailable") {
		t.Logf("outbox logs:\n%s", logs.String())
	}
}

// TestWireOpenChecksTheIndex: Open describes the index through the control
// plane (validated against Pinecone's document) and refuses a wrong
// dimension, a wrong metric, a sparse index, an unknown index and a
// refused key, without the key in any error or log line.
func TestWireOpenChecksTheIndex(t *testing.T) {
	var stdlog bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&stdlog) // go-pinecone logs through the standard logger
	t.Cleanup(func() { log.SetOutput(prev) })
	tests := []struct {
		name  string
		opts  pineconetest.Options
		key   string
		index string
		fail  int // control-plane status to inject
		code  string
		want  []string
	}{
		{"matches", pineconetest.Options{Dimension: 8}, wireKey, "", 0, "", nil},
		{"wrong dimension", pineconetest.Options{Dimension: 1536}, wireKey, "", 0, agentsmcp.EINVALID, []string{"1536", "8"}},
		{"wrong metric", pineconetest.Options{Dimension: 8, Metric: "dotproduct"}, wireKey, "", 0, agentsmcp.EINVALID, []string{"dotproduct", "cosine"}},
		{"sparse", pineconetest.Options{Dimension: 8, Metric: "dotproduct", VectorType: "sparse"}, wireKey, "", 0, agentsmcp.EINVALID, []string{"sparse"}},
		{"unknown index", pineconetest.Options{Dimension: 8}, wireKey, "other", 0, agentsmcp.ENOTFOUND, []string{"other"}},
		{"refused key", pineconetest.Options{Dimension: 8}, "pcsk_wrong_SECRET_key", "", 0, agentsmcp.EUNAUTHORIZED, nil},
		{"rate limited", pineconetest.Options{Dimension: 8}, wireKey, "", 429, agentsmcp.EUNAVAILABLE, nil},
		{"overloaded", pineconetest.Options{Dimension: 8}, wireKey, "", 503, agentsmcp.EUNAVAILABLE, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startPinecone(t, tt.opts)
			if tt.fail != 0 {
				srv.FailControlNext(tt.fail, 1)
			}
			index := tt.index
			if index == "" {
				index = srv.IndexName()
			}
			x, err := Open(context.Background(), Config{APIKey: tt.key, Index: index, Dimensions: 8, Timeout: 5 * time.Second})
			if got := agentsmcp.ErrorCode(err); got != tt.code {
				t.Fatalf("code %q, want %q (%v)", got, tt.code, err)
			}
			if srv.Calls("describe_index") != 1 {
				t.Errorf("%d describe-index requests, want 1", srv.Calls("describe_index"))
			}
			if err == nil {
				defer x.Close()
				if x.host != srv.DataHost() {
					t.Errorf("host %q, want the described %q", x.host, srv.DataHost())
				}
				// The described host is the data plane: a round trip works.
				if err := x.Upsert(context.Background(), "tools", []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0, 0, 0, 0, 0, 0, 0}}}); err != nil {
					t.Errorf("upsert on the described host: %v", err)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(agentsmcp.ErrorMessage(err), w) {
					t.Errorf("message %q lacks %q", agentsmcp.ErrorMessage(err), w)
				}
			}
			if strings.Contains(err.Error(), tt.key) || strings.Contains(fmt.Sprintf("%+v", err), tt.key) {
				t.Errorf("error holds the API key: %v", err)
			}
		})
	}
	if strings.Contains(stdlog.String(), wireKey) || strings.Contains(stdlog.String(), "pcsk_wrong") {
		t.Errorf("the API key is in go-pinecone's log output:\n%s", stdlog.String())
	}
}

// TestWireRefusedKey: a data plane that refuses the key is EUNAUTHORIZED,
// not retried, and the key is in no error.
func TestWireRefusedKey(t *testing.T) {
	srv := startPinecone(t, pineconetest.Options{Dimension: 2, APIKey: "pcsk_server_only"})
	x, err := Open(context.Background(), Config{APIKey: wireKey, Host: srv.DataHost(), Dimensions: 2, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, call := range []func() error{
		func() error {
			return x.Upsert(context.Background(), "tools", []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0}}})
		},
		func() error {
			_, err := x.Query(context.Background(), "tools", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 1})
			return err
		},
		func() error { return x.Delete(context.Background(), "tools", []string{"a"}) },
	} {
		err := call()
		if agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED {
			t.Errorf("refused key: %v, want EUNAUTHORIZED", err)
		}
		if err != nil && strings.Contains(fmt.Sprintf("%v %+v", err, err), wireKey) {
			t.Errorf("error holds the API key: %v", err)
		}
	}
	if n := srv.Calls("Upsert"); n != 1 {
		t.Errorf("a refused key was tried %d times, want once", n)
	}
}
