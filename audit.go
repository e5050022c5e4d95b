package agentsmcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// AuditEntry is one audited event, written once (internal/validate.AuditEntry).
// Arguments went through redact.Arguments: stores never see a secret.
type AuditEntry struct {
	ID        string    `json:"id"`
	At        time.Time `json:"at"`
	RequestID string    `json:"requestId,omitempty"`
	// Principal is who acted (for an auth failure: what was presented, redacted).
	Principal string    `json:"principal"`
	Kind      AuditKind `json:"kind"`
	// Target: the tool name, "METHOD /route", or "method uri-or-name".
	Target string `json:"target"`
	// Transport: streamable, sse, stdio, rest or admin.
	Transport string `json:"transport,omitempty"`
	// Client ("name/version") and ClientProfile of a tool call; empty otherwise.
	Client        string          `json:"client,omitempty"`
	ClientProfile string          `json:"clientProfile,omitempty"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	Outcome       AuditOutcome    `json:"outcome"`
	// Error is the code and message of a failure.
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latencyNs"`
}

// AuditKind is what an AuditEntry records.
type AuditKind string

const (
	AuditToolCall    AuditKind = "tool_call"
	AuditAdminWrite  AuditKind = "admin_write"
	AuditAuthFailure AuditKind = "auth_failure"
	// AuditMCPRead: a read of a resource or prompt refused by the allowlist.
	AuditMCPRead AuditKind = "mcp_read"
	// AuditMCPWrite: tasks/update or tasks/cancel.
	AuditMCPWrite AuditKind = "mcp_write"
)

// AuditKinds lists every valid AuditKind.
var AuditKinds = []AuditKind{AuditToolCall, AuditAdminWrite, AuditAuthFailure, AuditMCPRead, AuditMCPWrite}

// AuditOutcome is ok, error (ran and failed) or denied (refused before running).
type AuditOutcome string

const (
	AuditOK     AuditOutcome = "ok"
	AuditError  AuditOutcome = "error"
	AuditDenied AuditOutcome = "denied"
)

// AuditOutcomes lists every valid AuditOutcome.
var AuditOutcomes = []AuditOutcome{AuditOK, AuditError, AuditDenied}

const (
	MaxAuditFieldBytes     = 512
	MaxAuditErrorBytes     = 2 << 10
	MaxAuditArgumentsBytes = redact.MaxArgumentsBytes
	MaxAuditBatchEntries   = 1000
)

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	Principal string // exact
	Kind      AuditKind
	Target    string // exact
	Outcome   AuditOutcome
	RequestID string // exact
	Since     time.Time
	Until     time.Time // exclusive
	Cursor    string
	Limit     int
}

// AuditService stores the audit trail (Find*: the common contract).
type AuditService interface {
	// CreateAuditEntries validates and stores entries as one batch, assigning
	// ID and At first; an entry whose ID is stored is skipped, so a retry
	// stores each once. EINVALID, nothing stored, past MaxAuditBatchEntries.
	CreateAuditEntries(ctx context.Context, entries []*AuditEntry) error
	// FindAuditEntries lists matches. EINVALID for a bad cursor, kind or outcome.
	FindAuditEntries(ctx context.Context, f AuditFilter) (items []*AuditEntry, next string, err error)
	// DeleteAuditEntriesBefore removes entries before t and reports how many.
	DeleteAuditEntriesBefore(ctx context.Context, t time.Time) (int64, error)
	// DeleteOldestAuditEntries keeps the newest keep. EINVALID for keep < 0.
	DeleteOldestAuditEntries(ctx context.Context, keep int64) (int64, error)
}
