package agentsmcp

import (
	"context"
	"fmt"
	"strings"
)

// CatalogMode is how a caller's tools/list shows the catalog.
type CatalogMode string

const (
	// CatalogFull lists every tool the caller may use.
	CatalogFull CatalogMode = "full"
	// CatalogDiscovery lists only the discovery meta-tools (a find tool
	// and a call tool) and the pinned tools; every other tool the caller
	// may use is found with the find tool and called directly or through
	// the call tool.
	CatalogDiscovery CatalogMode = "discovery"
)

// ParseCatalogMode reads "full" or "discovery" (case and spaces aside);
// "" is "" (no choice made, the next source decides). EINVALID otherwise.
func ParseCatalogMode(s string) (CatalogMode, error) {
	switch m := CatalogMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", CatalogFull, CatalogDiscovery:
		return m, nil
	}
	return "", Errorf(EINVALID, "catalog mode %q is not one of %s, %s", s, CatalogFull, CatalogDiscovery)
}

// String implements fmt.Stringer.
func (m CatalogMode) String() string { return string(m) }

var _ fmt.Stringer = CatalogFull

// TokenInfoCatalogMode is the key of go-sdk's auth.TokenInfo.Extra under
// which an HTTP endpoint (a virtual server) may hand the router the catalog
// mode of its requests, as a [CatalogMode]; it wins over the principal's
// and the server's default.
const TokenInfoCatalogMode = "catalog_mode"

type catalogModeKey struct{}

// WithCatalogMode returns ctx carrying m, the catalog mode decided for the
// request by the endpoint it came through (a virtual server): the router
// resolves a request's mode from it first, then from
// [TokenInfoCatalogMode], then from the principal's CatalogMode, then the
// server's default. An empty m decides nothing.
func WithCatalogMode(ctx context.Context, m CatalogMode) context.Context {
	return context.WithValue(ctx, catalogModeKey{}, m)
}

// CatalogModeFrom returns the catalog mode ctx carries, or "". Inside the
// router's middleware (tools/list, tools/call and the tools they run) it
// is the mode resolved for the request.
func CatalogModeFrom(ctx context.Context) CatalogMode {
	m, _ := ctx.Value(catalogModeKey{}).(CatalogMode)
	return m
}
