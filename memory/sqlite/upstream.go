package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

var _ agentsmcp.UpstreamService = (*DB)(nil)

// upstreamRevisionPrefix is the id prefix of an UpstreamDefinition's
// Revision.
const upstreamRevisionPrefix = "urev"

const (
	countUpstreamsSQL = "SELECT count(*) FROM upstream_definitions"
	insertUpstreamSQL = `INSERT INTO upstream_definitions (name, kind, config, revision, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`
	deleteUpstreamSQL = "DELETE FROM upstream_definitions WHERE kind = ? AND name = ?"
)

const listUpstreamsSQL = `SELECT name, kind, config, revision, created_by, created_at
	FROM upstream_definitions WHERE kind = ? ORDER BY name`

// The upstream statements join those prepared at Open (see writeStatements
// in sqlite.go), which every write statement must be.
func init() {
	writeStatements = append(writeStatements, countUpstreamsSQL, insertUpstreamSQL, deleteUpstreamSQL)
}

// CreateUpstreamDefinition implements [agentsmcp.UpstreamService]. The
// count and the insert run in one write transaction, which holds SQLite's
// write lock from its start (BEGIN IMMEDIATE), so the bound of
// MaxUpstreamDefinitions is exact, even across processes sharing the
// file. On success d holds the new Revision and the stored CreatedAt (UTC,
// at millisecond precision).
func (db *DB) CreateUpstreamDefinition(ctx context.Context, d *agentsmcp.UpstreamDefinition) error {
	if d == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition is required")
	}
	if err := validate.UpstreamDefinition(d); err != nil {
		return err
	}
	kind := storedform.UpstreamKind(d)
	revision, created := agentsmcp.NewID(upstreamRevisionPrefix), d.CreatedAt
	if created.IsZero() {
		created = now()
	}
	createdMS := toMillis(created)
	err := db.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := db.txStmt(ctx, tx, countUpstreamsSQL).QueryRowContext(ctx).Scan(&n); err != nil {
			return fmt.Errorf("count upstream definitions: %w", err)
		}
		if n >= agentsmcp.MaxUpstreamDefinitions {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition %q: the store already holds the maximum of %d definitions",
				d.Name, agentsmcp.MaxUpstreamDefinitions)
		}
		_, err := db.txStmt(ctx, tx, insertUpstreamSQL).ExecContext(ctx, d.Name, kind, string(d.Config), revision, d.CreatedBy, createdMS)
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream definition %q already exists", d.Name)
		} else if err != nil {
			// Never the config in a message: it may hold credentials.
			return fmt.Errorf("insert upstream definition %q: %w", d.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.Kind, d.Revision, d.CreatedAt = kind, revision, fromMillis(createdMS)
	return nil
}

// DeleteUpstreamDefinition implements [agentsmcp.UpstreamService].
func (db *DB) DeleteUpstreamDefinition(ctx context.Context, kind, name string) error {
	if kind == "" {
		kind = agentsmcp.UpstreamKindMCP
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, deleteUpstreamSQL).ExecContext(ctx, kind, name)
		if err != nil {
			return fmt.Errorf("delete upstream definition %q: %w", name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete upstream definition %q: %w", name, err)
		} else if n == 0 {
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream definition %q not found", name)
		}
		return nil
	})
}

// ListUpstreamDefinitions implements [agentsmcp.UpstreamService]: every
// definition of kind, in byte order of name, read off the (kind, name)
// index.
func (db *DB) ListUpstreamDefinitions(ctx context.Context, kind string) ([]*agentsmcp.UpstreamDefinition, error) {
	if kind == "" {
		kind = agentsmcp.UpstreamKindMCP
	}
	rows, err := db.query(ctx, listUpstreamsSQL, kind)
	if err != nil {
		return nil, fmt.Errorf("list upstream definitions: %w", err)
	}
	defer rows.Close()
	items := []*agentsmcp.UpstreamDefinition{}
	for rows.Next() {
		var (
			d       agentsmcp.UpstreamDefinition
			config  string
			created int64
		)
		if err := rows.Scan(&d.Name, &d.Kind, &config, &d.Revision, &d.CreatedBy, &created); err != nil {
			return nil, fmt.Errorf("list upstream definitions: %w", err)
		}
		d.Config, d.CreatedAt = json.RawMessage(config), fromMillis(created)
		items = append(items, &d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list upstream definitions: %w", err)
	}
	return items, nil
}
