package agentsmcp

import (
	"context"
	"encoding/json"
	"time"
)

// UpstreamDefinition is a tool provider added through the admin API and
// stored for every replica: an MCP upstream or an HTTP tool source. Both
// kinds share one namespace (a name prefixes its tools). Config is opaque to
// the store and may hold credentials: never logged nor returned.
// Invariants: internal/validate.UpstreamDefinition.
type UpstreamDefinition struct {
	Name   string
	Kind   string
	Config json.RawMessage
	// Revision changes at each creation of the name. Store-assigned.
	Revision  string
	CreatedBy string // the principal that added it, optional
	CreatedAt time.Time
}

// Kinds of an UpstreamDefinition.
const (
	// UpstreamKindMCP: remote.SharedUpstreams; UpstreamKindHTTP: httptools.
	UpstreamKindMCP  = "mcp"
	UpstreamKindHTTP = "http"
)

// Limits of an UpstreamDefinition.
const (
	MaxUpstreamNameBytes   = 64
	MaxUpstreamConfigBytes = 64 << 10
	// MaxHTTPSourceConfigBytes leaves room for an inline OpenAPI document.
	MaxHTTPSourceConfigBytes = 4 << 20
	// MaxUpstreamDefinitions bounds the stored definitions of both kinds.
	MaxUpstreamDefinitions = 256
)

// UpstreamService stores the providers added at run time; every replica
// reads it to converge.
type UpstreamService interface {
	// CreateUpstreamDefinition validates d, sets an empty Kind to MCP, assigns
	// Revision (and CreatedAt when zero), and stores it. EINVALID (also past
	// MaxUpstreamDefinitions), ECONFLICT for a name taken by either kind.
	CreateUpstreamDefinition(ctx context.Context, d *UpstreamDefinition) error
	// DeleteUpstreamDefinition removes name of kind ("": MCP). ENOTFOUND, also
	// for a name of the other kind.
	DeleteUpstreamDefinition(ctx context.Context, kind, name string) error
	// ListUpstreamDefinitions returns kind's definitions, by name.
	ListUpstreamDefinitions(ctx context.Context, kind string) ([]*UpstreamDefinition, error)
}
