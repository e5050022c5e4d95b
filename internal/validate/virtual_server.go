package validate

import (
	"encoding/json"
	"path"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// VirtualServer checks v's invariants; EINVALID names the first one broken.
func VirtualServer(v *agentsmcp.VirtualServer) error {
	if !agentsmcp.VirtualServerNamePattern.MatchString(v.Name) {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: the name must match %v", storedform.TruncateUTF8(v.Name, 80), agentsmcp.VirtualServerNamePattern)
	}
	switch v.CatalogMode {
	case "", agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery:
	default:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: catalog_mode %q is not %s or %s", v.Name, storedform.TruncateUTF8(string(v.CatalogMode), 32), agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery)
	}
	for i, p := range v.Pinned {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: pinned[%d]: invalid name pattern %q", v.Name, i, storedform.TruncateUTF8(p, 80))
		}
	}
	if err := CallQuotas(v.CallQuotas); err != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: %s", v.Name, agentsmcp.ErrorMessage(err))
	}
	for kind, sels := range map[string][]agentsmcp.VirtualSelection{"tools": v.Tools, "resources": v.Resources, "prompts": v.Prompts} {
		for i, s := range sels {
			for _, p := range s.Names {
				if _, err := path.Match(p, ""); err != nil || p == "" {
					return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: %s[%d]: invalid name pattern %q", v.Name, kind, i, storedform.TruncateUTF8(p, 80))
				}
			}
			if kind != "tools" && (s.AliasPrefix != nil || len(s.Tags) > 0) {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: %s[%d]: alias_prefix and tags apply to tools only", v.Name, kind, i)
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
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: tools[%d]: alias_prefix needs an upstream", v.Name, i)
		case strings.Contains(p, agentsmcp.NamespaceSeparator):
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: tools[%d]: alias_prefix %q contains %q", v.Name, i, storedform.TruncateUTF8(p, 80), agentsmcp.NamespaceSeparator)
		case p != "" && !agentsmcp.ToolNamePattern.MatchString(p):
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: tools[%d]: alias_prefix %q must match %v", v.Name, i, storedform.TruncateUTF8(p, 80), agentsmcp.ToolNamePattern)
		}
		for _, q := range prefixes {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: tools[%d]: alias_prefix %q and %q overlap (one begins the other), so two tools could get one name", v.Name, i, p, q)
			}
		}
		prefixes = append(prefixes, p)
	}
	seen := make(map[string]string, len(v.Rename))
	for real, alias := range v.Rename {
		if !agentsmcp.ToolNamePattern.MatchString(alias) || !agentsmcp.ToolNamePattern.MatchString(real) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: rename %q → %q: both names must match %v", v.Name, storedform.TruncateUTF8(real, 80), storedform.TruncateUTF8(alias, 80), agentsmcp.ToolNamePattern)
		}
		if other, dup := seen[alias]; dup {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: rename gives %q to both %q and %q", v.Name, alias, min(other, real), max(other, real))
		}
		seen[alias] = real
	}
	for real := range v.Descriptions {
		if !agentsmcp.ToolNamePattern.MatchString(real) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: descriptions: %q is not a tool name", v.Name, storedform.TruncateUTF8(real, 80))
		}
	}
	if b, err := json.Marshal(v); err != nil || len(b) > agentsmcp.MaxVirtualServerBytes {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q: the definition is larger than %d bytes", v.Name, agentsmcp.MaxVirtualServerBytes)
	}
	return nil
}

// StoredVirtualServer checks v (nil is EINVALID) and returns the definition
// both stores keep ([storedform.VirtualServer]): what a store's create and
// replace do before they write.
func StoredVirtualServer(v *agentsmcp.VirtualServer) (string, error) {
	if v == nil {
		return "", agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server is required")
	}
	if err := VirtualServer(v); err != nil {
		return "", err
	}
	return storedform.VirtualServer(v)
}
