package mongo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var _ agentsmcp.UpstreamService = (*DB)(nil)

// colUpstreams holds one document per [agentsmcp.UpstreamDefinition] of
// either kind, _id = its Name, so that a name belongs to one provider of
// either kind. It needs no index but _id's, which serves the uniqueness of
// names; the list of one kind filters on kind and sorts by _id over at
// most MaxUpstreamDefinitions documents.
const colUpstreams = "upstream_definitions"

// upstreamRevisionPrefix is the id prefix of an UpstreamDefinition's
// Revision.
const upstreamRevisionPrefix = "urev"

// upstreamDoc is the stored form of an UpstreamDefinition. Config is
// stored as the JSON text, not as a subdocument, so that it comes back
// byte for byte (key order, spacing, escapes, number forms).
type upstreamDoc struct {
	Name      string    `bson:"_id"`
	Kind      string    `bson:"kind"`
	Config    string    `bson:"config"`
	Revision  string    `bson:"revision"`
	CreatedBy string    `bson:"createdBy"`
	CreatedAt time.Time `bson:"createdAt"`
}

func (d *upstreamDoc) definition() *agentsmcp.UpstreamDefinition {
	return &agentsmcp.UpstreamDefinition{
		Name:      d.Name,
		Kind:      d.Kind,
		Config:    json.RawMessage(d.Config),
		Revision:  d.Revision,
		CreatedBy: d.CreatedBy,
		CreatedAt: d.CreatedAt.UTC(),
	}
}

// CreateUpstreamDefinition implements [agentsmcp.UpstreamService]: it
// validates d, counts the stored definitions, and inserts d with a new
// Revision; on success d holds that Revision and the stored CreatedAt (UTC,
// millisecond precision). A taken name is a duplicate _id: ECONFLICT.
//
// The bound of MaxUpstreamDefinitions is best effort: the count and the
// insert are two operations (no transactions on FerretDB), so creates
// racing on several replicas may together pass it by a few. That is
// enough for its purpose, which is to stop the pool from growing without
// end.
func (db *DB) CreateUpstreamDefinition(ctx context.Context, d *agentsmcp.UpstreamDefinition) error {
	if d == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition is required")
	}
	if err := validate.UpstreamDefinition(d); err != nil {
		return err
	}
	col := db.db.Collection(colUpstreams)
	n, err := col.CountDocuments(ctx, bson.D{}, options.Count().SetLimit(agentsmcp.MaxUpstreamDefinitions))
	if err != nil {
		return wrap(err, "count upstream definitions")
	}
	if n >= agentsmcp.MaxUpstreamDefinitions {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition %q: the store already holds the maximum of %d definitions",
			d.Name, agentsmcp.MaxUpstreamDefinitions)
	}
	doc := upstreamDoc{
		Name:      d.Name,
		Kind:      storedform.UpstreamKind(d),
		Config:    string(d.Config),
		Revision:  agentsmcp.NewID(upstreamRevisionPrefix),
		CreatedBy: d.CreatedBy,
		CreatedAt: ms(d.CreatedAt),
	}
	if d.CreatedAt.IsZero() {
		doc.CreatedAt = db.nowMs()
	}
	if _, err := col.InsertOne(ctx, &doc); err != nil {
		// Never the config in a message: it may hold credentials.
		return wrap(err, fmt.Sprintf("upstream definition %q", d.Name))
	}
	d.Kind, d.Revision, d.CreatedAt = doc.Kind, doc.Revision, doc.CreatedAt
	return nil
}

// DeleteUpstreamDefinition implements [agentsmcp.UpstreamService].
func (db *DB) DeleteUpstreamDefinition(ctx context.Context, kind, name string) error {
	if kind == "" {
		kind = agentsmcp.UpstreamKindMCP
	}
	res, err := db.db.Collection(colUpstreams).DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "kind", Value: kind}})
	if err != nil {
		return wrap(err, fmt.Sprintf("delete upstream definition %q", name))
	}
	if res.DeletedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream definition %q not found", name)
	}
	return nil
}

// ListUpstreamDefinitions implements [agentsmcp.UpstreamService]: every
// definition of kind, sorted by _id (the name, in the server's binary
// string order). There are at most about MaxUpstreamDefinitions of them,
// so one unpaged find reads them all.
func (db *DB) ListUpstreamDefinitions(ctx context.Context, kind string) ([]*agentsmcp.UpstreamDefinition, error) {
	if kind == "" {
		kind = agentsmcp.UpstreamKindMCP
	}
	cur, err := db.db.Collection(colUpstreams).Find(ctx, bson.D{{Key: "kind", Value: kind}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list upstream definitions")
	}
	var docs []upstreamDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list upstream definitions")
	}
	items := make([]*agentsmcp.UpstreamDefinition, len(docs))
	for i := range docs {
		items[i] = docs[i].definition()
	}
	return items, nil
}
