package agentsmcp

import (
	"context"
	"encoding/json"
	"time"
)

// UpstreamDefinition is a tool provider added at run time, through the
// admin API, and kept in the store so that every replica serves it and it
// outlives restarts: an upstream MCP server (Kind [UpstreamKindMCP]) or an
// HTTP tool source (Kind [UpstreamKindHTTP]). Both kinds share one set of
// names, because a name prefixes the provider's tool names
// (`<name>__<tool>`) whatever its kind: the store refuses a name taken by
// a definition of either kind. Providers of the config file are not
// stored: the file stays their one source.
//
// Invariants: Name is 1–[MaxUpstreamNameBytes] bytes; Kind is one of the
// two kinds ("" is taken as [UpstreamKindMCP]); Config is a JSON object in
// valid UTF-8 of at most [MaxUpstreamConfigBytes] for an MCP upstream and
// [MaxHTTPSourceConfigBytes] for an HTTP source (which may carry its
// OpenAPI document). The store keeps Config opaque: the remote and
// httptools packages encode and decode it. Config may hold credentials
// (request headers), so it is never logged nor returned by the API.
type UpstreamDefinition struct {
	Name   string
	Kind   string
	Config json.RawMessage
	// Revision changes whenever a definition of this name is created, so a
	// replica tells "removed and added again, maybe with another URL" from
	// "unchanged" by comparing it. Assigned by the store.
	Revision  string
	CreatedBy string // the principal that added it, optional
	CreatedAt time.Time
}

// Kinds of an UpstreamDefinition.
const (
	// UpstreamKindMCP is an upstream MCP server (remote.SharedUpstreams).
	UpstreamKindMCP = "mcp"
	// UpstreamKindHTTP is an HTTP tool source (httptools.SharedSources).
	UpstreamKindHTTP = "http"
)

// Limits of an UpstreamDefinition.
const (
	MaxUpstreamNameBytes   = 64
	MaxUpstreamConfigBytes = 64 << 10
	// MaxHTTPSourceConfigBytes bounds the config of an HTTP tool source,
	// which may hold an OpenAPI document inline (up to 2 MiB of it, see
	// httptools.MaxInlineDocumentBytes, with room for JSON escaping).
	MaxHTTPSourceConfigBytes = 4 << 20
	// MaxUpstreamDefinitions bounds how many definitions the store keeps,
	// of both kinds together, so that the admin API cannot grow every
	// replica's set of providers without end.
	MaxUpstreamDefinitions = 256
)

// KindOrMCP is d's Kind, with "" read as [UpstreamKindMCP].
func (d *UpstreamDefinition) KindOrMCP() string {
	if d.Kind == "" {
		return UpstreamKindMCP
	}
	return d.Kind
}

// UpstreamService stores the tool providers added at run time, of both
// kinds. Every replica reads it to converge on the same set.
type UpstreamService interface {
	// CreateUpstreamDefinition validates d, sets an empty Kind to
	// UpstreamKindMCP, assigns a new Revision and, when zero, CreatedAt,
	// and stores it. EINVALID for a broken invariant or when
	// MaxUpstreamDefinitions (of both kinds) are already stored, ECONFLICT
	// when the name is taken by a definition of either kind.
	CreateUpstreamDefinition(ctx context.Context, d *UpstreamDefinition) error
	// DeleteUpstreamDefinition removes the definition of that kind ("" is
	// UpstreamKindMCP) named name; ENOTFOUND when there is none, and when
	// the name belongs to a definition of the other kind, which stays.
	DeleteUpstreamDefinition(ctx context.Context, kind, name string) error
	// ListUpstreamDefinitions returns every definition of that kind ("" is
	// UpstreamKindMCP), sorted by name.
	ListUpstreamDefinitions(ctx context.Context, kind string) ([]*UpstreamDefinition, error)
}
