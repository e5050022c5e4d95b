package agentsmcp

import (
	"context"
	"path"
	"regexp"
	"time"
)

// VirtualServer is a named, curated view of the catalog, served at
// /mcp/<Name> and /sse/<Name>. A tool is exposed once: under Rename[name],
// else under the first selection of Tools admitting it (AliasPrefix + its
// name in its upstream, or its registry name; cut with a digest past
// [MaxToolNameBytes], [VirtualToolAlias]). Aliases depend only on the
// definition and the tool. Invariants: internal/validate.VirtualServer.
type VirtualServer struct {
	Name        string `json:"name" yaml:"name"`
	Title       string `json:"title,omitempty" yaml:"title"`
	Description string `json:"description,omitempty" yaml:"description"`
	// Version is published in the registry API; "" publishes
	// [DefaultVirtualServerVersion].
	Version string `json:"version,omitempty" yaml:"version"`
	// CatalogMode is how tools/list presents the view: [CatalogFull] the
	// whole view, [CatalogDiscovery] the meta-tools and Pinned (find searches
	// the view alone, under its names); "" leaves it to the caller's mode.
	CatalogMode CatalogMode `json:"catalog_mode,omitempty" yaml:"catalog_mode"`
	// Pinned are path.Match patterns on exposed names that discovery lists.
	Pinned []string `json:"pinned,omitempty" yaml:"pinned"`
	// Tools, Resources and Prompts select what is exposed; empty exposes none.
	Tools     []VirtualSelection `json:"tools,omitempty" yaml:"tools"`
	Resources []VirtualSelection `json:"resources,omitempty" yaml:"resources"`
	Prompts   []VirtualSelection `json:"prompts,omitempty" yaml:"prompts"`
	// Rename and Descriptions map a tool's registry name to its exposed name
	// and description.
	Rename       map[string]string `json:"rename,omitempty" yaml:"rename"`
	Descriptions map[string]string `json:"descriptions,omitempty" yaml:"descriptions"`
	// CallQuotas bound each principal's calls through this server
	// ([CallQuota]), on top of its key's own.
	CallQuotas []CallQuota `json:"call_quotas,omitempty" yaml:"call_quotas"`

	// Revision changes with every stored change (store-assigned; "" in the
	// config file).
	Revision  string    `json:"revision,omitempty" yaml:"-"`
	CreatedBy string    `json:"created_by,omitempty" yaml:"-"`
	CreatedAt time.Time `json:"created_at,omitzero" yaml:"-"`
}

// VirtualSelection admits what matches all of its non-empty fields.
type VirtualSelection struct {
	// Upstream is the provider's name ("local" for the server's own).
	Upstream string `json:"upstream,omitempty" yaml:"upstream"`
	// Names are path.Match patterns on the registry name of a tool or prompt,
	// or on a resource's exposed URI.
	Names []string `json:"names,omitempty" yaml:"names"`
	// Tags admits tools carrying one of them (_meta tags, FastMCP's included).
	Tags []string `json:"tags,omitempty" yaml:"tags"`
	// AliasPrefix (tools only; Upstream required) exposes each admitted tool
	// as AliasPrefix + its name within Upstream.
	AliasPrefix *string `json:"alias_prefix,omitempty" yaml:"alias_prefix"`
}

// Limits and defaults of a VirtualServer.
const (
	MaxVirtualServerBytes = 64 << 10
	// MaxVirtualServers bounds the stored definitions.
	MaxVirtualServers = 256
	// MaxToolNameBytes is the longest tool name MCP clients accept.
	MaxToolNameBytes            = 64
	DefaultVirtualServerVersion = "1.0.0"
)

// VirtualServerNamePattern is what a virtual server's name must match.
var VirtualServerNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

// VirtualServerService stores the virtual servers of the admin API.
type VirtualServerService interface {
	// CreateVirtualServer validates v, assigns Revision (and CreatedAt when
	// zero) and stores it. EINVALID (also past MaxVirtualServers), ECONFLICT.
	CreateVirtualServer(ctx context.Context, v *VirtualServer) error
	// ReplaceVirtualServer replaces the definition of v's name under a new
	// Revision, keeping CreatedBy and CreatedAt. EINVALID, ENOTFOUND.
	ReplaceVirtualServer(ctx context.Context, v *VirtualServer) error
	// DeleteVirtualServer removes one definition. ENOTFOUND.
	DeleteVirtualServer(ctx context.Context, name string) error
	// ListVirtualServers returns every stored definition, sorted by name.
	ListVirtualServers(ctx context.Context) ([]*VirtualServer, error)
}

// VirtualServerLister lists what a replica serves (file and store), by name.
type VirtualServerLister interface {
	VirtualServers() []*VirtualServer
}

// MayUseVirtualServer reports whether p may connect to virtual server name
// ("": the whole catalog): a principal with a VirtualServers list only to
// those; nil or no list, to all.
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
