package vectors

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestDurableSavesReopensAndSetsCorruptFilesAside(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, status, err := OpenDurable(dir, "hash-v1-4", 4, HNSWOptions{})
	if err != nil || status != OpenedNew {
		t.Fatalf("first open: %v, %v", status, err)
	}
	if err := d.Upsert(ctx, "ns", []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); d.Run(runCtx, time.Hour, func(err error) { t.Error(err) }) }()
	stop() // Run saves once more on its way out
	<-ran
	again, status, err := OpenDurable(dir, "hash-v1-4", 4, HNSWOptions{})
	if err != nil || status != OpenedExisting || again.Len("ns") != 1 {
		t.Fatalf("reopen: %v, %d vectors, %v", status, again.Len("ns"), err)
	}
	// Another embedder gets its own file.
	if _, status, _ := OpenDurable(dir, "openai:text-embedding-3-small:4", 4, HNSWOptions{}); status != OpenedNew {
		t.Errorf("other embedder opened %v, want new", status)
	}
	// Other dimensions: set aside.
	if _, status, _ := OpenDurable(dir, "hash-v1-4", 8, HNSWOptions{}); status != OpenedMismatch {
		t.Errorf("8-dim open of a 4-dim file: %v, want mismatch", status)
	}
	// A damaged file: set aside, empty index, no error.
	path := DurablePath(dir, "x")
	if err := os.WriteFile(path, []byte("AMCPHNSW garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, status, err := OpenDurable(dir, "x", 4, HNSWOptions{})
	if err != nil || status != OpenedCorrupt || c.Len("ns") != 0 {
		t.Fatalf("corrupt open: %v, %v", status, err)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Errorf("corrupt file not kept aside for inspection: %v", aside)
	}
	// Nothing changed: Save writes nothing.
	if err := os.Remove(DurablePath(dir, "hash-v1-4")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := again.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(DurablePath(dir, "hash-v1-4")); !os.IsNotExist(err) {
		t.Errorf("Save of an unchanged index wrote the file (%v)", err)
	}
}
