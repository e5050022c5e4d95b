package mongo

import (
	"context"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// outboxDoc is the stored form of an OutboxEntry, _id = its Key. A zero
// leaseUntil (the epoch) means unclaimed.
type outboxDoc struct {
	Key           string    `bson:"_id"`
	Namespace     string    `bson:"namespace"`
	DocID         string    `bson:"docId"`
	Op            string    `bson:"op"`
	Attempts      int64     `bson:"attempts"`
	LastError     string    `bson:"lastError"`
	NextAttemptAt time.Time `bson:"nextAttemptAt"`
	LeaseOwner    string    `bson:"leaseOwner"`
	LeaseUntil    time.Time `bson:"leaseUntil"`
	CreatedAt     time.Time `bson:"createdAt"`
}

func (d *outboxDoc) entry() *agentsmcp.OutboxEntry {
	return &agentsmcp.OutboxEntry{
		Namespace:     d.Namespace,
		DocID:         d.DocID,
		Op:            agentsmcp.OutboxOp(d.Op),
		Attempts:      int(d.Attempts),
		LastError:     d.LastError,
		NextAttemptAt: d.NextAttemptAt.UTC(),
		CreatedAt:     d.CreatedAt.UTC(),
	}
}

// unleased is the leaseUntil of an unclaimed entry.
var unleased = time.Unix(0, 0).UTC()

// enqueue adds outbox entries, each by an upsert that only sets fields on
// insert, so a pending entry is left as it is. Without transactions the
// callers enqueue before writing the document (see the OutboxService
// contract): processing skips an entry whose document never came to be.
func (db *DB) enqueue(ctx context.Context, namespace string, op agentsmcp.OutboxOp, docIDs ...string) error {
	at := db.nowMs()
	for _, id := range docIDs {
		e := agentsmcp.OutboxEntry{Namespace: namespace, Op: op, DocID: id}
		d := outboxDoc{Key: e.Key(), Namespace: namespace, DocID: id, Op: string(op), NextAttemptAt: at, LeaseUntil: unleased, CreatedAt: at}
		err := upsertRetry(func() error {
			_, err := db.db.Collection(colOutbox).UpdateOne(ctx, bson.D{{Key: "_id", Value: d.Key}},
				bson.D{{Key: "$setOnInsert", Value: &d}}, options.UpdateOne().SetUpsert(true))
			return err
		})
		if err != nil {
			return wrap(err, "enqueue "+d.Key)
		}
	}
	return nil
}

// EnqueueOutbox implements [agentsmcp.OutboxService].
func (db *DB) EnqueueOutbox(ctx context.Context, namespace string, op agentsmcp.OutboxOp, docIDs ...string) error {
	if err := validate.OutboxRequest(namespace, op, docIDs); err != nil {
		return err
	}
	return db.enqueue(ctx, namespace, op, docIDs...)
}

// ClaimOutbox implements [agentsmcp.OutboxService]. It reads the due,
// unleased entries, then takes each by a compare-and-set on its lease, so
// of two replicas claiming together each entry goes to exactly one; an
// entry lost to another claimer is skipped, and the claim may return fewer
// than limit entries while more are due.
func (db *DB) ClaimOutbox(ctx context.Context, owner string, limit int, ttl time.Duration) ([]*agentsmcp.OutboxEntry, error) {
	if owner == "" || limit <= 0 || ttl <= 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "claim needs an owner, a positive limit and a positive ttl")
	}
	now := db.nowMs()
	col := db.db.Collection(colOutbox)
	cur, err := col.Find(ctx, bson.D{
		{Key: "nextAttemptAt", Value: bson.D{{Key: "$lte", Value: now}}},
		{Key: "leaseUntil", Value: bson.D{{Key: "$lte", Value: now}}},
	}, options.Find().SetSort(bson.D{{Key: "nextAttemptAt", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, wrap(err, "claim outbox")
	}
	var due []outboxDoc
	if err := cur.All(ctx, &due); err != nil {
		return nil, wrap(err, "claim outbox")
	}
	until := now.Add(ttl)
	var claimed []*agentsmcp.OutboxEntry
	for i := range due {
		d := &due[i]
		ok, err := db.takeLease(ctx, d, owner, until)
		if err != nil {
			return nil, err
		}
		if ok {
			claimed = append(claimed, d.entry())
		}
	}
	return claimed, nil
}

// takeLease sets d's lease if it is still the one d was read with.
func (db *DB) takeLease(ctx context.Context, d *outboxDoc, owner string, until time.Time) (bool, error) {
	defer db.lockKey(colOutbox + "\x00" + d.Key)()
	res, err := db.db.Collection(colOutbox).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: d.Key}, {Key: "leaseUntil", Value: d.LeaseUntil}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "leaseOwner", Value: owner}, {Key: "leaseUntil", Value: until}}}})
	if err != nil {
		return false, wrap(err, "claim outbox entry "+d.Key)
	}
	return res.ModifiedCount == 1, nil
}

