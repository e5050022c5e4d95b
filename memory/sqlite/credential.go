package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

var _ agentsmcp.CredentialService = (*DB)(nil)

// credentialIDPrefix is the id prefix of a Credential.
const credentialIDPrefix = "cred"

const (
	insertCredentialSQL = `INSERT INTO credentials (id, integration, principal, kind, settings, sealed, expires_at,
		created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateCredentialSecretSQL = "UPDATE credentials SET sealed = ?, expires_at = ?, updated_at = ? WHERE id = ?"
	deleteCredentialSQL       = "DELETE FROM credentials WHERE id = ?"
	insertOAuthStateSQL       = `INSERT INTO oauth_states (state_key, credential_id, principal, binding, verifier_sealed,
		expires_at) VALUES (?, ?, ?, ?, ?, ?)`
	takeOAuthStateSQL = `DELETE FROM oauth_states WHERE state_key = ?
		RETURNING credential_id, principal, binding, verifier_sealed, expires_at`
	deleteExpiredOAuthStatesSQL = "DELETE FROM oauth_states WHERE expires_at < ?"
)

const credentialColumns = `id, integration, principal, kind, settings, sealed, expires_at, created_by, created_at, updated_at`

const (
	findCredentialSQL     = "SELECT " + credentialColumns + " FROM credentials WHERE integration = ? AND principal = ?"
	findCredentialByIDSQL = "SELECT " + credentialColumns + " FROM credentials WHERE id = ?"
	findCredentialsSQL    = "SELECT " + credentialColumns + ` FROM credentials
		WHERE (? = '' OR integration = ?) AND (? = 0 OR principal = ?) ORDER BY integration, principal`
	findOAuthStateSQL = `SELECT credential_id, principal, binding, verifier_sealed, expires_at FROM oauth_states
		WHERE state_key = ?`
)

func init() {
	writeStatements = append(writeStatements, insertCredentialSQL, updateCredentialSecretSQL, deleteCredentialSQL,
		insertOAuthStateSQL, takeOAuthStateSQL, deleteExpiredOAuthStatesSQL)
}

// CreateCredential implements [agentsmcp.CredentialService].
func (db *DB) CreateCredential(ctx context.Context, c *agentsmcp.Credential) error {
	if err := validate.StoredCredential(c); err != nil {
		return err
	}
	settings, err := json.Marshal(c.Settings)
	if err != nil {
		return fmt.Errorf("credential settings: %w", err)
	}
	id, created := agentsmcp.NewID(credentialIDPrefix), now()
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txStmt(ctx, tx, insertCredentialSQL).ExecContext(ctx, id, c.Integration, c.Principal, c.Kind,
			string(settings), c.Sealed, zeroMillis(c.ExpiresAt), c.CreatedBy, toMillis(created), toMillis(created))
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "a credential for %q and this principal already exists", c.Integration)
		} else if err != nil {
			return fmt.Errorf("insert credential %q: %w", c.Integration, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.ExpiresAt = id, created, created, fromOptMillis(zeroMillis(c.ExpiresAt))
	return nil
}

// zeroMillis is the stored form of an optional time: 0 for none.
func zeroMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return toMillis(t)
}

func fromOptMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return fromMillis(ms)
}

func scanCredential(s scanner) (*agentsmcp.Credential, error) {
	var (
		c                          agentsmcp.Credential
		settings                   string
		expires, created, modified int64
	)
	if err := s.Scan(&c.ID, &c.Integration, &c.Principal, &c.Kind, &settings, &c.Sealed, &expires,
		&c.CreatedBy, &created, &modified); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &c.Settings); err != nil {
		return nil, fmt.Errorf("credential %s settings: %w", c.ID, err)
	}
	c.ExpiresAt, c.CreatedAt, c.UpdatedAt = fromOptMillis(expires), fromMillis(created), fromMillis(modified)
	return &c, nil
}

// FindCredential implements [agentsmcp.CredentialService].
func (db *DB) FindCredential(ctx context.Context, integration, principal string) (*agentsmcp.Credential, error) {
	row, err := db.queryRow(ctx, findCredentialSQL, integration, principal)
	if err != nil {
		return nil, fmt.Errorf("find credential: %w", err)
	}
	c, err := scanCredential(row)
	if err != nil {
		return nil, notFound(err, "credential for", integration)
	}
	return c, nil
}

// FindCredentialByID implements [agentsmcp.CredentialService].
func (db *DB) FindCredentialByID(ctx context.Context, id string) (*agentsmcp.Credential, error) {
	row, err := db.queryRow(ctx, findCredentialByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find credential: %w", err)
	}
	c, err := scanCredential(row)
	if err != nil {
		return nil, notFound(err, "credential", id)
	}
	return c, nil
}

// FindCredentials implements [agentsmcp.CredentialService].
func (db *DB) FindCredentials(ctx context.Context, f agentsmcp.CredentialFilter) ([]*agentsmcp.Credential, error) {
	byPrincipal, principal := 0, ""
	if f.Principal != nil {
		byPrincipal, principal = 1, *f.Principal
	}
	rows, err := db.query(ctx, findCredentialsSQL, f.Integration, f.Integration, byPrincipal, principal)
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	defer rows.Close()
	items := []*agentsmcp.Credential{}
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("list credentials: %w", err)
		}
		items = append(items, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	return items, nil
}

// UpdateCredentialSecret implements [agentsmcp.CredentialService].
func (db *DB) UpdateCredentialSecret(ctx context.Context, id, sealed string, expiresAt time.Time) error {
	if sealed == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %s: its secret must be sealed before it is stored", id)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, updateCredentialSecretSQL).ExecContext(ctx, sealed, zeroMillis(expiresAt), toMillis(now()), id)
		return affectedOne(res, err, "credential", id)
	})
}

// DeleteCredential implements [agentsmcp.CredentialService].
func (db *DB) DeleteCredential(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, deleteCredentialSQL).ExecContext(ctx, id)
		return affectedOne(res, err, "credential", id)
	})
}

func affectedOne(res sql.Result, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("write %s %q: %w", what, id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("write %s %q: %w", what, id, err)
	} else if n == 0 {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "%s %q not found", what, id)
	}
	return nil
}

// CreateOAuthState implements [agentsmcp.CredentialService]. It also
// drops the states that expired, so that abandoned flows do not pile up.
func (db *DB) CreateOAuthState(ctx context.Context, s *agentsmcp.OAuthState) error {
	if s == nil || s.Key == "" || s.CredentialID == "" || s.ExpiresAt.IsZero() {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "oauth state: key, credential and expiry are required")
	}
	if s.Verifier != "" || s.Sealed == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "oauth state: its verifier must be sealed before it is stored")
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := db.txStmt(ctx, tx, deleteExpiredOAuthStatesSQL).ExecContext(ctx, toMillis(now())); err != nil {
			return fmt.Errorf("drop expired oauth states: %w", err)
		}
		_, err := db.txStmt(ctx, tx, insertOAuthStateSQL).ExecContext(ctx, s.Key, s.CredentialID, s.Principal, s.Binding, s.Sealed,
			toMillis(s.ExpiresAt))
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "oauth state exists")
		} else if err != nil {
			return fmt.Errorf("insert oauth state: %w", err)
		}
		return nil
	})
}

// FindOAuthState implements [agentsmcp.CredentialService].
func (db *DB) FindOAuthState(ctx context.Context, key string, at time.Time) (*agentsmcp.OAuthState, error) {
	row, err := db.queryRow(ctx, findOAuthStateSQL, key)
	if err != nil {
		return nil, fmt.Errorf("find oauth state: %w", err)
	}
	s := agentsmcp.OAuthState{Key: key}
	var expires int64
	err = row.Scan(&s.CredentialID, &s.Principal, &s.Binding, &s.Sealed, &expires)
	return oauthStateAt(&s, expires, at, err)
}

// TakeOAuthState implements [agentsmcp.CredentialService]: one DELETE …
// RETURNING, so two callbacks with the same state cannot both take it.
func (db *DB) TakeOAuthState(ctx context.Context, key string, at time.Time) (*agentsmcp.OAuthState, error) {
	s := agentsmcp.OAuthState{Key: key}
	var expires int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		return db.txStmt(ctx, tx, takeOAuthStateSQL).QueryRowContext(ctx, key).Scan(&s.CredentialID, &s.Principal, &s.Binding, &s.Sealed, &expires)
	})
	return oauthStateAt(&s, expires, at, err)
}

// oauthStateAt completes s, read with err, as of at: ENOTFOUND when it
// was not found or expired before at.
func oauthStateAt(s *agentsmcp.OAuthState, expires int64, at time.Time, err error) (*agentsmcp.OAuthState, error) {
	if err != nil {
		return nil, notFound(err, "oauth state", "")
	}
	s.ExpiresAt = fromMillis(expires)
	if s.ExpiresAt.Before(at) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "oauth state %q not found", "")
	}
	return s, nil
}
