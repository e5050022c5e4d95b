package agentsmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"
)

// CatalogTool is one tool as the agents know it: what the router exposes,
// plus the embedding of its text for tool search. The catalog is stored so
// that a restart re-embeds only the tools whose Hash or EmbedderID changed.
//
// Invariants: Name matches [ToolNamePattern] and is unique across the whole
// catalog; Source is non-empty ([CatalogSourceLocal] or an upstream name),
// at most [MaxCatalogSourceBytes]; Title and Description are at most
// [MaxCatalogTextBytes] each; InputSchema and OutputSchema are empty or a
// JSON object of at most [MaxToolSchemaBytes]; Embedding has at most
// [MaxEmbeddingDims] finite values; Hash and EmbedderID are at most
// [MaxCatalogSourceBytes] each.
type CatalogTool struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Destructive  bool            `json:"destructive,omitempty"`
	ReadOnly     bool            `json:"readOnly,omitempty"`
	// Hash is a content hash of what was embedded (name, title,
	// description, schema…), computed by the caller; the store keeps it
	// opaque.
	Hash       string    `json:"hash,omitempty"`
	EmbedderID string    `json:"embedderId,omitempty"` // which embedder made Embedding
	Embedding  []float32 `json:"embedding,omitempty"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// CatalogSourceLocal is the Source of the tools of this process.
const CatalogSourceLocal = "local"

// Limits of the catalog.
const (
	MaxCatalogSourceBytes = 256
	MaxCatalogTextBytes   = 64 << 10
	MaxToolSchemaBytes    = 256 << 10
	MaxEmbeddingDims      = 8192
	MaxCatalogSourceTools = 5000 // tools of one source
)

// CatalogFilter selects catalog tools; zero fields select everything.
type CatalogFilter struct {
	Source string // exact match
	Cursor string
	Limit  int
}

// CatalogService stores the tool catalog, one set of tools per source.
type CatalogService interface {
	// ReplaceCatalogSource makes tools the whole set of source: tools of
	// source missing from tools are removed, the others inserted or
	// replaced. A tool with an empty Source gets source, a zero UpdatedAt
	// means now; on success each tool holds its stored Source and
	// UpdatedAt. A name held by another source moves to source (names are
	// unique in the catalog, as in the router); other sources are not
	// touched otherwise. EINVALID for an empty source, a tool of another
	// Source, a broken invariant, a name given twice, or more than
	// [MaxCatalogSourceTools] tools; nothing is changed then. The SQLite
	// store replaces in one transaction; the MongoDB store first writes the
	// new set, then removes the stale tools, so a concurrent reader may see
	// both for a moment but never neither.
	ReplaceCatalogSource(ctx context.Context, source string, tools []*CatalogTool) error
	// FindCatalogTool returns ENOTFOUND for an unknown name.
	FindCatalogTool(ctx context.Context, name string) (*CatalogTool, error)
	// FindCatalogTools lists tools matching f ordered by name, ascending,
	// with the paging contract of the other Find* methods (see memory.go).
	FindCatalogTools(ctx context.Context, f CatalogFilter) (items []*CatalogTool, next string, err error)
}

// Validate checks the invariants of a CatalogTool (UpdatedAt may be zero).
func (t *CatalogTool) Validate() error {
	switch {
	case t == nil:
		return Errorf(EINVALID, "catalog tool is required")
	case !ToolNamePattern.MatchString(t.Name):
		return Errorf(EINVALID, "catalog tool name %q does not match %v", t.Name, ToolNamePattern)
	case t.Source == "":
		return Errorf(EINVALID, "catalog tool %q has no source", t.Name)
	case len(t.Source) > MaxCatalogSourceBytes || len(t.Hash) > MaxCatalogSourceBytes || len(t.EmbedderID) > MaxCatalogSourceBytes:
		return Errorf(EINVALID, "catalog tool %q: source, hash and embedder id are limited to %d bytes", t.Name, MaxCatalogSourceBytes)
	case len(t.Title) > MaxCatalogTextBytes || len(t.Description) > MaxCatalogTextBytes:
		return Errorf(EINVALID, "catalog tool %q: title and description are limited to %d bytes", t.Name, MaxCatalogTextBytes)
	case len(t.Embedding) > MaxEmbeddingDims:
		return Errorf(EINVALID, "catalog tool %q: embedding has %d dimensions; the limit is %d", t.Name, len(t.Embedding), MaxEmbeddingDims)
	}
	for _, v := range t.Embedding {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return Errorf(EINVALID, "catalog tool %q: embedding holds %v", t.Name, v)
		}
	}
	if err := checkJSONObject(t.InputSchema, MaxToolSchemaBytes, "catalog tool "+t.Name+" inputSchema"); err != nil {
		return err
	}
	return checkJSONObject(t.OutputSchema, MaxToolSchemaBytes, "catalog tool "+t.Name+" outputSchema")
}

// ValidateCatalogSource checks the arguments of ReplaceCatalogSource: a
// non-empty source, at most MaxCatalogSourceTools tools, each valid once
// given source when its Source is empty, of that source, named once.
func ValidateCatalogSource(source string, tools []*CatalogTool) error {
	switch {
	case source == "":
		return Errorf(EINVALID, "catalog source is required")
	case len(source) > MaxCatalogSourceBytes:
		return Errorf(EINVALID, "catalog source is %d bytes; the limit is %d", len(source), MaxCatalogSourceBytes)
	case len(tools) > MaxCatalogSourceTools:
		return Errorf(EINVALID, "catalog source %q has %d tools; the limit is %d", source, len(tools), MaxCatalogSourceTools)
	}
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t != nil && t.Source == "" {
			c := *t
			c.Source = source
			t = &c
		}
		if err := t.Validate(); err != nil {
			return err
		}
		if t.Source != source {
			return Errorf(EINVALID, "catalog tool %q belongs to source %q, not %q", t.Name, t.Source, source)
		}
		if seen[t.Name] {
			return Errorf(EINVALID, "catalog tool %q is given twice", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// checkJSONObject accepts an empty raw, or a JSON object of at most limit
// bytes.
func checkJSONObject(raw json.RawMessage, limit int, what string) error {
	if len(raw) == 0 {
		return nil
	}
	if len(raw) > limit {
		return Errorf(EINVALID, "%s is %d bytes; the limit is %d", what, len(raw), limit)
	}
	if !json.Valid(raw) || !utf8.Valid(raw) {
		return Errorf(EINVALID, "%s is not valid JSON", what)
	}
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); trimmed[0] != '{' {
		return Errorf(EINVALID, "%s is not a JSON object", what)
	}
	return nil
}
