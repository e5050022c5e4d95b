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

// insightDoc is the stored form of an Insight, less its words array (see
// text.go), which is written on insert and never read back.
type insightDoc struct {
	ID         string    `bson:"_id"`
	Text       string    `bson:"text"`
	Type       string    `bson:"type"`
	AppliesTo  []string  `bson:"appliesTo"`
	Confidence float64   `bson:"confidence"`
	Evidence   []string  `bson:"evidence"`
	Source     string    `bson:"source,omitempty"`
	Principal  string    `bson:"principal"`
	CreatedAt  time.Time `bson:"createdAt"`
	// Bytes is the insight's StoredBytes, for the quotas (usage.go).
	Bytes int64 `bson:"bytes"`
}

func (d *insightDoc) insight() *agentsmcp.Insight {
	return &agentsmcp.Insight{
		ID:         d.ID,
		Text:       d.Text,
		Type:       agentsmcp.InsightType(d.Type),
		AppliesTo:  d.AppliesTo,
		Confidence: d.Confidence,
		Evidence:   d.Evidence,
		Source:     d.Source,
		Principal:  agentsmcp.MemoryOwner(d.Principal),
		CreatedAt:  d.CreatedAt.UTC(),
	}
}

// CreateInsight validates in, assigns ID and CreatedAt when empty, and
// inserts it; on success in holds the stored ID, Principal and CreatedAt (UTC,
// millisecond precision). EINVALID for a broken invariant, ECONFLICT for a
// taken ID.
func (db *DB) CreateInsight(ctx context.Context, in *agentsmcp.Insight) error {
	if err := validate.Insight(in); err != nil {
		return err
	}
	d := insightDoc{
		ID:         in.ID,
		Text:       in.Text,
		Type:       string(in.Type),
		AppliesTo:  orEmpty(in.AppliesTo),
		Confidence: in.Confidence,
		Evidence:   orEmpty(in.Evidence),
		Source:     in.Source,
		Principal:  agentsmcp.MemoryOwner(in.Principal),
		CreatedAt:  ms(in.CreatedAt),
		Bytes:      storedform.InsightBytes(in),
	}
	if d.ID == "" {
		d.ID = agentsmcp.NewID(agentsmcp.InsightIDPrefix)
	}
	if in.CreatedAt.IsZero() {
		d.CreatedAt = db.nowMs()
	}
	stored := struct {
		Doc   insightDoc `bson:",inline"`
		Words []string   `bson:"words"`
	}{d, words(d.Text)}
	if err := db.enqueue(ctx, agentsmcp.NamespaceInsights, agentsmcp.OutboxUpsert, d.ID); err != nil {
		return err
	}
	if _, err := db.db.Collection(colInsights).InsertOne(ctx, &stored); err != nil {
		return wrap(err, "insight "+d.ID)
	}
	in.ID, in.Principal, in.CreatedAt = d.ID, d.Principal, d.CreatedAt
	return nil
}

// FindInsightByID returns ENOTFOUND for an unknown id.
func (db *DB) FindInsightByID(ctx context.Context, id string) (*agentsmcp.Insight, error) {
	var d insightDoc
	if err := db.db.Collection(colInsights).FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(noWords)).Decode(&d); err != nil {
		return nil, wrap(err, "insight "+id)
	}
	return d.insight(), nil
}

// FindInsights lists insights matching f, newest first (ties by id,
// highest first). EINVALID for a cursor that does not parse.
func (db *DB) FindInsights(ctx context.Context, f agentsmcp.InsightFilter) ([]*agentsmcp.Insight, string, error) {
	var clauses []bson.D
	if f.Type != "" {
		// An unknown type selects nothing, like any other value no insight
		// has.
		clauses = append(clauses, bson.D{{Key: "type", Value: string(f.Type)}})
	}
	if f.AppliesTo != "" {
		// Equality on an array field matches any one entry.
		clauses = append(clauses, bson.D{{Key: "appliesTo", Value: f.AppliesTo}})
	}
	if f.Principal != "" {
		clauses = append(clauses, bson.D{{Key: "principal", Value: f.Principal}})
	}
	docs, next, err := newestFirstPage(ctx, db.db.Collection(colInsights), agentsmcp.InsightIDPrefix, clauses, f.Text, f.Cursor, f.Limit,
		func(d *insightDoc) (time.Time, string) { return d.CreatedAt, d.ID })
	if err != nil {
		return nil, "", err
	}
	items := make([]*agentsmcp.Insight, len(docs))
	for i := range docs {
		items[i] = docs[i].insight()
	}
	return items, next, nil
}

// DeleteInsight returns ENOTFOUND for an unknown id.
func (db *DB) DeleteInsight(ctx context.Context, id string) error {
	res, err := db.db.Collection(colInsights).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return wrap(err, "delete insight "+id)
	}
	if res.DeletedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "insight %s: not found", id)
	}
	// After the delete: a crash in between leaves a vector whose document
	// is gone, which readers skip, never a document without its vector.
	return db.enqueue(ctx, agentsmcp.NamespaceInsights, agentsmcp.OutboxDelete, id)
}
