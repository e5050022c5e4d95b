package mongo

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Schema version 10 gives the insights and tasks stored before it their
// size (setMissingBytes), so that the quotas count them; it is idempotent.
func TestMigrationGivesOldDocumentsTheirBytes(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	now := time.Now().UTC()
	if _, err := db.db.Collection(colInsights).InsertOne(ctx, bson.D{
		{Key: "_id", Value: "ins_old"}, {Key: "text", Value: "twelve bytes"}, {Key: "type", Value: "observation"},
		{Key: "appliesTo", Value: bson.A{"ab", "c"}}, {Key: "confidence", Value: 0.5}, {Key: "evidence", Value: bson.A{"tsk_1"}},
		{Key: "source", Value: "src"}, {Key: "principal", Value: "key:alice"}, {Key: "createdAt", Value: now},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.Collection(colTasks).InsertOne(ctx, bson.D{
		{Key: "_id", Value: "tsk_old"}, {Key: "planId", Value: ""}, {Key: "principal", Value: "key:alice"}, {Key: "request", Value: "a request"},
		{Key: "status", Value: "running"}, {Key: "inputs", Value: `{"a":1}`}, {Key: "error", Value: "err"},
		{Key: "steps", Value: bson.A{bson.D{{Key: "stepId", Value: "s1"}, {Key: "status", Value: "succeeded"}, {Key: "attempts", Value: int64(1)}, {Key: "output", Value: `"out"`}}}},
		{Key: "history", Value: bson.A{bson.D{{Key: "at", Value: now}, {Key: "type", Value: "x"}}}},
		{Key: "leaseOwner", Value: ""}, {Key: "leaseExpires", Value: freeLease}, {Key: "version", Value: int64(1)},
		{Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now},
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := setMissingBytes(ctx, db.db); err != nil {
			t.Fatal(err)
		}
	}
	// "twelve bytes" + "src" + "ab" + "c" + "tsk_1"
	if u, err := db.InsightUsage(ctx, "key:alice"); err != nil || u.Count != 1 || u.Bytes != 23 {
		t.Errorf("InsightUsage = %+v, %v; want 1 insight of 23 bytes", u, err)
	}
	// "a request" + `{"a":1}` + "err" + "s1" + `"out"` + "x"
	if u, err := db.TaskUsage(ctx, "key:alice"); err != nil || u.Count != 1 || u.Bytes != 9+7+3+2+5+1 {
		t.Errorf("TaskUsage = %+v, %v; want 1 task of 27 bytes", u, err)
	}
}
