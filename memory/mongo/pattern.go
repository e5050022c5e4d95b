package mongo

import (
	"context"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mostSuccessful is the order of patterns.
var mostSuccessful = bson.D{{Key: "successes", Value: -1}, {Key: "_id", Value: -1}}

// patternDoc is the stored form of a PlanPattern: one document per
// (principal, goal, steps), whose _id is [storedform.PatternID]. Its words array (see text.go) is set on
// insert and never decoded. (Reads leave it out, except findAndModify:
// FerretDB 1.24 does not implement its projection.)
type patternDoc struct {
	ID        string    `bson:"_id"`
	Principal string    `bson:"principal"`
	Goal      string    `bson:"goal"`
	Steps     []string  `bson:"steps"`
	Uses      int64     `bson:"uses"`
	Successes int64     `bson:"successes"`
	LastUsed  time.Time `bson:"lastUsed"`
}

func (d *patternDoc) pattern() *agentsmcp.PlanPattern {
	return &agentsmcp.PlanPattern{
		ID:        d.ID,
		Principal: agentsmcp.MemoryOwner(d.Principal),
		Goal:      d.Goal,
		Steps:     d.Steps,
		Uses:      d.Uses,
		Successes: d.Successes,
		LastUsed:  d.LastUsed.UTC(),
	}
}

// RecordPatternUse adds one use (and one success when success) of
// principal's (goal, steps) pattern, creating it on first use, and returns
// the pattern as it is after this use. It is one atomic findOneAndUpdate
// upsert: $inc on the counters, $setOnInsert of principal, goal, steps and
// words, $max of lastUsed
// (at, or now when zero), so concurrent uses are all counted. EINVALID for
// an empty or overlong goal or too many steps.
func (db *DB) RecordPatternUse(ctx context.Context, principal, goal string, steps []string, success bool, at time.Time) (*agentsmcp.PlanPattern, error) {
	if err := validate.PatternUse(goal, steps); err != nil {
		return nil, err
	}
	if at.IsZero() {
		at = db.nowMs()
	}
	var successes int64
	if success {
		successes = 1
	}
	principal = agentsmcp.MemoryOwner(principal)
	id := storedform.PatternID(principal, goal, steps)
	update := bson.D{
		{Key: "$inc", Value: bson.D{{Key: "uses", Value: int64(1)}, {Key: "successes", Value: successes}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "principal", Value: principal}, {Key: "goal", Value: goal}, {Key: "steps", Value: orEmpty(steps)}, {Key: "words", Value: words(goal)}}},
		{Key: "$max", Value: bson.D{{Key: "lastUsed", Value: ms(at)}}},
	}
	defer db.lockKey(colPatterns + "\x00" + id)()
	// A pattern is indexed once, at its first use: goal and steps never
	// change. The entry goes first (see the OutboxService contract); two
	// first uses at once both enqueue, which is idempotent.
	n, err := db.db.Collection(colPatterns).CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}, options.Count().SetLimit(1))
	if err != nil {
		return nil, wrap(err, "record use of pattern "+id)
	}
	if n == 0 {
		if err := db.enqueue(ctx, agentsmcp.NamespacePatterns, agentsmcp.OutboxUpsert, id); err != nil {
			return nil, err
		}
	}
	var d patternDoc
	err = upsertRetry(func() error {
		return db.db.Collection(colPatterns).FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}}, update,
			options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&d)
	})
	if err != nil {
		return nil, wrap(err, "record use of pattern "+id)
	}
	return d.pattern(), nil
}

// FindPatternByID returns ENOTFOUND for an unknown id.
func (db *DB) FindPatternByID(ctx context.Context, id string) (*agentsmcp.PlanPattern, error) {
	var d patternDoc
	if err := db.db.Collection(colPatterns).FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(noWords)).Decode(&d); err != nil {
		return nil, wrap(err, "pattern "+id)
	}
	return d.pattern(), nil
}

// FindPatterns lists patterns whose goal holds every word of f.Text, most
// successful first (ties by id, highest first). The cursor holds the
// (successes, id) of the last item; a pattern whose successes change
// between two pages may be seen twice or not at all. EINVALID for a cursor
// that does not parse.
func (db *DB) FindPatterns(ctx context.Context, f agentsmcp.PatternFilter) ([]*agentsmcp.PlanPattern, string, error) {
	clauses, none, err := textClauses(f.Text)
	if err != nil || none {
		return nil, "", err
	}
	if f.Principal != "" {
		clauses = append(clauses, bson.D{{Key: "principal", Value: f.Principal}})
	}
	if f.Cursor != "" {
		n, id, err := decodeCursor(f.Cursor, agentsmcp.PatternIDPrefix)
		if err != nil {
			return nil, "", err
		}
		clauses = append(clauses, bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "successes", Value: bson.D{{Key: "$lt", Value: n}}}},
			bson.D{{Key: "successes", Value: n}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: id}}}},
		}}})
	}
	limit := storedform.PageSize(f.Limit)
	cur, err := db.db.Collection(colPatterns).Find(ctx, and(clauses),
		options.Find().SetSort(mostSuccessful).SetLimit(int64(limit+1)).SetProjection(noWords))
	if err != nil {
		return nil, "", wrap(err, "find patterns")
	}
	var docs []patternDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, "", wrap(err, "find patterns")
	}
	var next string
	if len(docs) > limit {
		docs = docs[:limit]
		last := docs[limit-1]
		next = encodeCursor(last.Successes, last.ID)
	}
	items := make([]*agentsmcp.PlanPattern, len(docs))
	for i := range docs {
		items[i] = docs[i].pattern()
	}
	return items, next, nil
}
