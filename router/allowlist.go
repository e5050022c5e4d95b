package router

import (
	"path"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// mayUsePrompt admits a prompt as [agentsmcp.Principal] says: by its name,
// or by a pattern admitting its whole upstream (nil p: yes).
func mayUsePrompt(p *agentsmcp.Principal, name string) bool {
	if p.MayUseTool(name) {
		return true
	}
	// Upstream names have no '_', so the first separator ends the prefix.
	i := strings.Index(name, agentsmcp.NamespaceSeparator)
	return i > 0 && admitsAll(p, name[:i+len(agentsmcp.NamespaceSeparator)])
}

// mayUseResource admits a resource URI as [agentsmcp.Principal] says: one
// of upstream U by a pattern admitting all of U, a local one by "*" only
// (nil p: yes).
func mayUseResource(p *agentsmcp.Principal, uri string) bool {
	if !p.Restricted() {
		return true
	}
	if upstream, ok := agentsmcp.ResourceUpstream(uri); ok {
		return admitsAll(p, upstream+agentsmcp.NamespaceSeparator)
	}
	return admitsAll(p, "")
}

// admitsAll: a pattern of p ending in '*' matches prefix (so all that
// begin so).
func admitsAll(p *agentsmcp.Principal, prefix string) bool {
	for _, pattern := range p.Tools {
		if !strings.HasSuffix(pattern, "*") {
			continue
		}
		if ok, _ := path.Match(pattern, prefix); ok {
			return true
		}
	}
	return false
}
