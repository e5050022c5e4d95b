package agentsmcp

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"time"
)

// VirtualServer is a named, curated view of the catalog, served at
// /mcp/<Name> and /sse/<Name> (and by `agents-mcp stdio --server <Name>`):
// the tools, resources and prompts its selections admit, tools under the
// names it gives them, with the descriptions it overrides. The plain /mcp
// stays the whole catalog.
//
// A tool is exposed once, under the first of these that applies:
//
//  1. Rename[registry name], an explicit alias. An alias is reserved by the
//     definition: no other tool is ever exposed under it, even while the
//     renamed tool is absent.
//  2. The first selection in Tools that admits it: with an AliasPrefix,
//     under that prefix followed by its name within its upstream (the
//     registry name without "<upstream>__"); without, under its registry
//     name. A derived alias longer than [MaxToolNameBytes] is cut and ends
//     in a digest of the registry name (see [VirtualToolAlias]).
//
// A derived alias that equals a reserved alias or a registry name exposed
// unchanged is dropped (the view reports it): a name a tool holds by
// itself or by the definition never moves. So aliases depend only on the
// definition and on the tool itself, never on the order of listings or on
// which other upstreams are connected: adding an upstream never renames a
// tool already exposed.
//
// Invariants (Validate): Name matches [VirtualServerNamePattern]; every
// Rename value matches [ToolNamePattern] and no two are equal; every
// pattern is a valid path.Match pattern; an AliasPrefix needs an Upstream,
// contains no [NamespaceSeparator], and the prefixes of all selections are
// prefix-free (none begins another), so that two selections never derive
// the same alias; CatalogMode is "", [CatalogFull] or [CatalogDiscovery];
// every Pinned pattern is a valid path.Match pattern; the encoded
// definition is at most
// [MaxVirtualServerBytes].
type VirtualServer struct {
	Name        string `json:"name" yaml:"name"`
	Title       string `json:"title,omitempty" yaml:"title"`
	Description string `json:"description,omitempty" yaml:"description"`
	// Version is the version published in the registry API (server.json);
	// "" publishes [DefaultVirtualServerVersion].
	Version string `json:"version,omitempty" yaml:"version"`
	// CatalogMode is how tools/list presents this server's catalog:
	// [CatalogFull] lists the whole view; [CatalogDiscovery] lists the
	// discovery meta-tools and the view's pinned tools, and the find tool
	// searches the view alone, answering with the view's names and
	// descriptions. "" leaves the mode to the caller (its API key or
	// token) and the server's default, as on the whole catalog.
	CatalogMode CatalogMode `json:"catalog_mode,omitempty" yaml:"catalog_mode"`
	// Pinned are path.Match patterns on the exposed names of the view's
	// tools that discovery mode lists too (besides those the server's
	// catalog.pinned patterns match by registry name).
	Pinned []string `json:"pinned,omitempty" yaml:"pinned"`
	// Tools, Resources and Prompts select what the server exposes; an
	// empty list exposes none of that kind.
	Tools     []VirtualSelection `json:"tools,omitempty" yaml:"tools"`
	Resources []VirtualSelection `json:"resources,omitempty" yaml:"resources"`
	Prompts   []VirtualSelection `json:"prompts,omitempty" yaml:"prompts"`
	// Rename maps a tool's registry name to the name this server exposes
	// it under.
	Rename map[string]string `json:"rename,omitempty" yaml:"rename"`
	// Descriptions maps a tool's registry name to the description this
	// server gives it.
	Descriptions map[string]string `json:"descriptions,omitempty" yaml:"descriptions"`
	// CallQuotas bound the tool calls each principal makes through this
	// server in each window ([CallQuota]), on top of its key's own.
	CallQuotas []CallQuota `json:"call_quotas,omitempty" yaml:"call_quotas"`

	// Revision changes whenever the stored definition changes; assigned by
	// the store ("" for one of the config file).
	Revision  string    `json:"revision,omitempty" yaml:"-"`
	CreatedBy string    `json:"created_by,omitempty" yaml:"-"`
	CreatedAt time.Time `json:"created_at,omitzero" yaml:"-"`
}

