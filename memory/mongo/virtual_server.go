package mongo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

var _ agentsmcp.VirtualServerService = (*DB)(nil)

// colVirtualServers holds one document per [agentsmcp.VirtualServer], _id =
// its Name. It needs no index but _id's; the list sorts by _id over at most
// MaxVirtualServers documents.
const colVirtualServers = "virtual_servers"

// virtualRevisionPrefix is the id prefix of a VirtualServer's Revision.
const virtualRevisionPrefix = "vrev"

// virtualDoc is the stored form of a VirtualServer: its definition as JSON
// text, as the SQLite store keeps it.
type virtualDoc struct {
	Name       string    `bson:"_id"`
	Definition string    `bson:"definition"`
	Revision   string    `bson:"revision"`
	CreatedBy  string    `bson:"createdBy"`
	CreatedAt  time.Time `bson:"createdAt"`
}

// CreateVirtualServer implements [agentsmcp.VirtualServerService]. As for
// upstream definitions, the bound of MaxVirtualServers is best effort:
// count and insert are two operations (no transactions on FerretDB).
func (db *DB) CreateVirtualServer(ctx context.Context, v *agentsmcp.VirtualServer) error {
	def, err := validate.StoredVirtualServer(v)
	if err != nil {
		return err
	}
	col := db.db.Collection(colVirtualServers)
	n, err := col.CountDocuments(ctx, bson.D{}, options.Count().SetLimit(agentsmcp.MaxVirtualServers))
	if err != nil {
		return wrap(err, "count virtual servers")
	}
	if n >= agentsmcp.MaxVirtualServers {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: the store already holds the maximum of %d", v.Name, agentsmcp.MaxVirtualServers)
	}
	doc := virtualDoc{Name: v.Name, Definition: def, Revision: agentsmcp.NewID(virtualRevisionPrefix), CreatedBy: v.CreatedBy, CreatedAt: ms(v.CreatedAt)}
	if v.CreatedAt.IsZero() {
		doc.CreatedAt = db.nowMs()
	}
	if _, err := col.InsertOne(ctx, &doc); err != nil {
		return wrap(err, fmt.Sprintf("virtual server %q", v.Name))
	}
	v.Revision, v.CreatedAt = doc.Revision, doc.CreatedAt
	return nil
}

// ReplaceVirtualServer implements [agentsmcp.VirtualServerService].
func (db *DB) ReplaceVirtualServer(ctx context.Context, v *agentsmcp.VirtualServer) error {
	def, err := validate.StoredVirtualServer(v)
	if err != nil {
		return err
	}
	revision := agentsmcp.NewID(virtualRevisionPrefix)
	res, err := db.db.Collection(colVirtualServers).UpdateOne(ctx, bson.D{{Key: "_id", Value: v.Name}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "definition", Value: def}, {Key: "revision", Value: revision}}}})
	if err != nil {
		return wrap(err, fmt.Sprintf("replace virtual server %q", v.Name))
	}
	if res.MatchedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "virtual server %q not found", v.Name)
	}
	v.Revision = revision
	return nil
}

// DeleteVirtualServer implements [agentsmcp.VirtualServerService].
func (db *DB) DeleteVirtualServer(ctx context.Context, name string) error {
	res, err := db.db.Collection(colVirtualServers).DeleteOne(ctx, bson.D{{Key: "_id", Value: name}})
	if err != nil {
		return wrap(err, fmt.Sprintf("delete virtual server %q", name))
	}
	if res.DeletedCount == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "virtual server %q not found", name)
	}
	return nil
}

// ListVirtualServers implements [agentsmcp.VirtualServerService]: every
// definition, sorted by _id.
func (db *DB) ListVirtualServers(ctx context.Context) ([]*agentsmcp.VirtualServer, error) {
	cur, err := db.db.Collection(colVirtualServers).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, wrap(err, "list virtual servers")
	}
	var docs []virtualDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap(err, "list virtual servers")
	}
	items := make([]*agentsmcp.VirtualServer, 0, len(docs))
	for _, d := range docs {
		var v agentsmcp.VirtualServer
		if err := json.Unmarshal([]byte(d.Definition), &v); err != nil {
			return nil, fmt.Errorf("list virtual servers: decode %q: %w", d.Name, err)
		}
		v.Name, v.Revision, v.CreatedBy, v.CreatedAt = d.Name, d.Revision, d.CreatedBy, d.CreatedAt.UTC()
		items = append(items, &v)
	}
	return items, nil
}
