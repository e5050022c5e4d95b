package agentsmcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// AuditEntry is one audited event: a tool call, an admin write, a failed
// authentication, or a refused read of a resource or prompt over MCP. Written once, never updated; removed only by retention.
//
// Invariants: Kind is one of AuditKinds; Outcome is one of AuditOutcomes;
// Target is not empty; Principal, Target, RequestID and Transport are at
// most MaxAuditFieldBytes and Error at most MaxAuditErrorBytes, all valid
// UTF-8; Arguments, when set, is a JSON value of at most
// MaxAuditArgumentsBytes that has already been through redact.Arguments
// (stores never see a secret); Latency is not negative; ID, when set, is an
// id with prefix AuditIDPrefix.
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
	// an admin write or an auth failure, "method uri-or-name" for an MCP
	// read ("resources/read upstream://everything/test://static/resource/1").
	Target string `json:"target"`
	// Transport is how the request came: "streamable", "sse", "stdio",
	// "rest" (the REST bridge), "admin".
	Transport string `json:"transport,omitempty"`
	// Client is the caller's clientInfo of a tool call, "name/version" as
	// the client sent it (truncated to MaxAuditFieldBytes), and
	// ClientProfile the short id of the profile the router shaped its
	// answer for ("standard", "legacy", "rest"); both empty for other
	// kinds and for calls the agents made in-process.
	Client        string `json:"client,omitempty"`
	ClientProfile string `json:"clientProfile,omitempty"`
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
	// AuditMCPRead is a request for a resource, resource template or
	// prompt (resources/read, resources/subscribe, subscriptions/listen,
	// prompts/get, completion/complete); only those refused by the
	// caller's tool allowlist are recorded.
	AuditMCPRead AuditKind = "mcp_read"
	// AuditMCPWrite is a change of a task through the MCP Tasks extension
	// (tasks/update, tasks/cancel).
	AuditMCPWrite AuditKind = "mcp_write"
)

// AuditKinds lists every valid AuditKind.
var AuditKinds = []AuditKind{AuditToolCall, AuditAdminWrite, AuditAuthFailure, AuditMCPRead, AuditMCPWrite}

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

// Limits on audit entries. MaxAuditBatchEntries bounds one call of
// CreateAuditEntries, and so the size of one store transaction.
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

// AuditService stores the audit trail. Find* follows the common contract
// of this package (newest first by At, cursor paging).
type AuditService interface {
	// CreateAuditEntries validates and stores entries in one batch,
	// assigning ID and At when empty (At at millisecond precision, UTC).
	// EINVALID, with nothing stored, when one entry breaks an invariant or
	// the batch holds more than MaxAuditBatchEntries; an empty batch is a
	// no-op.
	//
	// The assigned ID and At are written into the entries before anything
	// is stored, and an entry whose ID is already stored is skipped, not
	// overwritten nor an error: retrying the same entries after a failure
	// (a timeout, a store that went away mid-batch) stores each entry
	// exactly once. Whether a failed batch stored a part of it is up to the
	// store (SQLite: never; MongoDB, which has no transactions on every
	// deployment: maybe), which the retry makes whole.
	CreateAuditEntries(ctx context.Context, entries []*AuditEntry) error
	// FindAuditEntries lists the entries matching f. EINVALID for a bad
	// cursor, or a Kind or Outcome that is not one of the valid values.
	FindAuditEntries(ctx context.Context, f AuditFilter) (items []*AuditEntry, next string, err error)
	// DeleteAuditEntriesBefore removes the entries whose At is before t
	// (retention) and reports how many. A store may delete in several
	// transactions, so that a large delete does not hold up writers.
	DeleteAuditEntriesBefore(ctx context.Context, t time.Time) (int64, error)
	// DeleteOldestAuditEntries removes the oldest entries (by At, then ID)
	// beyond the newest keep (the size bound) and reports how many. Like
	// DeleteAuditEntriesBefore, a store may delete in several
	// transactions; entries written meanwhile are newer, and stay. EINVALID
	// for a negative keep.
	DeleteOldestAuditEntries(ctx context.Context, keep int64) (int64, error)
}
