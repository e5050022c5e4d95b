package mongo

import (
	"context"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var (
	_ agentsmcp.UsageService  = (*DB)(nil)
	_ agentsmcp.InsightPruner = (*DB)(nil)
)

// bytesPipeline sums the bytes of principal's documents with $match and
// $group's $sum, which FerretDB implements as MongoDB does; on MongoDB the
// match reads the principal_createdAt_id index. The count is a query of
// its own: FerretDB v1.24 feeds the documents to the first accumulator of
// a $group only, and the others see none (a second $sum gives 0).
func bytesPipeline(principal string) bson.A {
	return bson.A{
		bson.D{{Key: "$match", Value: bson.D{{Key: "principal", Value: principal}}}},
		bson.D{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: nil},
			{Key: "bytes", Value: bson.D{{Key: "$sum", Value: "$bytes"}}},
		}}},
	}
}

// InsightUsage implements [agentsmcp.UsageService].
func (db *DB) InsightUsage(ctx context.Context, principal string) (agentsmcp.Usage, error) {
	return db.usage(ctx, colInsights, agentsmcp.MemoryOwner(principal))
}

// TaskUsage implements [agentsmcp.UsageService].
func (db *DB) TaskUsage(ctx context.Context, principal string) (agentsmcp.Usage, error) {
	return db.usage(ctx, colTasks, principal)
}

func (db *DB) usage(ctx context.Context, col, principal string) (agentsmcp.Usage, error) {
	n, err := db.db.Collection(col).CountDocuments(ctx, bson.D{{Key: "principal", Value: principal}})
	if err != nil {
		return agentsmcp.Usage{}, wrap(err, "usage of "+col)
	}
	if n == 0 {
		return agentsmcp.Usage{}, nil
	}
	cur, err := db.db.Collection(col).Aggregate(ctx, bytesPipeline(principal))
	if err != nil {
		return agentsmcp.Usage{}, wrap(err, "usage of "+col)
	}
	var groups []struct {
		Bytes int64 `bson:"bytes"`
	}
	if err := cur.All(ctx, &groups); err != nil {
		return agentsmcp.Usage{}, wrap(err, "usage of "+col)
	}
	u := agentsmcp.Usage{Count: n}
	if len(groups) > 0 {
		u.Bytes = groups[0].Bytes
	}
	return u, nil
}

// DeleteInsightsCreatedBefore implements [agentsmcp.InsightPruner]: it
// reads the ids of one batch through the createdAt_id index, deletes
// them with the same filter repeated, and then queues the removal of their
// vectors, as DeleteInsight does (a crash in between leaves a vector
// whose document is gone, which readers skip).
func (db *DB) DeleteInsightsCreatedBefore(ctx context.Context, createdBefore time.Time, limit int) (int64, error) {
	filter := bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: ceilMs(createdBefore)}}}}
	cur, err := db.db.Collection(colInsights).Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(storedform.PageSize(limit))).
		SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, wrap(err, "delete old insights")
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return 0, wrap(err, "delete old insights")
	}
	if len(docs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(docs))
	in := make(bson.A, len(docs))
	for i, d := range docs {
		ids[i], in[i] = d.ID, d.ID
	}
	res, err := db.db.Collection(colInsights).DeleteMany(ctx, append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$in", Value: in}}}))
	if err != nil {
		return 0, wrap(err, "delete old insights")
	}
	if err := db.enqueue(ctx, agentsmcp.NamespaceInsights, agentsmcp.OutboxDelete, ids...); err != nil {
		return res.DeletedCount, err
	}
	return res.DeletedCount, nil
}

// setMissingBytes gives the insights and tasks stored without a bytes
// field theirs. FerretDB has no update pipelines ($strLenBytes), so each
// document is read and updated on the condition that it still has none.
func setMissingBytes(ctx context.Context, db *mongo.Database) error {
	noBytes := bson.D{{Key: "bytes", Value: bson.D{{Key: "$exists", Value: false}}}}
	each := func(col string, size func(cur *mongo.Cursor) (id string, bytes int64, err error)) error {
		cur, err := db.Collection(col).Find(ctx, noBytes)
		if err != nil {
			return fmt.Errorf("read %s: %w", col, err)
		}
		defer cur.Close(ctx)
		for cur.Next(ctx) {
			id, n, err := size(cur)
			if err != nil {
				return fmt.Errorf("read %s: %w", col, err)
			}
			_, err = db.Collection(col).UpdateOne(ctx, append(bson.D{{Key: "_id", Value: id}}, noBytes...),
				bson.D{{Key: "$set", Value: bson.D{{Key: "bytes", Value: n}}}})
			if err != nil {
				return fmt.Errorf("set the bytes of %s %s: %w", col, id, err)
			}
		}
		return cur.Err()
	}
	err := each(colInsights, func(cur *mongo.Cursor) (string, int64, error) {
		var d insightDoc
		err := cur.Decode(&d)
		return d.ID, storedform.InsightBytes(d.insight()), err
	})
	if err != nil {
		return err
	}
	return each(colTasks, func(cur *mongo.Cursor) (string, int64, error) {
		var d taskDoc
		err := cur.Decode(&d)
		return d.ID, storedform.TaskBytes(d.task()), err
	})
}
