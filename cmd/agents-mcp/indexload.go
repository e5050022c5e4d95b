package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
)

// embeddedIndex is the embedded vector index, read from its file in the
// background: with a million learnings the file takes seconds to read and
// its rows to quantise, and `serve` need not wait for that to answer.
// Until it is loaded:
//   - Query fails with EUNAVAILABLE, so every semantic search answers from
//     the store's word filter (memory/recall's fallback, as while the
//     index catches up with the store);
//   - Upsert, Delete and IDs wait for it (the outbox worker and the
//     reconciliation with the store start on it once loaded), so nothing
//     written meanwhile is lost;
//   - /readyz is ready, its index check saying "loading" (memory.indexCheck).
//
// Load reads the file once; an error there (a file that could not be set
// aside) leaves semantic search on the word filter until the next start.
type embeddedIndex struct {
	open func() (*vectors.Durable, vectors.OpenStatus, error)

	once   sync.Once
	loaded chan struct{} // closed once open returned
	d      atomic.Pointer[vectors.Durable]
	err    error // open's error; read after loaded is closed
}

func newEmbeddedIndex(open func() (*vectors.Durable, vectors.OpenStatus, error)) *embeddedIndex {
	return &embeddedIndex{open: open, loaded: make(chan struct{})}
}

// Load reads the index, the first call only; every call returns the
// loaded index, or why there is none.
func (e *embeddedIndex) Load(logger *slog.Logger) (*vectors.Durable, error) {
	e.once.Do(func() {
		defer close(e.loaded)
		start := time.Now()
		d, status, err := e.open()
		if err != nil {
			e.err = err
			logger.Error("the vector index could not be opened; semantic search answers from the store's word filter until the next start", "err", err)
			return
		}
		switch status {
		case vectors.OpenedCorrupt, vectors.OpenedMismatch:
			logger.Warn("the saved vector index was unusable and was set aside; rebuilding it from the store", "status", string(status), "path", d.Path())
		default:
			logger.Info("vector index", "status", string(status), "path", d.Path(), "took", time.Since(start).Round(time.Millisecond).String())
		}
		e.d.Store(d)
	})
	<-e.loaded
	return e.d.Load(), e.err
}

// Loaded is the index once loaded, else nil.
func (e *embeddedIndex) Loaded() *vectors.Durable { return e.d.Load() }

// wait returns the loaded index, waiting for the load; EUNAVAILABLE when it
// failed, ctx's error when ctx ends first.
func (e *embeddedIndex) wait(ctx context.Context) (*vectors.Durable, error) {
	select {
	case <-e.loaded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if d := e.d.Load(); d != nil {
		return d, nil
	}
	return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the vector index could not be opened: %s", agentsmcp.ErrorMessage(e.err))
}

// Upsert implements [agentsmcp.VectorIndex], once the index is loaded.
func (e *embeddedIndex) Upsert(ctx context.Context, namespace string, vs []agentsmcp.Vector) error {
	d, err := e.wait(ctx)
	if err != nil {
		return err
	}
	return d.Upsert(ctx, namespace, vs)
}

// Delete implements [agentsmcp.VectorIndex], once the index is loaded.
func (e *embeddedIndex) Delete(ctx context.Context, namespace string, ids []string) error {
	d, err := e.wait(ctx)
	if err != nil {
		return err
	}
	return d.Delete(ctx, namespace, ids)
}

// Query implements [agentsmcp.VectorIndex]: EUNAVAILABLE while the index
// loads, so that the search answers from the store at once.
func (e *embeddedIndex) Query(ctx context.Context, namespace string, q agentsmcp.VectorQuery) ([]agentsmcp.VectorMatch, error) {
	d := e.d.Load()
	if d == nil {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the vector index is loading")
	}
	return d.Query(ctx, namespace, q)
}

// IDs implements vectorsync.IDLister once the index is loaded (waiting
// for it); none when it failed to load.
func (e *embeddedIndex) IDs(namespace string) []string {
	<-e.loaded
	if d := e.d.Load(); d != nil {
		return d.IDs(namespace)
	}
	return nil
}

// Len is how many vectors of namespace the loaded index holds; 0 while it
// loads.
func (e *embeddedIndex) Len(namespace string) int {
	if d := e.d.Load(); d != nil {
		return d.Len(namespace)
	}
	return 0
}
