package mongo

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// catalogDoc is the stored form of a CatalogTool. Schemas are strings
// holding the caller's JSON bytes (verbatim, and free of the key rules of
// BSON); the embedding is binary, little-endian float32s, four bytes a
// dimension instead of an array of doubles, which FerretDB reads slowly.
// Gen marks the ReplaceCatalogSource call that wrote the document.
type catalogDoc struct {
	Name         string    `bson:"_id"`
	Source       string    `bson:"source"`
	Title        string    `bson:"title"`
	Description  string    `bson:"description"`
	InputSchema  string    `bson:"inputSchema"`
	OutputSchema string    `bson:"outputSchema"`
	Destructive  bool      `bson:"destructive"`
	ReadOnly     bool      `bson:"readOnly"`
	Hash         string    `bson:"hash"`
	EmbedderID   string    `bson:"embedderId"`
	Embedding    []byte    `bson:"embedding"`
	UpdatedAt    time.Time `bson:"updatedAt"`
	Gen          string    `bson:"gen"`
}

func (d *catalogDoc) tool() (*agentsmcp.CatalogTool, error) {
	if len(d.Embedding)%4 != 0 {
		return nil, fmt.Errorf("mongodb: catalog tool %s: embedding of %d bytes is not float32s", d.Name, len(d.Embedding))
	}
	var emb []float32
	if len(d.Embedding) > 0 {
		emb = make([]float32, len(d.Embedding)/4)
		for i := range emb {
			emb[i] = math.Float32frombits(binary.LittleEndian.Uint32(d.Embedding[4*i:]))
		}
	}
	return &agentsmcp.CatalogTool{
		Name:         d.Name,
		Source:       d.Source,
		Title:        d.Title,
		Description:  d.Description,
		InputSchema:  rawOrNil(d.InputSchema),
		OutputSchema: rawOrNil(d.OutputSchema),
		Destructive:  d.Destructive,
		ReadOnly:     d.ReadOnly,
		Hash:         d.Hash,
		EmbedderID:   d.EmbedderID,
		Embedding:    emb,
		UpdatedAt:    d.UpdatedAt.UTC(),
	}, nil
}

// ReplaceCatalogSource makes tools the whole set of source, in two steps
// without a transaction: every tool is upserted by name (taking a name
// over from another source) with a new generation mark, then the tools of
// source without that mark are deleted. A reader in between sees the new
// set plus the stale tools, never a missing one; a crash in between leaves
// the stale tools until the next replace. Two concurrent replaces of one
// source may leave a mix of both; the next replace repairs it. EINVALID
// as [agentsmcp.ValidateCatalogSource] says; nothing is written then.
func (db *DB) ReplaceCatalogSource(ctx context.Context, source string, tools []*agentsmcp.CatalogTool) error {
	if err := agentsmcp.ValidateCatalogSource(source, tools); err != nil {
		return err
	}
	gen := agentsmcp.NewID("gen")
	stamp := db.nowMs()
	docs := make([]catalogDoc, len(tools))
	models := make([]mongo.WriteModel, len(tools))
	for i, t := range tools {
		emb := make([]byte, 0, 4*len(t.Embedding))
		for _, x := range t.Embedding {
			emb = binary.LittleEndian.AppendUint32(emb, math.Float32bits(x))
		}
		docs[i] = catalogDoc{
			Name: t.Name, Source: source, Title: t.Title, Description: t.Description,
			InputSchema: string(t.InputSchema), OutputSchema: string(t.OutputSchema),
			Destructive: t.Destructive, ReadOnly: t.ReadOnly, Hash: t.Hash, EmbedderID: t.EmbedderID,
			Embedding: emb, UpdatedAt: ms(t.UpdatedAt), Gen: gen,
		}
		if t.UpdatedAt.IsZero() {
			docs[i].UpdatedAt = stamp
		}
		models[i] = mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: t.Name}}).
			SetReplacement(&docs[i]).SetUpsert(true)
	}
	col := db.db.Collection(colCatalog)
	if len(models) > 0 {
		err := upsertRetry(func() error {
			_, err := col.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
			return err
		})
		if err != nil {
			return wrap(err, "replace catalog source "+source)
		}
	}
	_, err := col.DeleteMany(ctx, bson.D{{Key: "source", Value: source}, {Key: "gen", Value: bson.D{{Key: "$ne", Value: gen}}}})
	if err != nil {
		return wrap(err, "replace catalog source "+source)
	}
	for i, t := range tools {
		t.Source, t.UpdatedAt = source, docs[i].UpdatedAt
	}
	return nil
}

// FindCatalogTool returns ENOTFOUND for an unknown name.
func (db *DB) FindCatalogTool(ctx context.Context, name string) (*agentsmcp.CatalogTool, error) {
	var d catalogDoc
	if err := db.db.Collection(colCatalog).FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&d); err != nil {
		return nil, wrap(err, "catalog tool "+name)
	}
	return d.tool()
}

// byName is the order of the catalog.
var byName = bson.D{{Key: "_id", Value: 1}}

// FindCatalogTools lists the tools matching f by name, ascending; the
// cursor holds the last name of the page. EINVALID for a cursor that does
// not parse.
func (db *DB) FindCatalogTools(ctx context.Context, f agentsmcp.CatalogFilter) ([]*agentsmcp.CatalogTool, string, error) {
	var clauses []bson.D
	if f.Source != "" {
		clauses = append(clauses, bson.D{{Key: "source", Value: f.Source}})
	}
	if f.Cursor != "" {
		name, err := decodeNameCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		clauses = append(clauses, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: name}}}})
	}
	limit := agentsmcp.PageSize(f.Limit)
	cur, err := db.db.Collection(colCatalog).Find(ctx, and(clauses), options.Find().SetSort(byName).SetLimit(int64(limit+1)))
	if err != nil {
		return nil, "", wrap(err, "find catalog tools")
	}
	var docs []catalogDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, "", wrap(err, "find catalog tools")
	}
	var next string
	if len(docs) > limit {
		docs = docs[:limit]
		next = encodeNameCursor(docs[limit-1].Name)
	}
	items := make([]*agentsmcp.CatalogTool, len(docs))
	for i := range docs {
		if items[i], err = docs[i].tool(); err != nil {
			return nil, "", err
		}
	}
	return items, next, nil
}

// A catalog cursor is "name:" and the last name of a page, in URL-safe
// base64 without padding.
const nameCursorPrefix = "name:"

func encodeNameCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(nameCursorPrefix + name))
}

func decodeNameCursor(cursor string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	name, ok := strings.CutPrefix(string(raw), nameCursorPrefix)
	if err != nil || !ok || !agentsmcp.ToolNamePattern.MatchString(name) {
		return "", agentsmcp.Errorf(agentsmcp.EINVALID, "cursor %q is not valid", agentsmcp.TruncateUTF8(cursor, 64))
	}
	return name, nil
}
