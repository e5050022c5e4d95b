package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
)

// TestMemoryIsReadyWhileTheIndexLoads: the memory layer starts without
// waiting for the saved vector index to be read. While it loads (held
// here), the store answers, /readyz's index check says "loading" without
// failing, a query of the index fails EUNAVAILABLE (so searches answer
// from the store's word filter), and a write waits for the load instead
// of being lost; once loaded, the write is in the index and the
// reconciliation runs.
func TestMemoryIsReadyWhileTheIndexLoads(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Embedder = "hash"
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(t.Context())
	m, err := openMemory(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	open := m.embedded.open
	m.embedded.open = func() (*vectors.Durable, vectors.OpenStatus, error) {
		<-release // a file that takes long to read
		return open()
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait(); _ = m.close(context.Background()) })
	started := make(chan struct{})
	go func() { m.run(ctx, &wg, logger); close(started) }()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("memory.run waited for the index to load")
	}
	if _, err := m.storeCheck(ctx); err != nil {
		t.Fatalf("store check while the index loads: %v", err)
	}
	detail, err := m.indexCheck(ctx)
	if err != nil || detail.(map[string]any)["state"] != "loading" {
		t.Errorf("index check while loading: %v, %v; want state loading, no error", detail, err)
	}
	vec := make([]float32, m.embedder.Dimensions())
	vec[0] = 1
	q := agentsmcp.VectorQuery{Values: vec, TopK: 1}
	if _, err := m.index.Query(ctx, agentsmcp.NamespaceLearnings, q); agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("query while loading: %v, want EUNAVAILABLE", err)
	}
	written := make(chan error, 1)
	go func() {
		written <- m.index.Upsert(ctx, agentsmcp.NamespaceLearnings, []agentsmcp.Vector{{ID: "lrn_00000000000000000000000001", Values: vec}})
	}()
	select {
	case err := <-written:
		t.Fatalf("a write while loading returned (%v) before the index was loaded", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-written; err != nil {
		t.Fatalf("write once loaded: %v", err)
	}
	ms, err := m.index.Query(ctx, agentsmcp.NamespaceLearnings, q)
	if err != nil || len(ms) != 1 || ms[0].ID != "lrn_00000000000000000000000001" {
		t.Fatalf("query once loaded: %v, %v; want the written vector", ms, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		detail, _ := m.indexCheck(ctx)
		if st := detail.(map[string]any)["state"]; st != "loading" && st != "catching up" {
			break // the reconciliation removed the vector of no stored learning, or not yet: either way it ran
		}
		if time.Now().After(deadline) {
			t.Fatalf("index check still %v after the load", detail)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