// VirtualSelection admits the tools (or resources, or prompts) that match
// all of its non-empty fields.
type VirtualSelection struct {
	// Upstream is the provider's name: an upstream's or an HTTP tool
	// source's, "local" for the server's own tools. "" is any.
	Upstream string `json:"upstream,omitempty" yaml:"upstream"`
	// Names are path.Match patterns on the registry name of a tool or
	// prompt ("github__create_*"), or on the exposed URI of a resource or
	// resource template; one must match. Empty admits every name.
	Names []string `json:"names,omitempty" yaml:"names"`
	// Tags admits a tool carrying one of them (tools only): the strings
	// of the tool's _meta "tags" list, or FastMCP's _meta._fastmcp.tags.
	Tags []string `json:"tags,omitempty" yaml:"tags"`
	// AliasPrefix, when set (tools only; Upstream required), exposes each
	// admitted tool as AliasPrefix + its name within Upstream: "" strips
	// "<upstream>__", "gh_" gives "gh_create_issue".
	AliasPrefix *string `json:"alias_prefix,omitempty" yaml:"alias_prefix"`
}

// CallLimits are the call quotas of v with the setting that names them.
func (v *VirtualServer) CallLimits() []CallLimit {
	if v == nil || len(v.CallQuotas) == 0 {
		return nil
	}
	out := make([]CallLimit, len(v.CallQuotas))
	for i, q := range v.CallQuotas {
		out[i] = CallLimit{CallQuota: q, Setting: "virtual_servers[name=" + v.Name + "].call_quotas"}
	}
	return out
}

// Limits and defaults of a VirtualServer.
const (
	MaxVirtualServerBytes = 64 << 10
	// MaxVirtualServers bounds how many definitions the store keeps, so
	// that the admin API cannot grow every replica's set without end.
	MaxVirtualServers = 256
	// MaxToolNameBytes is the longest tool name MCP clients accept.
	MaxToolNameBytes = 64
	// DefaultVirtualServerVersion is the published version of a virtual
	// server that names none.
	DefaultVirtualServerVersion = "1.0.0"
)

// VirtualServerNamePattern is what a virtual server's name must match: a
// path segment of /mcp/<name> that is also a valid server.json name part.
var VirtualServerNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

