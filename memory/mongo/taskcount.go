package mongo

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// countTasksByStatusPipeline groups the tasks by status with $sum, the one
// $group accumulator FerretDB implements as MongoDB does.
var countTasksByStatusPipeline = bson.A{
	bson.D{{Key: "$group", Value: bson.D{
		{Key: "_id", Value: "$status"},
		{Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}},
	}}},
}

// CountTasksByStatus counts the stored tasks by status, in one aggregation.
// Every status of [agentsmcp.TaskStatuses] is in the map, with 0 when no
// task has it, so that a gauge fed from it drops to zero rather than keep
// its last value. It reads the whole tasks collection, so it is meant for
// metrics that cache it, not for every request.
func (db *DB) CountTasksByStatus(ctx context.Context) (map[agentsmcp.TaskStatus]int64, error) {
	cur, err := db.db.Collection(colTasks).Aggregate(ctx, countTasksByStatusPipeline)
	if err != nil {
		return nil, wrap(err, "count tasks by status")
	}
	var groups []struct {
		Status string `bson:"_id"`
		N      int64  `bson:"n"`
	}
	if err := cur.All(ctx, &groups); err != nil {
		return nil, wrap(err, "count tasks by status")
	}
	counts := make(map[agentsmcp.TaskStatus]int64, len(agentsmcp.TaskStatuses))
	for _, s := range agentsmcp.TaskStatuses {
		counts[s] = 0
	}
	for _, g := range groups {
		counts[agentsmcp.TaskStatus(g.Status)] = g.N
	}
	return counts, nil
}
