package validate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func validAuditEntry() *agentsmcp.AuditEntry {
	return &agentsmcp.AuditEntry{
		Principal: "key:0123456789ab",
		Kind:      agentsmcp.AuditToolCall,
		Target:    "files__read_file",
		Transport: "streamable",
		Arguments: json.RawMessage(`{"path":"/tmp/x"}`),
		Outcome:   agentsmcp.AuditOK,
		Latency:   time.Millisecond,
	}
}

func TestAuditEntryValidate(t *testing.T) {
	if err := AuditEntry(validAuditEntry()); err != nil {
		t.Fatalf("valid entry: %v", err)
	}
	minimal := &agentsmcp.AuditEntry{Kind: agentsmcp.AuditAuthFailure, Target: "POST /admin/upstreams", Outcome: agentsmcp.AuditDenied}
	if err := AuditEntry(minimal); err != nil {
		t.Fatalf("minimal entry: %v", err)
	}
	withID := validAuditEntry()
	withID.ID = agentsmcp.NewID(agentsmcp.AuditIDPrefix)
	if err := AuditEntry(withID); err != nil {
		t.Fatalf("entry with id: %v", err)
	}

	tests := []struct {
		name   string
		change func(e *agentsmcp.AuditEntry)
	}{
		{"unknown kind", func(e *agentsmcp.AuditEntry) { e.Kind = "tool-call" }},
		{"empty kind", func(e *agentsmcp.AuditEntry) { e.Kind = "" }},
		{"unknown outcome", func(e *agentsmcp.AuditEntry) { e.Outcome = "fine" }},
		{"empty target", func(e *agentsmcp.AuditEntry) { e.Target = "" }},
		{"negative latency", func(e *agentsmcp.AuditEntry) { e.Latency = -1 }},
		{"long principal", func(e *agentsmcp.AuditEntry) { e.Principal = strings.Repeat("p", agentsmcp.MaxAuditFieldBytes+1) }},
		{"long target", func(e *agentsmcp.AuditEntry) { e.Target = strings.Repeat("t", agentsmcp.MaxAuditFieldBytes+1) }},
		{"long request id", func(e *agentsmcp.AuditEntry) { e.RequestID = strings.Repeat("r", agentsmcp.MaxAuditFieldBytes+1) }},
		{"long transport", func(e *agentsmcp.AuditEntry) { e.Transport = strings.Repeat("s", agentsmcp.MaxAuditFieldBytes+1) }},
		{"long error", func(e *agentsmcp.AuditEntry) { e.Error = strings.Repeat("e", agentsmcp.MaxAuditErrorBytes+1) }},
		{"invalid UTF-8", func(e *agentsmcp.AuditEntry) { e.Principal = "bad \xff byte" }},
		{"arguments not JSON", func(e *agentsmcp.AuditEntry) { e.Arguments = json.RawMessage(`{"a":`) }},
		{"arguments too large", func(e *agentsmcp.AuditEntry) {
			e.Arguments = json.RawMessage(`"` + strings.Repeat("a", agentsmcp.MaxAuditArgumentsBytes) + `"`)
		}},
		{"malformed id", func(e *agentsmcp.AuditEntry) { e.ID = "aud_1" }},
		{"id of another aggregate", func(e *agentsmcp.AuditEntry) { e.ID = agentsmcp.NewID(agentsmcp.TaskIDPrefix) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validAuditEntry()
			tt.change(e)
			if code := agentsmcp.ErrorCode(AuditEntry(e)); code != agentsmcp.EINVALID {
				t.Errorf("Validate: code %q, want %q", code, agentsmcp.EINVALID)
			}
		})
	}
	if code := agentsmcp.ErrorCode(AuditEntry((*agentsmcp.AuditEntry)(nil))); code != agentsmcp.EINVALID {
		t.Errorf("nil entry: code %q, want %q", code, agentsmcp.EINVALID)
	}
}

func TestAuditEntryLimitsAreInclusive(t *testing.T) {
	e := validAuditEntry()
	e.Principal = strings.Repeat("p", agentsmcp.MaxAuditFieldBytes)
	e.Error = strings.Repeat("e", agentsmcp.MaxAuditErrorBytes)
	e.Arguments = json.RawMessage(`"` + strings.Repeat("a", agentsmcp.MaxAuditArgumentsBytes-2) + `"`)
	if err := AuditEntry(e); err != nil {
		t.Errorf("entry at the limits: %v", err)
	}
}

func TestValidateAuditBatch(t *testing.T) {
	if err := AuditBatch(nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	bad := validAuditEntry()
	bad.Outcome = "?"
	err := AuditBatch([]*agentsmcp.AuditEntry{validAuditEntry(), bad})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(agentsmcp.ErrorMessage(err), "entry 1") {
		t.Errorf("batch with a bad second entry: %v; want EINVALID naming entry 1", err)
	}
	if err := AuditBatch([]*agentsmcp.AuditEntry{validAuditEntry(), nil}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("batch with a nil entry: %v", err)
	}
	big := make([]*agentsmcp.AuditEntry, agentsmcp.MaxAuditBatchEntries+1)
	for i := range big {
		big[i] = validAuditEntry()
	}
	if err := AuditBatch(big); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("batch over the limit: %v", err)
	}
}

func TestAuditFilterValidate(t *testing.T) {
	for _, f := range []agentsmcp.AuditFilter{{}, {Kind: agentsmcp.AuditAdminWrite, Outcome: agentsmcp.AuditError, Principal: "anything"}} {
		if err := AuditFilter(f); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	for _, f := range []agentsmcp.AuditFilter{{Kind: "toolcall"}, {Outcome: "failed"}} {
		if err := AuditFilter(f); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("%+v: %v, want EINVALID", f, err)
		}
	}
}
