package auditlog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// A Recorder is built once over the store, run in a goroutine the
// application owns, and given to whatever audits.
func ExampleRecorder() {
	dir, err := os.MkdirTemp("", "auditlog-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "agents-mcp.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	rec := auditlog.New(store, auditlog.Options{Retention: auditlog.DefaultRetention})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec.Run(ctx)
	}()

	// In the router, after each tool call: raw arguments are fine, Record
	// redacts them.
	rec.Record(&agentsmcp.AuditEntry{
		Principal: "key:0123456789ab",
		Kind:      agentsmcp.AuditToolCall,
		Target:    "github__create_issue",
		Transport: "streamable",
		Arguments: json.RawMessage(`{"repo":"agents-mcp","token":"ghp_0123456789abcdefghijABCDEFGHIJ"}`),
		Outcome:   agentsmcp.AuditOK,
		Latency:   120 * time.Millisecond,
	})

	// At shutdown: cancel, and wait for the final flush before closing the
	// store.
	cancel()
	<-done

	items, _, err := store.FindAuditEntries(context.Background(), agentsmcp.AuditFilter{Kind: agentsmcp.AuditToolCall})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range items {
		fmt.Println(e.Principal, e.Target, e.Outcome, string(e.Arguments))
	}
	fmt.Println("dropped:", rec.Dropped())
	// Output:
	// key:0123456789ab github__create_issue ok {"repo":"agents-mcp","token":"[redacted]"}
	// dropped: 0
}
