package mongo

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var _ agentsmcp.AuditService = (*DB)(nil)

// colAudit holds one document per [agentsmcp.AuditEntry], _id = its ID.
const colAudit = "audit_entries"

// auditDoc is the stored form of an AuditEntry. At is stored as createdAt,
// the sort field every newest-first list shares (see query.go); Arguments
// as the JSON text, so that any JSON value is kept byte for byte.
type auditDoc struct {
	ID        string    `bson:"_id"`
	At        time.Time `bson:"createdAt"`
	RequestID string    `bson:"requestId"`
	Principal string    `bson:"principal"`
	Kind      string    `bson:"kind"`
	Target    string    `bson:"target"`
	Transport string    `bson:"transport"`
	Arguments string    `bson:"arguments"`
	Outcome   string    `bson:"outcome"`
	Error     string    `bson:"error"`
	LatencyNs int64     `bson:"latencyNs"`
	// Client and ClientProfile are absent from entries written before
	// they existed, and read as empty.
	Client        string `bson:"client,omitempty"`
	ClientProfile string `bson:"clientProfile,omitempty"`
}

func (d *auditDoc) entry() *agentsmcp.AuditEntry {
	e := &agentsmcp.AuditEntry{
		ID:        d.ID,
		At:        d.At.UTC(),
		RequestID: d.RequestID,
		Principal: d.Principal,
		Kind:      agentsmcp.AuditKind(d.Kind),
		Target:    d.Target,
		Transport: d.Transport,
		Outcome:   agentsmcp.AuditOutcome(d.Outcome),
		Error:     d.Error,
		Latency:   time.Duration(d.LatencyNs),

		Client:        d.Client,
		ClientProfile: d.ClientProfile,
	}
	if d.Arguments != "" {
		e.Arguments = json.RawMessage(d.Arguments)
	}
	return e
}

// CreateAuditEntries implements [agentsmcp.AuditService]: every entry is
// validated first (EINVALID stores nothing), IDs and times are assigned
// into the entries, then all are inserted by one unordered insertMany.
// MongoDB has no multi-document atomicity without transactions (which
// FerretDB lacks), so a failure part-way may leave some entries stored; an
// ID already stored counts as stored, so retrying the same entries
// completes the batch without duplicates.
func (db *DB) CreateAuditEntries(ctx context.Context, entries []*agentsmcp.AuditEntry) error {
	if err := validate.AuditBatch(entries); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	now := db.nowMs()
	docs := make([]auditDoc, len(entries))
	for i, e := range entries {
		if e.ID == "" {
			e.ID = agentsmcp.NewID(agentsmcp.AuditIDPrefix)
		}
		if e.At.IsZero() {
			e.At = now
		}
		e.At = ms(e.At)
		docs[i] = auditDoc{
			ID: e.ID, At: e.At, RequestID: e.RequestID, Principal: e.Principal, Kind: string(e.Kind),
			Target: e.Target, Transport: e.Transport, Arguments: string(e.Arguments), Outcome: string(e.Outcome),
			Error: e.Error, LatencyNs: int64(e.Latency), Client: e.Client, ClientProfile: e.ClientProfile,
		}
	}
	_, err := db.db.Collection(colAudit).InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err != nil && !onlyDuplicates(err) {
		return wrap(err, "insert audit entries")
	}
	return nil
}

// onlyDuplicates reports whether every failure of an insertMany is a
// duplicate _id, which for audit entries means "stored by an earlier try".
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 {
			return false
		}
	}
	return true
}

// FindAuditEntries implements [agentsmcp.AuditService]: newest first (ties
// by id, highest first), Since inclusive, Until exclusive; each filter
// field has an index ending in (createdAt, _id).
func (db *DB) FindAuditEntries(ctx context.Context, f agentsmcp.AuditFilter) ([]*agentsmcp.AuditEntry, string, error) {
	if err := validate.AuditFilter(f); err != nil {
		return nil, "", err
	}
	var clauses []bson.D
	for _, eq := range []struct{ field, value string }{
		{"principal", f.Principal}, {"kind", string(f.Kind)}, {"target", f.Target},
		{"outcome", string(f.Outcome)}, {"requestId", f.RequestID},
	} {
		if eq.value != "" {
			// User text is only ever a value compared for equality.
			clauses = append(clauses, bson.D{{Key: eq.field, Value: eq.value}})
		}
	}
	if !f.Since.IsZero() {
		clauses = append(clauses, bson.D{{Key: "createdAt", Value: bson.D{{Key: "$gte", Value: ceilMs(f.Since)}}}})
	}
	if !f.Until.IsZero() {
		clauses = append(clauses, bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: ceilMs(f.Until)}}}})
	}
	docs, next, err := newestFirstPage(ctx, db.db.Collection(colAudit), agentsmcp.AuditIDPrefix, clauses, "", f.Cursor, f.Limit,
		func(d *auditDoc) (time.Time, string) { return d.At, d.ID })
	if err != nil {
		return nil, "", err
	}
	items := make([]*agentsmcp.AuditEntry, len(docs))
	for i := range docs {
		items[i] = docs[i].entry()
	}
	return items, next, nil
}

// DeleteAuditEntriesBefore implements [agentsmcp.AuditService] with one
// deleteMany through the createdAt index.
func (db *DB) DeleteAuditEntriesBefore(ctx context.Context, t time.Time) (int64, error) {
	res, err := db.db.Collection(colAudit).DeleteMany(ctx,
		bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: ceilMs(t)}}}})
	if err != nil {
		return 0, wrap(err, "delete audit entries")
	}
	return res.DeletedCount, nil
}

// DeleteOldestAuditEntries implements [agentsmcp.AuditService]: it counts
// the entries, finds the newest of the surplus through the createdAt
// index, and deletes it and everything older with one deleteMany.
// Entries other replicas write meanwhile are newer, and stay.
func (db *DB) DeleteOldestAuditEntries(ctx context.Context, keep int64) (int64, error) {
	if keep < 0 {
		return 0, agentsmcp.Errorf(agentsmcp.EINVALID, "audit size bound %d is negative", keep)
	}
	col := db.db.Collection(colAudit)
	count, err := col.CountDocuments(ctx, bson.D{})
	if err != nil {
		return 0, wrap(err, "count audit entries")
	}
	if count <= keep {
		return 0, nil
	}
	var last auditDoc
	err = col.FindOne(ctx, bson.D{}, options.FindOne().
		SetSort(bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}).SetSkip(count-keep-1)).Decode(&last)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil // retention deleted them meanwhile
	}
	if err != nil {
		return 0, wrap(err, "find oldest audit entries")
	}
	res, err := col.DeleteMany(ctx, bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: last.At}}}},
		bson.D{{Key: "createdAt", Value: last.At}, {Key: "_id", Value: bson.D{{Key: "$lte", Value: last.ID}}}},
	}}})
	if err != nil {
		return 0, wrap(err, "delete oldest audit entries")
	}
	return res.DeletedCount, nil
}
