package config

import (
	"fmt"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// The virtual servers of the config file (virtual_servers) and the one
// `agents-mcp stdio --server` serves.

// applyFileVirtualServers copies the virtual_servers section: the entries
// are the root's VirtualServer as YAML, checked by its Validate.
func (l *loader) applyFileVirtualServers(f *fileConfig) {
	if f.VirtualServers == nil {
		return
	}
	c := l.cfg
	c.setSource("virtual_servers", SourceFile)
	seen := map[string]bool{}
	for i, vs := range f.VirtualServers {
		field := fmt.Sprintf("virtual_servers[%d]", i)
		vs.Name = strings.TrimSpace(vs.Name)
		if err := validate.VirtualServer(vs); err != nil {
			l.errorf(field, "%s", agentsmcp.ErrorMessage(err))
			continue
		}
		if seen[vs.Name] {
			l.errorf(field+".name", "%q is defined twice", vs.Name)
			continue
		}
		seen[vs.Name] = true
		c.VirtualServers = append(c.VirtualServers, vs)
	}
}

// validateVirtualServers checks that stdio's --server names a virtual
// server of the file. One added through the admin API is served too: the
// check is then at start-up, against the store (cmd).
func (c *Config) virtualServerNames() []string {
	names := make([]string, len(c.VirtualServers))
	for i, vs := range c.VirtualServers {
		names[i] = vs.Name
	}
	return names
}

// describeVirtualServers adds the virtual_servers and stdio.server lines.
func (c *Config) describeVirtualServers(add func(name, value string)) {
	add("virtual_servers", strings.Join(c.virtualServerNames(), ","))
	add("stdio.server", c.StdioServer)
}
