package mongo

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// This file holds what the Find* methods share: page sizes, cursors and
// the combination of filter clauses. Text filters are in text.go.

// A cursor is the sort key of the last item of a page, "<n>,<id>" in
// URL-safe base64 without padding: n is createdAt in Unix milliseconds for
// insights and learnings, Successes for patterns. It carries no filter;
// the caller sends the same filter again, as the contract requires.

func encodeCursor(n int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(n, 10) + "," + id))
}

// decodeCursor parses a cursor whose id must carry prefix; anything else is
// EINVALID.
func decodeCursor(cursor, prefix string) (int64, string, error) {
	bad := agentsmcp.Errorf(agentsmcp.EINVALID, "cursor %q is not valid", storedform.TruncateUTF8(cursor, 64))
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, "", bad
	}
	ns, id, ok := strings.Cut(string(raw), ",")
	if !ok || !agentsmcp.IDPattern.MatchString(id) || !strings.HasPrefix(id, prefix+"_") {
		return 0, "", bad
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return 0, "", bad
	}
	return n, id, nil
}

// afterTime selects what sorts after the cursor (createdAt, id) in the
// newest-first order: createdAt < c, or createdAt == c and _id < id.
func afterTime(createdAt time.Time, id string) bson.D {
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: createdAt}}}},
		bson.D{{Key: "createdAt", Value: createdAt}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: id}}}},
	}}}
}

// newestFirstPage is what FindInsights and FindLearnings share once their
// own filter clauses are built: it adds the text filter and the cursor,
// reads one more document than a page in newest-first order (so the last
// page comes without a cursor), and returns the page with the next cursor.
// key returns a document's sort key (createdAt, id).
func newestFirstPage[D any](ctx context.Context, coll *mongo.Collection, idPrefix string, clauses []bson.D,
	text, cursor string, limit int, key func(*D) (time.Time, string)) ([]D, string, error) {
	textFilter, none, err := textClauses(text)
	if err != nil {
		return nil, "", err
	}
	if none {
		return nil, "", nil
	}
	clauses = append(clauses, textFilter...)
	if cursor != "" {
		at, id, err := decodeCursor(cursor, idPrefix)
		if err != nil {
			return nil, "", err
		}
		clauses = append(clauses, afterTime(time.UnixMilli(at).UTC(), id))
	}
	limit = storedform.PageSize(limit)
	cur, err := coll.Find(ctx, and(clauses),
		options.Find().SetSort(newestFirst).SetLimit(int64(limit+1)).SetProjection(noWords))
	if err != nil {
		return nil, "", wrap(err, "find "+coll.Name())
	}
	var docs []D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, "", wrap(err, "find "+coll.Name())
	}
	var next string
	if len(docs) > limit {
		docs = docs[:limit]
		at, id := key(&docs[limit-1])
		next = encodeCursor(at.UnixMilli(), id)
	}
	return docs, next, nil
}

// noWords is the projection of every read: the words arrays serve filters
// only, and can be large.
var noWords = bson.D{{Key: "words", Value: 0}}

// newestFirst is the order of insights and learnings.
var newestFirst = bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}

// and combines clauses; an empty list selects everything ($and must not be
// empty).
func and(clauses []bson.D) bson.D {
	switch len(clauses) {
	case 0:
		return bson.D{}
	case 1:
		return clauses[0]
	}
	a := make(bson.A, len(clauses))
	for i, c := range clauses {
		a[i] = c
	}
	return bson.D{{Key: "$and", Value: a}}
}

// orEmpty stores a nil list as an empty array, so a document always has the
// same shape and list fields never hold null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
