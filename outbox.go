package agentsmcp

import (
	"context"
	"time"
)

// Vector namespaces: one per aggregate that is searched by meaning.
const (
	NamespaceLearnings = "learnings"
	NamespaceInsights  = "insights"
	NamespacePatterns  = "patterns"
)

// OutboxOp is what an outbox entry asks of the index.
type OutboxOp string

const (
	// OutboxUpsert indexes the document as stored when processed (skipped if
	// gone).
	OutboxUpsert OutboxOp = "upsert"
	// OutboxDelete removes the document's vector.
	OutboxDelete OutboxOp = "delete"
)

// OutboxEntry is one pending change of the vector index, naming a document,
// never its text. At most one exists per (Namespace, DocID, Op).
type OutboxEntry struct {
	Namespace     string    `json:"namespace"`
	DocID         string    `json:"docId"`
	Op            OutboxOp  `json:"op"`
	Attempts      int       `json:"attempts"`            // failed attempts so far
	LastError     string    `json:"lastError,omitempty"` // of the latest failed attempt
	NextAttemptAt time.Time `json:"nextAttemptAt"`
	CreatedAt     time.Time `json:"createdAt"`
}

// Key identifies an entry among the pending ones.
func (e *OutboxEntry) Key() string { return e.Namespace + "/" + string(e.Op) + "/" + e.DocID }

// MaxOutboxErrorBytes caps OutboxEntry.LastError.
const MaxOutboxErrorBytes = 1 << 10

// OutboxService is the queue of pending index changes (memory/vectorsync).
// Stores enqueue within the write (in its transaction, or an upsert before
// and a delete after it). Claims are leased across replicas.
type OutboxService interface {
	// EnqueueOutbox adds entries, ignoring pending ones. EINVALID.
	EnqueueOutbox(ctx context.Context, namespace string, op OutboxOp, docIDs ...string) error
	// ClaimOutbox leases up to limit due, unleased entries to owner for ttl.
	ClaimOutbox(ctx context.Context, owner string, limit int, ttl time.Duration) ([]*OutboxEntry, error)
	// AckOutbox removes processed entries. Unknown keys are ignored.
	AckOutbox(ctx context.Context, keys ...string) error
	// RetryOutbox records a failed attempt (Attempts+1, LastError cut to
	// MaxOutboxErrorBytes, NextAttemptAt = next) and releases the lease.
	// ENOTFOUND.
	RetryOutbox(ctx context.Context, key, lastError string, next time.Time) error
	// OutboxBacklog counts pending entries and the oldest CreatedAt.
	OutboxBacklog(ctx context.Context) (pending int64, oldest time.Time, err error)
	// ListDocumentIDs returns up to limit ids after after, ascending, of the
	// documents the index should hold in namespace. EINVALID.
	ListDocumentIDs(ctx context.Context, namespace, after string, limit int) ([]string, error)
}
