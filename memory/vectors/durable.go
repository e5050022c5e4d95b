package vectors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Durable is the embedded default [agentsmcp.VectorIndex]: an [HNSW] kept
// in memory and saved to a file under a directory, one file per embedder, so
// that vectors of different embedders are never mixed and switching
// embedders starts a fresh index.
//
// Saving is periodic (see [Durable.Run]) and at Close, not per write: the
// index is derived from the store, and whatever a crash loses since the
// last save is found again by reconciling with the store at the next start
// (memory/vectorsync does that). A file that does not load (truncated,
// damaged, written by an incompatible version) is moved aside and the index
// starts empty, for the same reconciliation to rebuild.
type Durable struct {
	*HNSW
	path string

	dirty  atomic.Bool
	saveMu sync.Mutex // one save at a time
}

// OpenStatus says what OpenDurable found.
type OpenStatus string

// The open statuses.
const (
	OpenedExisting OpenStatus = "loaded"   // the saved index was loaded
	OpenedNew      OpenStatus = "new"      // no saved index: empty
	OpenedCorrupt  OpenStatus = "corrupt"  // the saved index was unreadable: moved aside, empty
	OpenedMismatch OpenStatus = "mismatch" // saved with other dimensions or options: moved aside, empty
)

var unsafeFileRunes = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DurablePath is the file of the index of embedderID under dir.
func DurablePath(dir, embedderID string) string {
	return filepath.Join(dir, "vectors-"+unsafeFileRunes.ReplaceAllString(embedderID, "_")+".hnsw")
}

// OpenDurable loads the index of embedderID saved under dir, or starts an
// empty one with dims dimensions and opts. It fails only when dir cannot be
// created or a file cannot be moved aside; an unreadable index is reported
// by the status, not as an error. A loaded index keeps the graph options
// of its file (M, EfConstruction…) and takes EfSearch and RecallTarget from
// opts.
func OpenDurable(dir, embedderID string, dims int, opts HNSWOptions) (*Durable, OpenStatus, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, "", fmt.Errorf("vector index dir: %w", err)
	}
	path := DurablePath(dir, embedderID)
	h, err := LoadHNSW(path)
	status := OpenedExisting
	switch {
	case errors.Is(err, fs.ErrNotExist):
		status = OpenedNew
	case errors.Is(err, ErrCorrupt):
		status = OpenedCorrupt
	case err != nil:
		return nil, "", err
	case h.dims != dims:
		status = OpenedMismatch
	}
	if status == OpenedCorrupt || status == OpenedMismatch {
		aside := fmt.Sprintf("%s.%s-%d", path, status, time.Now().Unix())
		if err := os.Rename(path, aside); err != nil {
			return nil, "", fmt.Errorf("move unusable vector index aside: %w", err)
		}
	}
	if status != OpenedExisting {
		h = NewHNSW(dims, opts)
	} else {
		// The beam width only matters to queries, not to the graph, so
		// the caller's choice replaces the file's. That is how files saved
		// with the old fixed default (64) move to a tuned one.
		want := opts.withDefaults()
		if h.opts.EfSearch != want.EfSearch || h.opts.RecallTarget != want.RecallTarget {
			h.opts.EfSearch, h.opts.RecallTarget = want.EfSearch, want.RecallTarget
			h.Tune()
		}
	}
	return &Durable{HNSW: h, path: path}, status, nil
}

// Path is the index file.
func (d *Durable) Path() string { return d.path }

// Upsert implements agentsmcp.VectorIndex.
func (d *Durable) Upsert(ctx context.Context, namespace string, vs []agentsmcp.Vector) error {
	err := d.HNSW.Upsert(ctx, namespace, vs)
	if err == nil && len(vs) > 0 {
		d.dirty.Store(true)
	}
	return err
}

// Delete implements agentsmcp.VectorIndex.
func (d *Durable) Delete(ctx context.Context, namespace string, ids []string) error {
	err := d.HNSW.Delete(ctx, namespace, ids)
	if err == nil && len(ids) > 0 {
		d.dirty.Store(true)
	}
	return err
}

// Save writes the index atomically if it changed since the last save.
func (d *Durable) Save() error {
	d.saveMu.Lock()
	defer d.saveMu.Unlock()
	if !d.dirty.Swap(false) {
		return nil
	}
	if err := d.HNSW.Save(d.path); err != nil {
		d.dirty.Store(true)
		return fmt.Errorf("save vector index: %w", err)
	}
	return nil
}

// Run saves the index every interval while it changes, until ctx ends,
// then saves it a last time. Errors are passed to report (which may be
// nil) and retried at the next tick.
func (d *Durable) Run(ctx context.Context, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := d.Save(); err != nil && report != nil {
				report(err)
			}
			return
		case <-t.C:
			if err := d.Save(); err != nil && report != nil {
				report(err)
			}
		}
	}
}

// Reset empties the index, keeping its dimensions and options, for a
// rebuild from the store. It must not run concurrently with other calls.
func (d *Durable) Reset() {
	d.HNSW = NewHNSW(d.dims, d.opts)
	d.dirty.Store(true)
}