// Validate checks v's invariants; EINVALID names the first one broken.
func (v *VirtualServer) Validate() error {
	if !VirtualServerNamePattern.MatchString(v.Name) {
		return Errorf(EINVALID, "virtual server %q: the name must match %v", TruncateUTF8(v.Name, 80), VirtualServerNamePattern)
	}
	switch v.CatalogMode {
	case "", CatalogFull, CatalogDiscovery:
	default:
		return Errorf(EINVALID, "virtual server %q: catalog_mode %q is not %s or %s", v.Name, TruncateUTF8(string(v.CatalogMode), 32), CatalogFull, CatalogDiscovery)
	}
	for i, p := range v.Pinned {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return Errorf(EINVALID, "virtual server %q: pinned[%d]: invalid name pattern %q", v.Name, i, TruncateUTF8(p, 80))
		}
	}
	if err := ValidateCallQuotas(v.CallQuotas); err != nil {
		return Errorf(EINVALID, "virtual server %q: %s", v.Name, ErrorMessage(err))
	}
	for kind, sels := range map[string][]VirtualSelection{"tools": v.Tools, "resources": v.Resources, "prompts": v.Prompts} {
		for i, s := range sels {
			for _, p := range s.Names {
				if _, err := path.Match(p, ""); err != nil || p == "" {
					return Errorf(EINVALID, "virtual server %q: %s[%d]: invalid name pattern %q", v.Name, kind, i, TruncateUTF8(p, 80))
				}
			}
			if kind != "tools" && (s.AliasPrefix != nil || len(s.Tags) > 0) {
				return Errorf(EINVALID, "virtual server %q: %s[%d]: alias_prefix and tags apply to tools only", v.Name, kind, i)
			}
		}
	}
	var prefixes []string
	for i, s := range v.Tools {
		if s.AliasPrefix == nil {
			continue
		}
		p := *s.AliasPrefix
		switch {
		case s.Upstream == "":
			return Errorf(EINVALID, "virtual server %q: tools[%d]: alias_prefix needs an upstream", v.Name, i)
		case strings.Contains(p, NamespaceSeparator):
			return Errorf(EINVALID, "virtual server %q: tools[%d]: alias_prefix %q contains %q", v.Name, i, TruncateUTF8(p, 80), NamespaceSeparator)
		case p != "" && !ToolNamePattern.MatchString(p):
			return Errorf(EINVALID, "virtual server %q: tools[%d]: alias_prefix %q must match %v", v.Name, i, TruncateUTF8(p, 80), ToolNamePattern)
		}
		for _, q := range prefixes {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return Errorf(EINVALID, "virtual server %q: tools[%d]: alias_prefix %q and %q overlap (one begins the other), so two tools could get one name", v.Name, i, p, q)
			}
		}
		prefixes = append(prefixes, p)
	}
	seen := make(map[string]string, len(v.Rename))
	for real, alias := range v.Rename {
		if !ToolNamePattern.MatchString(alias) || !ToolNamePattern.MatchString(real) {
			return Errorf(EINVALID, "virtual server %q: rename %q → %q: both names must match %v", v.Name, TruncateUTF8(real, 80), TruncateUTF8(alias, 80), ToolNamePattern)
		}
		if other, dup := seen[alias]; dup {
			return Errorf(EINVALID, "virtual server %q: rename gives %q to both %q and %q", v.Name, alias, min(other, real), max(other, real))
		}
		seen[alias] = real
	}
	for real := range v.Descriptions {
		if !ToolNamePattern.MatchString(real) {
			return Errorf(EINVALID, "virtual server %q: descriptions: %q is not a tool name", v.Name, TruncateUTF8(real, 80))
		}
	}
	if b, err := json.Marshal(v); err != nil || len(b) > MaxVirtualServerBytes {
		return Errorf(EINVALID, "virtual server %q: the definition is larger than %d bytes", v.Name, MaxVirtualServerBytes)
	}
	return nil
}

// PublishedVersion is v's Version, or [DefaultVirtualServerVersion].
func (v *VirtualServer) PublishedVersion() string {
	if v.Version == "" {
		return DefaultVirtualServerVersion
	}
	return v.Version
}

// VirtualServerService stores the virtual servers defined through the
// admin API, so that every replica serves them. Those of the config file
// are not stored.
type VirtualServerService interface {
	// CreateVirtualServer validates v, assigns a new Revision and, when
	// zero, CreatedAt, and stores it. EINVALID for a broken invariant or
	// when MaxVirtualServers are stored, ECONFLICT when the name is taken.
	CreateVirtualServer(ctx context.Context, v *VirtualServer) error
	// ReplaceVirtualServer validates v and replaces the stored definition
	// of that name with it, under a new Revision (CreatedBy and CreatedAt
	// are kept). ENOTFOUND when there is none.
	ReplaceVirtualServer(ctx context.Context, v *VirtualServer) error
	// DeleteVirtualServer removes the definition named name; ENOTFOUND
	// when there is none.
	DeleteVirtualServer(ctx context.Context, name string) error
	// ListVirtualServers returns every stored definition, sorted by name.
	ListVirtualServers(ctx context.Context) ([]*VirtualServer, error)
}

// VirtualServerLister lists the virtual servers a replica serves now:
// those of the config file and those of the store, sorted by name.
type VirtualServerLister interface {
	VirtualServers() []*VirtualServer
}

// MayUseVirtualServer reports whether p may connect to the virtual server
// name ("" is the plain, whole catalog). A principal with a list of
// virtual servers may use those only, and not the whole catalog; a nil
// Principal, or one without a list, may use every one.
func (p *Principal) MayUseVirtualServer(name string) bool {
	if p == nil || len(p.VirtualServers) == 0 {
		return true
	}
	if name == "" {
		return false
	}
	for _, pattern := range p.VirtualServers {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}
