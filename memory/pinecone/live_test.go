package pinecone

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/view"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
)

// TestLive runs a round trip against a real index when PINECONE_API_KEY
// and PINECONE_HOST are set (PINECONE_INDEX too, optionally, to exercise
// the dimension check). It works in a random namespace and deletes it.
func TestLive(t *testing.T) {
	key, host := os.Getenv("PINECONE_API_KEY"), os.Getenv("PINECONE_HOST")
	if key == "" || host == "" {
		t.Skip("PINECONE_API_KEY/PINECONE_HOST not set: skipping live Pinecone tests (mapping is unit-tested)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The index's own dimension, so the test fits whatever index it is given.
	client, err := pc.NewClient(pc.NewClientParams{ApiKey: key})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := client.Index(pc.NewIndexConnParams{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	stats, err := probe.DescribeIndexStats(ctx)
	if err != nil {
		t.Fatalf("describe index stats: %v", view.Error(err, key))
	}
	if stats.Dimension == nil {
		t.Fatal("the index reports no dimension (a sparse index?)")
	}
	dims := int(*stats.Dimension)

	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "agents-mcp-test-" + hex.EncodeToString(b[:]) + "-"
	x, err := Open(ctx, Config{APIKey: key, Host: host, Index: os.Getenv("PINECONE_INDEX"), NamespacePrefix: prefix, Dimensions: dims})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		if err := probe.DeleteNamespace(cctx, prefix+"learnings"); err != nil && classify(err) != agentsmcp.ENOTFOUND {
			t.Logf("delete namespace %s: %v", prefix+"learnings", view.Error(err, key))
		}
	})

	vec := func(hot int) []float32 {
		v := make([]float32, dims)
		v[hot] = 1
		v[(hot+1)%dims] = 0.1
		return v
	}
	vs := []agentsmcp.Vector{
		{ID: "a", Values: vec(0), Metadata: map[string]string{"kind": "learning", "tool": "fs"}},
		{ID: "b", Values: vec(1), Metadata: map[string]string{"kind": "learning", "tool": "web"}},
		{ID: "c", Values: vec(2), Metadata: map[string]string{"kind": "insight"}},
	}
	if err := x.Upsert(ctx, "learnings", vs); err != nil {
		t.Fatal(err)
	}

	// Pinecone is eventually consistent: poll until the writes show.
	poll := func(q agentsmcp.VectorQuery, done func([]agentsmcp.VectorMatch) bool) []agentsmcp.VectorMatch {
		t.Helper()
		for {
			got, err := x.Query(ctx, "learnings", q)
			if err != nil {
				t.Fatal(err)
			}
			if done(got) {
				return got
			}
			select {
			case <-ctx.Done():
				t.Fatalf("gave up waiting; last result %+v", got)
			case <-time.After(time.Second):
			}
		}
	}
	all := poll(agentsmcp.VectorQuery{Values: vec(0), TopK: 10}, func(m []agentsmcp.VectorMatch) bool { return len(m) == 3 })
	if all[0].ID != "a" || all[0].Metadata["tool"] != "fs" || all[0].Score < 0.99 {
		t.Errorf("best match %+v, want a with score ≈1", all[0])
	}
	if !slices.IsSortedFunc(all, func(p, q agentsmcp.VectorMatch) int { return int(q.Score*1e6) - int(p.Score*1e6) }) {
		t.Errorf("not sorted by score: %+v", all)
	}
	filtered, err := x.Query(ctx, "learnings", agentsmcp.VectorQuery{Values: vec(0), TopK: 10, Filter: map[string]string{"kind": "learning", "tool": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered) != 1 || filtered[0].ID != "b" {
		t.Errorf("filtered %+v, want only b", filtered)
	}

	if err := x.Delete(ctx, "learnings", []string{"a", "b", "never-there"}); err != nil {
		t.Fatal(err)
	}
	left := poll(agentsmcp.VectorQuery{Values: vec(0), TopK: 10}, func(m []agentsmcp.VectorMatch) bool { return len(m) == 1 })
	if left[0].ID != "c" {
		t.Errorf("after delete %+v, want only c", left)
	}
	if err := x.Delete(ctx, "never-written", []string{"x"}); err != nil {
		t.Errorf("delete in a missing namespace: %v", err)
	}
}
