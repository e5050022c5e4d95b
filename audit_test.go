package agentsmcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func validAuditEntry() *AuditEntry {
	return &AuditEntry{
		Principal: "key:0123456789ab",
		Kind:      AuditToolCall,
		Target:    "files__read_file",
		Transport: "streamable",
		Arguments: json.RawMessage(`{"path":"/tmp/x"}`),
		Outcome:   AuditOK,
		Latency:   time.Millisecond,
	}
}

func TestAuditEntryValidate(t *testing.T) {
	if err := validAuditEntry().Validate(); err != nil {
		t.Fatalf("valid entry: %v", err)
	}
	minimal := &AuditEntry{Kind: AuditAuthFailure, Target: "POST /admin/upstreams", Outcome: AuditDenied}
	if err := minimal.Validate(); err != nil {
		t.Fatalf("minimal entry: %v", err)
	}
	withID := validAuditEntry()
	withID.ID = NewID(AuditIDPrefix)
	if err := withID.Validate(); err != nil {
		t.Fatalf("entry with id: %v", err)
	}

	tests := []struct {
		name   string
		change func(e *AuditEntry)
	}{
		{"unknown kind", func(e *AuditEntry) { e.Kind = "tool-call" }},
		{"empty kind", func(e *AuditEntry) { e.Kind = "" }},
		{"unknown outcome", func(e *AuditEntry) { e.Outcome = "fine" }},
		{"empty target", func(e *AuditEntry) { e.Target = "" }},
		{"negative latency", func(e *AuditEntry) { e.Latency = -1 }},
		{"long principal", func(e *AuditEntry) { e.Principal = strings.Repeat("p", MaxAuditFieldBytes+1) }},
		{"long target", func(e *AuditEntry) { e.Target = strings.Repeat("t", MaxAuditFieldBytes+1) }},
		{"long request id", func(e *AuditEntry) { e.RequestID = strings.Repeat("r", MaxAuditFieldBytes+1) }},
		{"long transport", func(e *AuditEntry) { e.Transport = strings.Repeat("s", MaxAuditFieldBytes+1) }},
		{"long error", func(e *AuditEntry) { e.Error = strings.Repeat("e", MaxAuditErrorBytes+1) }},
		{"invalid UTF-8", func(e *AuditEntry) { e.Principal = "bad \xff byte" }},
		{"arguments not JSON", func(e *AuditEntry) { e.Arguments = json.RawMessage(`{"a":`) }},
		{"arguments too large", func(e *AuditEntry) {
			e.Arguments = json.RawMessage(`"` + strings.Repeat("a", MaxAuditArgumentsBytes) + `"`)
		}},
		{"malformed id", func(e *AuditEntry) { e.ID = "aud_1" }},
		{"id of another aggregate", func(e *AuditEntry) { e.ID = NewID(TaskIDPrefix) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validAuditEntry()
			tt.change(e)
			if code := ErrorCode(e.Validate()); code != EINVALID {
				t.Errorf("Validate: code %q, want %q", code, EINVALID)
			}
		})
	}
	if code := ErrorCode((*AuditEntry)(nil).Validate()); code != EINVALID {
		t.Errorf("nil entry: code %q, want %q", code, EINVALID)
	}
}

func TestAuditEntryLimitsAreInclusive(t *testing.T) {
	e := validAuditEntry()
	e.Principal = strings.Repeat("p", MaxAuditFieldBytes)
	e.Error = strings.Repeat("e", MaxAuditErrorBytes)
	e.Arguments = json.RawMessage(`"` + strings.Repeat("a", MaxAuditArgumentsBytes-2) + `"`)
	if err := e.Validate(); err != nil {
		t.Errorf("entry at the limits: %v", err)
	}
}

func TestValidateAuditBatch(t *testing.T) {
	if err := ValidateAuditBatch(nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	bad := validAuditEntry()
	bad.Outcome = "?"
	err := ValidateAuditBatch([]*AuditEntry{validAuditEntry(), bad})
	if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "entry 1") {
		t.Errorf("batch with a bad second entry: %v; want EINVALID naming entry 1", err)
	}
	if err := ValidateAuditBatch([]*AuditEntry{validAuditEntry(), nil}); ErrorCode(err) != EINVALID {
		t.Errorf("batch with a nil entry: %v", err)
	}
	big := make([]*AuditEntry, MaxAuditBatchEntries+1)
	for i := range big {
		big[i] = validAuditEntry()
	}
	if err := ValidateAuditBatch(big); ErrorCode(err) != EINVALID {
		t.Errorf("batch over the limit: %v", err)
	}
}

func TestAuditFilterValidate(t *testing.T) {
	for _, f := range []AuditFilter{{}, {Kind: AuditAdminWrite, Outcome: AuditError, Principal: "anything"}} {
		if err := f.Validate(); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	for _, f := range []AuditFilter{{Kind: "toolcall"}, {Outcome: "failed"}} {
		if err := f.Validate(); ErrorCode(err) != EINVALID {
			t.Errorf("%+v: %v, want EINVALID", f, err)
		}
	}
}
