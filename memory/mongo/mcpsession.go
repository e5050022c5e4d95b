package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// This file keeps what replicas share of the MCP sessions of the HTTP
// transport: the state of each stateful session (an opaque document the
// transport encodes) and the events written on its streams, so that any
// replica serves a session and resumes a stream another replica started.
// Both are looked up by _id alone, so they need no index of their own.

const (
	colMCPSessions = "mcp_sessions"
	colMCPEvents   = "mcp_events"
)

type mcpSessionDoc struct {
	ID      string    `bson:"_id"`
	State   []byte    `bson:"state"`
	Expires time.Time `bson:"expires"`
}

// PutMCPSession stores (or replaces) the state of session id until
// expires.
func (db *DB) PutMCPSession(ctx context.Context, id string, state []byte, expires time.Time) error {
	_, err := db.db.Collection(colMCPSessions).ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}},
		mcpSessionDoc{ID: id, State: state, Expires: expires.UTC()}, options.Replace().SetUpsert(true))
	return wrap(err, "store MCP session")
}

// GetMCPSession returns the state of session id, or nil when none is
// stored or it has expired.
func (db *DB) GetMCPSession(ctx context.Context, id string) ([]byte, error) {
	var doc mcpSessionDoc
	err := db.db.Collection(colMCPSessions).FindOne(ctx, bson.D{
		{Key: "_id", Value: id},
		{Key: "expires", Value: bson.D{{Key: "$gt", Value: time.Now().UTC()}}},
	}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(err, "read MCP session")
	}
	return doc.State, nil
}

// DeleteMCPSession forgets session id and the events of its streams.
func (db *DB) DeleteMCPSession(ctx context.Context, id string) error {
	if _, err := db.db.Collection(colMCPSessions).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return wrap(err, "delete MCP session")
	}
	_, err := db.db.Collection(colMCPEvents).DeleteMany(ctx, bson.D{{Key: "session", Value: id}})
	return wrap(err, "delete MCP session events")
}

// PurgeMCPSessions deletes the sessions and events that expired before
// now.
func (db *DB) PurgeMCPSessions(ctx context.Context, now time.Time) error {
	past := bson.D{{Key: "expires", Value: bson.D{{Key: "$lte", Value: now.UTC()}}}}
	if _, err := db.db.Collection(colMCPSessions).DeleteMany(ctx, past); err != nil {
		return wrap(err, "purge MCP sessions")
	}
	_, err := db.db.Collection(colMCPEvents).DeleteMany(ctx, past)
	return wrap(err, "purge MCP session events")
}

type mcpEventDoc struct {
	ID      string    `bson:"_id"`
	Session string    `bson:"session"`
	Index   int       `bson:"index"`
	Data    []byte    `bson:"data"`
	Expires time.Time `bson:"expires"`
}

// eventKeyPrefix is the _id prefix of the events of one stream; the
// index is zero-padded after it so that _id order is index order.
func eventKeyPrefix(session, stream string) string {
	return fmt.Sprintf("%d:%s%d:%s/", len(session), session, len(stream), stream)
}

// AppendMCPEvent stores event index of a session's stream until expires.
func (db *DB) AppendMCPEvent(ctx context.Context, session, stream string, index int, data []byte, expires time.Time) error {
	doc := mcpEventDoc{
		ID:      fmt.Sprintf("%s%012d", eventKeyPrefix(session, stream), index),
		Session: session, Index: index, Data: data, Expires: expires.UTC(),
	}
	_, err := db.db.Collection(colMCPEvents).ReplaceOne(ctx, bson.D{{Key: "_id", Value: doc.ID}}, doc, options.Replace().SetUpsert(true))
	return wrap(err, "store MCP event")
}

// MCPEventsAfter returns, in order, at most limit unexpired events of a
// session's stream whose index is above after, with their indexes.
func (db *DB) MCPEventsAfter(ctx context.Context, session, stream string, after, limit int) (indexes []int, data [][]byte, err error) {
	prefix := eventKeyPrefix(session, stream)
	cur, err := db.db.Collection(colMCPEvents).Find(ctx, bson.D{
		{Key: "_id", Value: bson.D{
			{Key: "$gt", Value: fmt.Sprintf("%s%012d", prefix, after)},
			{Key: "$lt", Value: prefix + "~"},
		}},
		{Key: "expires", Value: bson.D{{Key: "$gt", Value: time.Now().UTC()}}},
	}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, nil, wrap(err, "read MCP events")
	}
	var docs []mcpEventDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, nil, wrap(err, "read MCP events")
	}
	for _, d := range docs {
		indexes = append(indexes, d.Index)
		data = append(data, d.Data)
	}
	return indexes, data, nil
}
