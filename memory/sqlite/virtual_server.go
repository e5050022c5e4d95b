package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

var _ agentsmcp.VirtualServerService = (*DB)(nil)

// virtualRevisionPrefix is the id prefix of a VirtualServer's Revision.
const virtualRevisionPrefix = "vrev"

const (
	countVirtualSQL  = "SELECT count(*) FROM virtual_servers"
	insertVirtualSQL = `INSERT INTO virtual_servers (name, definition, revision, created_by, created_at)
		VALUES (?, ?, ?, ?, ?)`
	replaceVirtualSQL = "UPDATE virtual_servers SET definition = ?, revision = ? WHERE name = ?"
	deleteVirtualSQL  = "DELETE FROM virtual_servers WHERE name = ?"
)

const listVirtualSQL = `SELECT name, definition, revision, created_by, created_at FROM virtual_servers ORDER BY name`

func init() {
	writeStatements = append(writeStatements, countVirtualSQL, insertVirtualSQL, replaceVirtualSQL, deleteVirtualSQL)
}

// CreateVirtualServer implements [agentsmcp.VirtualServerService]; the
// count and the insert run in one write transaction, so the bound of
// MaxVirtualServers is exact.
func (db *DB) CreateVirtualServer(ctx context.Context, v *agentsmcp.VirtualServer) error {
	def, err := validate.StoredVirtualServer(v)
	if err != nil {
		return err
	}
	revision, created := agentsmcp.NewID(virtualRevisionPrefix), v.CreatedAt
	if created.IsZero() {
		created = now()
	}
	createdMS := toMillis(created)
	err = db.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := db.txStmt(ctx, tx, countVirtualSQL).QueryRowContext(ctx).Scan(&n); err != nil {
			return fmt.Errorf("count virtual servers: %w", err)
		}
		if n >= agentsmcp.MaxVirtualServers {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: the store already holds the maximum of %d", v.Name, agentsmcp.MaxVirtualServers)
		}
		_, err := db.txStmt(ctx, tx, insertVirtualSQL).ExecContext(ctx, v.Name, def, revision, v.CreatedBy, createdMS)
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "virtual server %q already exists", v.Name)
		} else if err != nil {
			return fmt.Errorf("insert virtual server %q: %w", v.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.Revision, v.CreatedAt = revision, fromMillis(createdMS)
	return nil
}

// ReplaceVirtualServer implements [agentsmcp.VirtualServerService].
func (db *DB) ReplaceVirtualServer(ctx context.Context, v *agentsmcp.VirtualServer) error {
	def, err := validate.StoredVirtualServer(v)
	if err != nil {
		return err
	}
	revision := agentsmcp.NewID(virtualRevisionPrefix)
	err = db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, replaceVirtualSQL).ExecContext(ctx, def, revision, v.Name)
		if err != nil {
			return fmt.Errorf("replace virtual server %q: %w", v.Name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("replace virtual server %q: %w", v.Name, err)
		} else if n == 0 {
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "virtual server %q not found", v.Name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.Revision = revision
	return nil
}

// DeleteVirtualServer implements [agentsmcp.VirtualServerService].
func (db *DB) DeleteVirtualServer(ctx context.Context, name string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, deleteVirtualSQL).ExecContext(ctx, name)
		if err != nil {
			return fmt.Errorf("delete virtual server %q: %w", name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete virtual server %q: %w", name, err)
		} else if n == 0 {
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "virtual server %q not found", name)
		}
		return nil
	})
}

// ListVirtualServers implements [agentsmcp.VirtualServerService]: every
// definition, in byte order of name.
func (db *DB) ListVirtualServers(ctx context.Context) ([]*agentsmcp.VirtualServer, error) {
	rows, err := db.query(ctx, listVirtualSQL)
	if err != nil {
		return nil, fmt.Errorf("list virtual servers: %w", err)
	}
	defer rows.Close()
	items := []*agentsmcp.VirtualServer{}
	for rows.Next() {
		var (
			v              agentsmcp.VirtualServer
			def, name, rev string
			by             string
			created        int64
		)
		if err := rows.Scan(&name, &def, &rev, &by, &created); err != nil {
			return nil, fmt.Errorf("list virtual servers: %w", err)
		}
		if err := json.Unmarshal([]byte(def), &v); err != nil {
			return nil, fmt.Errorf("list virtual servers: decode %q: %w", name, err)
		}
		v.Name, v.Revision, v.CreatedBy, v.CreatedAt = name, rev, by, fromMillis(created)
		items = append(items, &v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list virtual servers: %w", err)
	}
	return items, nil
}
