package mongo

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// colCallCounters holds the counters of the call quotas: {_id: key,
// count, expiresAt}.
const colCallCounters = "call_counters"

// callCounterSweepEvery is how many adds pass between two deletions of
// expired counters (no TTL index: FerretDB has none).
const callCounterSweepEvery = 64

var _ agentsmcp.CallCounterService = (*DB)(nil)

// AddCallCount implements [agentsmcp.CallCounterService] with one upsert
// ($inc, $max). On FerretDB the adds of one counter take turns within this
// process (see [DB.lockKey]); replicas sharing one FerretDB that add to the
// same counter at the same instant may lose a count, which MongoDB never
// does.
func (db *DB) AddCallCount(ctx context.Context, key string, expiresAt time.Time, n int64) (int64, error) {
	col := db.db.Collection(colCallCounters)
	if db.callAdds.Add(1)%callCounterSweepEvery == 0 {
		if _, err := col.DeleteMany(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: time.Now()}}}}); err != nil {
			return 0, wrap(err, "delete expired call counters")
		}
	}
	defer db.lockKey(colCallCounters + "\x00" + key)()
	var doc struct {
		Count int64 `bson:"count"`
	}
	err := col.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: key}},
		bson.D{
			{Key: "$inc", Value: bson.D{{Key: "count", Value: n}}},
			{Key: "$max", Value: bson.D{{Key: "expiresAt", Value: expiresAt.UTC().Truncate(time.Millisecond)}}},
		},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
	if err != nil {
		return 0, wrap(err, "add call count")
	}
	return doc.Count, nil
}
