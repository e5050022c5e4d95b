package mongo

import (
	"context"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// learningDoc is the stored form of a Learning, less its words array (see
// text.go), which is written on insert and never read back.
type learningDoc struct {
	ID         string    `bson:"_id"`
	TaskID     string    `bson:"taskId,omitempty"`
	PlanID     string    `bson:"planId,omitempty"`
	Query      string    `bson:"query"`
	Goal       string    `bson:"goal"`
	Steps      []string  `bson:"steps"`
	Tools      []string  `bson:"tools"`
	Upstreams  []string  `bson:"upstreams"`
	Outcome    string    `bson:"outcome"`
	DurationNs int64     `bson:"durationNs"`
	Errors     []string  `bson:"errors"`
	Retries    int64     `bson:"retries"`
	Principal  string    `bson:"principal"`
	CreatedAt  time.Time `bson:"createdAt"`
}

func (d *learningDoc) learning() *agentsmcp.Learning {
	return &agentsmcp.Learning{
		ID:        d.ID,
		TaskID:    d.TaskID,
		PlanID:    d.PlanID,
		Query:     d.Query,
		Goal:      d.Goal,
		Steps:     d.Steps,
		Tools:     d.Tools,
		Sources:   d.Upstreams,
		Outcome:   agentsmcp.Outcome(d.Outcome),
		Duration:  time.Duration(d.DurationNs),
		Errors:    d.Errors,
		Retries:   int(d.Retries),
		Principal: agentsmcp.MemoryOwner(d.Principal),
		CreatedAt: d.CreatedAt.UTC(),
	}
}

// CreateLearning validates l (learnings are written once, never updated), assigns ID and CreatedAt when empty, and
// inserts it with write concern majority, so it is durable when this
// returns; on success l holds the stored ID, Principal and CreatedAt (UTC, millisecond
// precision). EINVALID for a broken invariant, ECONFLICT for a taken ID.
func (db *DB) CreateLearning(ctx context.Context, l *agentsmcp.Learning) error {
	if err := validate.Learning(l); err != nil {
		return err
	}
	d := learningDoc{
		ID:         l.ID,
		TaskID:     l.TaskID,
		PlanID:     l.PlanID,
		Query:      l.Query,
		Goal:       l.Goal,
		Steps:      orEmpty(l.Steps),
		Tools:      orEmpty(l.Tools),
		Upstreams:  orEmpty(l.Sources),
		Outcome:    string(l.Outcome),
		DurationNs: int64(l.Duration),
		Errors:     orEmpty(l.Errors),
		Retries:    int64(l.Retries),
		Principal:  agentsmcp.MemoryOwner(l.Principal),
		CreatedAt:  ms(l.CreatedAt),
	}
	if d.ID == "" {
		d.ID = agentsmcp.NewID(agentsmcp.LearningIDPrefix)
	}
	if l.CreatedAt.IsZero() {
		d.CreatedAt = db.nowMs()
	}
	stored := struct {
		Doc   learningDoc `bson:",inline"`
		Words []string    `bson:"words"`
	}{d, words(d.Query, d.Goal)}
	if err := db.enqueue(ctx, agentsmcp.NamespaceLearnings, agentsmcp.OutboxUpsert, d.ID); err != nil {
		return err
	}
	if _, err := db.db.Collection(colLearnings).InsertOne(ctx, &stored); err != nil {
		return wrap(err, "learning "+d.ID)
	}
	l.ID, l.Principal, l.CreatedAt = d.ID, d.Principal, d.CreatedAt
	return nil
}

// FindLearningByID returns ENOTFOUND for an unknown id.
func (db *DB) FindLearningByID(ctx context.Context, id string) (*agentsmcp.Learning, error) {
	var d learningDoc
	if err := db.db.Collection(colLearnings).FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(noWords)).Decode(&d); err != nil {
		return nil, wrap(err, "learning "+id)
	}
	return d.learning(), nil
}

// FindLearnings lists learnings matching f, newest first (ties by id,
// highest first). Since is inclusive, Until exclusive. EINVALID for a
// cursor that does not parse.
func (db *DB) FindLearnings(ctx context.Context, f agentsmcp.LearningFilter) ([]*agentsmcp.Learning, string, error) {
	var clauses []bson.D
	if f.Tool != "" {
		clauses = append(clauses, bson.D{{Key: "tools", Value: f.Tool}})
	}
	if f.Source != "" {
		clauses = append(clauses, bson.D{{Key: "upstreams", Value: f.Source}})
	}
	if f.Outcome != "" {
		clauses = append(clauses, bson.D{{Key: "outcome", Value: string(f.Outcome)}})
	}
	if f.Principal != "" {
		clauses = append(clauses, bson.D{{Key: "principal", Value: f.Principal}})
	}
	if !f.Since.IsZero() {
		clauses = append(clauses, bson.D{{Key: "createdAt", Value: bson.D{{Key: "$gte", Value: ceilMs(f.Since)}}}})
	}
	if !f.Until.IsZero() {
		clauses = append(clauses, bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: ceilMs(f.Until)}}}})
	}
	docs, next, err := newestFirstPage(ctx, db.db.Collection(colLearnings), agentsmcp.LearningIDPrefix, clauses, f.Text, f.Cursor, f.Limit,
		func(d *learningDoc) (time.Time, string) { return d.CreatedAt, d.ID })
	if err != nil {
		return nil, "", err
	}
	items := make([]*agentsmcp.Learning, len(docs))
	for i := range docs {
		items[i] = docs[i].learning()
	}
	return items, next, nil
}

// ceilMs rounds a time bound up to the next millisecond when it has a
// sub-millisecond part. Stored times are whole milliseconds, and for those
// t >= b holds exactly when t >= ceil(b), t < b exactly when t < ceil(b).
func ceilMs(t time.Time) time.Time {
	if c := ms(t); !c.Equal(t) {
		return c.Add(time.Millisecond)
	}
	return t.UTC()
}
