package agentsmcp

import (
	"context"
	"strings"
)

// CatalogMode is how a caller's tools/list shows the catalog.
type CatalogMode string

const (
	// CatalogFull lists every tool the caller may use.
	CatalogFull CatalogMode = "full"
	// CatalogDiscovery lists only the discovery meta-tools (find, call) and the
	// pinned tools; the rest is found and called through them.
	CatalogDiscovery CatalogMode = "discovery"
)

// ParseCatalogMode reads "full" or "discovery" (any case); "" is "" (the
// next source decides). EINVALID otherwise.
func ParseCatalogMode(s string) (CatalogMode, error) {
	switch m := CatalogMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", CatalogFull, CatalogDiscovery:
		return m, nil
	}
	return "", Errorf(EINVALID, "catalog mode %q is not one of %s, %s", s, CatalogFull, CatalogDiscovery)
}

// TokenInfoCatalogMode is the go-sdk auth.TokenInfo.Extra key of an
// endpoint's [CatalogMode].
const TokenInfoCatalogMode = "catalog_mode"

type catalogModeKey struct{}

// WithCatalogMode returns ctx carrying the mode decided by the endpoint; it
// wins over TokenInfoCatalogMode, the principal's and the server default.
func WithCatalogMode(ctx context.Context, m CatalogMode) context.Context {
	return context.WithValue(ctx, catalogModeKey{}, m)
}

// CatalogModeFrom returns ctx's mode, or ""; in the router's middleware it
// is the mode resolved for the request.
func CatalogModeFrom(ctx context.Context) CatalogMode {
	m, _ := ctx.Value(catalogModeKey{}).(CatalogMode)
	return m
}
