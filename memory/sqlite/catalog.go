package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

const catalogColumns = `c.name, c.source, c.title, c.description, c.input_schema, c.output_schema,
	c.destructive, c.read_only, c.hash, c.embedder_id, c.embedding, c.updated_at`

const (
	deleteCatalogSourceSQL = "DELETE FROM catalog_tools WHERE source = ?"
	// upsertCatalogToolSQL inserts a tool, or takes its name over from
	// another source.
	upsertCatalogToolSQL = `INSERT INTO catalog_tools
		(name, source, title, description, input_schema, output_schema, destructive, read_only, hash, embedder_id, embedding, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET
			source = excluded.source, title = excluded.title, description = excluded.description,
			input_schema = excluded.input_schema, output_schema = excluded.output_schema,
			destructive = excluded.destructive, read_only = excluded.read_only, hash = excluded.hash,
			embedder_id = excluded.embedder_id, embedding = excluded.embedding, updated_at = excluded.updated_at`
)

const findCatalogToolSQL = "SELECT " + catalogColumns + " FROM catalog_tools c WHERE c.name = ?"

// ReplaceCatalogSource implements [agentsmcp.CatalogService] in one
// transaction: the source's rows are deleted, then the new set is upserted
// (taking over names held by other sources). Readers see the old set or
// the new one, never a mix.
func (db *DB) ReplaceCatalogSource(ctx context.Context, source string, tools []*agentsmcp.CatalogTool) error {
	if err := agentsmcp.ValidateCatalogSource(source, tools); err != nil {
		return err
	}
	stamp := now()
	updated := make([]int64, len(tools))
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := db.txStmt(ctx, tx, deleteCatalogSourceSQL).ExecContext(ctx, source); err != nil {
			return fmt.Errorf("replace catalog source %q: %w", source, err)
		}
		for i, t := range tools {
			updated[i] = toMillis(t.UpdatedAt)
			if t.UpdatedAt.IsZero() {
				updated[i] = toMillis(stamp)
			}
			if _, err := db.txStmt(ctx, tx, upsertCatalogToolSQL).ExecContext(ctx,
				t.Name, source, t.Title, t.Description, string(t.InputSchema), string(t.OutputSchema),
				t.Destructive, t.ReadOnly, t.Hash, t.EmbedderID, encodeEmbedding(t.Embedding), updated[i],
			); err != nil {
				return fmt.Errorf("replace catalog source %q: tool %q: %w", source, t.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, t := range tools {
		t.Source, t.UpdatedAt = source, fromMillis(updated[i])
	}
	return nil
}

// FindCatalogTool implements [agentsmcp.CatalogService].
func (db *DB) FindCatalogTool(ctx context.Context, name string) (*agentsmcp.CatalogTool, error) {
	row, err := db.queryRow(ctx, findCatalogToolSQL, name)
	if err != nil {
		return nil, fmt.Errorf("find catalog tool %q: %w", name, err)
	}
	t, err := scanCatalogTool(row)
	if err != nil {
		return nil, notFound(err, "catalog tool", name)
	}
	return t, nil
}

// FindCatalogTools implements [agentsmcp.CatalogService], reading the
// index (source, name) or the name's own, in order.
func (db *DB) FindCatalogTools(ctx context.Context, f agentsmcp.CatalogFilter) ([]*agentsmcp.CatalogTool, string, error) {
	query, args, err := catalogQuery(f)
	if err != nil {
		return nil, "", err
	}
	size := agentsmcp.PageSize(f.Limit)
	rows, err := db.query(ctx, query, append(args, size+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("find catalog tools: %w", err)
	}
	defer rows.Close()
	items := []*agentsmcp.CatalogTool{}
	for rows.Next() {
		t, err := scanCatalogTool(rows)
		if err != nil {
			return nil, "", fmt.Errorf("find catalog tools: %w", err)
		}
		items = append(items, t)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("find catalog tools: %w", err)
	}
	var next string
	if len(items) > size {
		items = items[:size]
		next = encodeNameCursor(items[size-1].Name)
	}
	return items, next, nil
}

// catalogQuery builds the page query of f, less the LIMIT argument.
func catalogQuery(f agentsmcp.CatalogFilter) (string, []any, error) {
	var (
		where []string
		args  []any
	)
	if f.Source != "" {
		where, args = append(where, "c.source = ?"), append(args, f.Source)
	}
	if f.Cursor != "" {
		name, err := decodeNameCursor(f.Cursor)
		if err != nil {
			return "", nil, err
		}
		where, args = append(where, "c.name > ?"), append(args, name)
	}
	q := "SELECT " + catalogColumns + " FROM catalog_tools c"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " ORDER BY c.name LIMIT ?", args, nil
}

// nameCursorKind marks catalog cursors, which hold the last name of a page
// rather than a number and an id (see cursor.go).
const nameCursorKind = "c:"

func encodeNameCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(nameCursorKind + name))
}

func decodeNameCursor(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	name, ok := strings.CutPrefix(string(b), nameCursorKind)
	if err != nil || !ok || !agentsmcp.ToolNamePattern.MatchString(name) {
		return "", agentsmcp.Errorf(agentsmcp.EINVALID, "cursor %q is not valid for this list", s)
	}
	return name, nil
}

// encodeEmbedding is the stored form of an embedding: little-endian
// float32s, never nil (the column is NOT NULL).
func encodeEmbedding(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func decodeEmbedding(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("embedding of %d bytes is not float32s", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func scanCatalogTool(row scanner) (*agentsmcp.CatalogTool, error) {
	var (
		t                     agentsmcp.CatalogTool
		input, output         string
		embedding             []byte
		updated               int64
		destructive, readOnly bool
	)
	if err := row.Scan(&t.Name, &t.Source, &t.Title, &t.Description, &input, &output,
		&destructive, &readOnly, &t.Hash, &t.EmbedderID, &embedding, &updated); err != nil {
		return nil, err
	}
	var err error
	if t.Embedding, err = decodeEmbedding(embedding); err != nil {
		return nil, err
	}
	t.InputSchema, t.OutputSchema = rawOrNil(input), rawOrNil(output)
	t.Destructive, t.ReadOnly = destructive, readOnly
	t.UpdatedAt = fromMillis(updated)
	return &t, nil
}
