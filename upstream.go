package agentsmcp

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// UpstreamDefinition is an upstream MCP server added at run time, through
// the admin API, and kept in the store so that every replica serves it and
// it outlives restarts. Upstreams of the config file are not stored: the
// file stays their one source.
//
// Invariants: Name is 1–[MaxUpstreamNameBytes] bytes; Config is a JSON
// object in valid UTF-8 of at most [MaxUpstreamConfigBytes]. The store keeps Config
// opaque: the remote package encodes and decodes it. Config may hold
// credentials (upstream request headers), so it is never logged nor
// returned by the API.
type UpstreamDefinition struct {
	Name   string
	Config json.RawMessage
	// Revision changes whenever a definition of this name is created, so a
	// replica tells "removed and added again, maybe with another URL" from
	// "unchanged" by comparing it. Assigned by the store.
	Revision  string
	CreatedBy string // the principal that added it, optional
	CreatedAt time.Time
}

// Limits of an UpstreamDefinition.
const (
	MaxUpstreamNameBytes   = 64
	MaxUpstreamConfigBytes = 64 << 10
	// MaxUpstreamDefinitions bounds how many definitions the store keeps,
	// so that the admin API cannot grow every replica's pool without end.
	MaxUpstreamDefinitions = 256
)

// Validate checks d's invariants; EINVALID names the first one broken.
func (d *UpstreamDefinition) Validate() error {
	switch {
	case d.Name == "":
		return Errorf(EINVALID, "upstream definition: name is required")
	case len(d.Name) > MaxUpstreamNameBytes:
		return Errorf(EINVALID, "upstream definition: name is longer than %d bytes", MaxUpstreamNameBytes)
	case len(d.Config) > MaxUpstreamConfigBytes:
		return Errorf(EINVALID, "upstream definition %q: config is larger than %d bytes", d.Name, MaxUpstreamConfigBytes)
	}
	var obj map[string]json.RawMessage
	if !utf8.Valid(d.Config) || json.Unmarshal(d.Config, &obj) != nil || obj == nil {
		return Errorf(EINVALID, "upstream definition %q: config must be a JSON object", d.Name)
	}
	return nil
}

// UpstreamService stores the upstreams added at run time. Every replica
// reads it to converge on the same set.
type UpstreamService interface {
	// CreateUpstreamDefinition validates d, assigns a new Revision and,
	// when zero, CreatedAt, and stores it. EINVALID for a broken invariant
	// or when MaxUpstreamDefinitions are already stored, ECONFLICT when
	// the name is taken.
	CreateUpstreamDefinition(ctx context.Context, d *UpstreamDefinition) error
	// DeleteUpstreamDefinition removes the definition named name;
	// ENOTFOUND when there is none.
	DeleteUpstreamDefinition(ctx context.Context, name string) error
	// ListUpstreamDefinitions returns every definition, sorted by name.
	ListUpstreamDefinitions(ctx context.Context) ([]*UpstreamDefinition, error)
}