// AckOutbox implements [agentsmcp.OutboxService].
func (db *DB) AckOutbox(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := db.db.Collection(colOutbox).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}})
	if err != nil {
		return wrap(err, "ack outbox")
	}
	return nil
}

// RetryOutbox implements [agentsmcp.OutboxService].
func (db *DB) RetryOutbox(ctx context.Context, key, lastError string, next time.Time) error {
	defer db.lockKey(colOutbox + "\x00" + key)()
	res, err := db.db.Collection(colOutbox).UpdateOne(ctx, bson.D{{Key: "_id", Value: key}}, bson.D{
		{Key: "$inc", Value: bson.D{{Key: "attempts", Value: int64(1)}}},
		{Key: "$set", Value: bson.D{
			{Key: "lastError", Value: storedform.OutboxError(lastError)},
			{Key: "nextAttemptAt", Value: ms(next)},
			{Key: "leaseOwner", Value: ""},
			{Key: "leaseUntil", Value: unleased},
		}},
	})
	if err != nil {
		return wrap(err, "retry outbox entry "+key)
	}
	if res.MatchedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "outbox entry %q not found", key)
	}
	return nil
}

// OutboxBacklog implements [agentsmcp.OutboxService]: a count and the
// oldest entry by the createdAt index.
func (db *DB) OutboxBacklog(ctx context.Context) (int64, time.Time, error) {
	col := db.db.Collection(colOutbox)
	n, err := col.CountDocuments(ctx, bson.D{})
	if err != nil {
		return 0, time.Time{}, wrap(err, "outbox backlog")
	}
	if n == 0 {
		return 0, time.Time{}, nil
	}
	var oldest outboxDoc
	err = col.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "createdAt", Value: 1}})).Decode(&oldest)
	if err == mongo.ErrNoDocuments { // drained meanwhile
		return 0, time.Time{}, nil
	} else if err != nil {
		return 0, time.Time{}, wrap(err, "outbox backlog")
	}
	return n, oldest.CreatedAt.UTC(), nil
}

// documentCollections maps the vector namespaces to their collections.
var documentCollections = map[string]string{
	agentsmcp.NamespaceLearnings: colLearnings,
	agentsmcp.NamespaceInsights:  colInsights,
	agentsmcp.NamespacePatterns:  colPatterns,
}

// ListDocumentIDs implements [agentsmcp.OutboxService] with a range read
// of the _id index, projected to _id.
func (db *DB) ListDocumentIDs(ctx context.Context, namespace, after string, limit int) ([]string, error) {
	col, ok := documentCollections[namespace]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "no documents are indexed in namespace %q", namespace)
	}
	cur, err := db.db.Collection(col).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(max(limit, 1))).
			SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list "+namespace+" ids")
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list "+namespace+" ids")
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}
