package agentsmcp

import (
	"context"
	"time"
)

// This file holds the vector outbox: how a write to the store reaches the
// vector index without ever blocking on it or losing it.
//
// The store is the source of truth and the vector index is derived from it.
// Every store write that changes what the index should hold (a new learning,
// a new insight, a deleted insight, a new plan pattern) also enqueues an
// OutboxEntry that names the document, never its text; a worker
// (memory/vectorsync) claims due entries, reads the document's current state
// from the store, embeds it and writes the index, then acknowledges the
// entry. A failure (an embedder or Pinecone that is down) schedules a retry
// with backoff; the entry stays until it succeeds. Because entries carry only
// references, a retried or duplicated entry always converges on what the
// store holds now.

// Vector namespaces: one per aggregate that is searched by meaning.
const (
	NamespaceLearnings = "learnings"
	NamespaceInsights  = "insights"
	NamespacePatterns  = "patterns"
)

// OutboxOp is what an outbox entry asks of the index.
type OutboxOp string

// The outbox operations.
const (
	// OutboxUpsert indexes the document as the store holds it when the
	// entry is processed; a document that no longer exists is skipped.
	OutboxUpsert OutboxOp = "upsert"
	// OutboxDelete removes the document's vector.
	OutboxDelete OutboxOp = "delete"
)

// OutboxEntry is one pending change of the vector index.
//
// Invariants: Namespace and DocID are non-empty; Op is an OutboxOp. There is
// at most one entry per (Namespace, DocID, Op): enqueueing a change that is
// already pending is a no-op, which is sound because processing reads the
// document's current state.
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

// OutboxService is the queue of pending index changes. Stores enqueue
// entries themselves, in the write that makes them necessary: in the same
// transaction where the store has transactions. Otherwise an upsert entry
// is written before its document, so a crash can leave an entry for a
// document that never came to be, which processing skips, but never a new
// document without its entry; and a delete entry after the delete, so a
// crash can leave a vector whose document is gone, which readers skip
// (they hydrate matches from the store) and a reindex removes.
//
// Claims are leased so that several workers (replicas) never process the
// same entry at once, and a worker that dies loses its claims when the lease
// expires.
type OutboxService interface {
	// EnqueueOutbox adds entries for the documents, ignoring those already
	// pending. EINVALID for an empty namespace or id or an unknown op.
	EnqueueOutbox(ctx context.Context, namespace string, op OutboxOp, docIDs ...string) error
	// ClaimOutbox leases to owner, for ttl, up to limit entries that are
	// due (NextAttemptAt ≤ now) and not leased to anyone else (or whose
	// lease expired), oldest due first. Claimed entries are not returned to
	// another owner until the lease expires, they are acknowledged, or they
	// are retried.
	ClaimOutbox(ctx context.Context, owner string, limit int, ttl time.Duration) ([]*OutboxEntry, error)
	// AckOutbox removes processed entries. Unknown keys are ignored.
	AckOutbox(ctx context.Context, keys ...string) error
	// RetryOutbox records a failed attempt of the entry: Attempts+1,
	// LastError (cut to MaxOutboxErrorBytes), NextAttemptAt = next, and
	// releases the lease. ENOTFOUND for an unknown key.
	RetryOutbox(ctx context.Context, key, lastError string, next time.Time) error
	// OutboxBacklog counts pending entries, and reports the oldest
	// CreatedAt among them (zero when empty).
	OutboxBacklog(ctx context.Context) (pending int64, oldest time.Time, err error)
	// ListDocumentIDs returns up to limit ids, in ascending order and
	// greater than after, of the documents the index should hold in
	// namespace (one of the Namespace* constants): how a reconciliation
	// walks the store. EINVALID for another namespace.
	ListDocumentIDs(ctx context.Context, namespace, after string, limit int) ([]string, error)
}

// CutOutboxError applies MaxOutboxErrorBytes to an error text, on a UTF-8
// boundary.
func CutOutboxError(s string) string { return TruncateUTF8(s, MaxOutboxErrorBytes) }
