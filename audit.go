package agentsmcp

import (
	"context"
	"encoding/json"
	"time"
)

// AuditEntry is one audited event: a tool call, an admin write, or a failed
// authentication. Written once, never updated; removed only by retention.
//
// Invariants: Kind is one of AuditKinds; Outcome is one of AuditOutcomes;
// Principal, Target and RequestID are at most MaxAuditFieldBytes; Arguments,
// when set, is a JSON value of at most MaxAuditArgumentsBytes that has
// already been through RedactArguments (stores never see a secret); Latency
// is not negative.
type AuditEntry struct {
	ID        string    `json:"id"`
	At        time.Time `json:"at"`
	RequestID string    `json:"requestId,omitempty"`
	// Principal is who acted: "key:<hash prefix>", "jwt:<subject>",
	// "anonymous" (loopback without credentials), or what an unknown
	// caller presented, redacted, for an auth failure.
	Principal string    `json:"principal"`
	Kind      AuditKind `json:"kind"`
	// Target is the tool name for a tool call, "METHOD /route/pattern" for
	// an admin write or an auth failure.
	Target string `json:"target"`
	// Transport is how the request came: "streamable", "sse", "stdio",
	// "admin".
	Transport string `json:"transport,omitempty"`
	// Arguments is the redacted shape of the call's arguments or the
	// request body.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Outcome   AuditOutcome    `json:"outcome"`
	// Error is the error code and message of a failure, empty on success.
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latencyNs"`
}

// AuditKind is what an AuditEntry records.
type AuditKind string

// The audit kinds.
const (
	AuditToolCall    AuditKind = "tool_call"
	AuditAdminWrite  AuditKind = "admin_write"
	AuditAuthFailure AuditKind = "auth_failure"
)

// AuditKinds lists every valid AuditKind.
var AuditKinds = []AuditKind{AuditToolCall, AuditAdminWrite, AuditAuthFailure}

// AuditOutcome is how an audited event ended.
type AuditOutcome string

// The audit outcomes: ok; error (the call ran and failed); denied (refused
// by authentication, authorisation or a rate limit before running).
const (
	AuditOK     AuditOutcome = "ok"
	AuditError  AuditOutcome = "error"
	AuditDenied AuditOutcome = "denied"
)

// AuditOutcomes lists every valid AuditOutcome.
var AuditOutcomes = []AuditOutcome{AuditOK, AuditError, AuditDenied}

// Limits on audit entries.
const (
	MaxAuditFieldBytes     = 512
	MaxAuditArgumentsBytes = 8 << 10
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

// AuditService stores the audit trail. Find* follows the common contract
// of this package (newest first by At, cursor paging).
type AuditService interface {
	// CreateAuditEntries validates and stores entries in one batch,
	// assigning ID and At when empty. EINVALID (nothing stored) when one
	// breaks an invariant.
	CreateAuditEntries(ctx context.Context, entries []*AuditEntry) error
	FindAuditEntries(ctx context.Context, f AuditFilter) (items []*AuditEntry, next string, err error)
	// DeleteAuditEntriesBefore removes the entries older than t (retention)
	// and reports how many.
	DeleteAuditEntriesBefore(ctx context.Context, t time.Time) (int64, error)
}
