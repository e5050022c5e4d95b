// Package virtual computes what a virtual server ([agentsmcp.VirtualServer])
// exposes of the router's catalog: which tools, under which names and
// descriptions, and which resources and prompts. It is pure: the router
// hands it the registry's tools and applies the result to its listings and
// calls.
package virtual

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// View is one virtual server's catalog over one tool set. It is immutable
// once built and safe for concurrent use.
type View struct {
	server *agentsmcp.VirtualServer
	// toReal maps an exposed name to the registry name, toExposed back.
	toReal    map[string]string
	toExposed map[string]string
	// tools are the exposed tools, by registry name: copies of the
	// registry's under their exposed names and descriptions.
	tools map[string]*mcp.Tool
	// dropped lists the tools a selection admitted but that could not be
	// exposed, each with why.
	dropped []string
}

// claim is one tool's claim to an exposed name.
type claim struct {
	real, exposed string
	rank          int // claimReserved < claimOwn < claimDerived: lower wins
}

const (
	claimReserved = iota // an explicit rename
	claimOwn             // the registry name, unchanged
	claimDerived         // alias_prefix + the name within the upstream
)

// NewView builds v's view of tools (the registry's, any order). The view
// depends only on v and on the tools themselves: see
// [agentsmcp.VirtualServer] for the naming rules.
func NewView(v *agentsmcp.VirtualServer, tools []*agentsmcp.RegisteredTool) *View {
	view := &View{server: v, toReal: map[string]string{}, toExposed: map[string]string{}, tools: map[string]*mcp.Tool{}}
	reserved := make(map[string]string, len(v.Rename)) // alias → real
	for real, alias := range v.Rename {
		reserved[alias] = real
	}
	byName := make(map[string]*agentsmcp.RegisteredTool, len(tools))
	var claims []claim
	for _, rt := range tools {
		if rt == nil || rt.Tool == nil {
			continue
		}
		real := rt.Tool.Name
		i := selectTool(v.Tools, rt)
		if i < 0 {
			continue
		}
		byName[real] = rt
		switch alias, renamed := v.Rename[real]; {
		case renamed:
			claims = append(claims, claim{real, alias, claimReserved})
		case v.Tools[i].AliasPrefix != nil:
			short := strings.TrimPrefix(real, rt.Source+agentsmcp.NamespaceSeparator)
			claims = append(claims, claim{real, ToolAlias(*v.Tools[i].AliasPrefix+short, real), claimDerived})
		default:
			claims = append(claims, claim{real, real, claimOwn})
		}
	}
	// Stronger claims first, then by name, so that the outcome is the same
	// whatever order the registry listed the tools in.
	slices.SortFunc(claims, func(a, b claim) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.real, b.real)
	})
	for _, c := range claims {
		if owner, ok := reserved[c.exposed]; ok && owner != c.real {
			view.dropped = append(view.dropped, c.real+": "+c.exposed+" is reserved by rename for "+owner)
			continue
		}
		if owner, taken := view.toReal[c.exposed]; taken {
			view.dropped = append(view.dropped, c.real+": "+c.exposed+" is already "+owner+"'s")
			continue
		}
		view.toReal[c.exposed], view.toExposed[c.real] = c.real, c.exposed
		t := *byName[c.real].Tool // a shallow copy: the registry's is never modified
		t.Name = c.exposed
		if d, ok := v.Descriptions[c.real]; ok {
			t.Description = d
		}
		view.tools[c.real] = &t
	}
	slices.Sort(view.dropped)
	return view
}

// Server is the definition the view was built from.
func (v *View) Server() *agentsmcp.VirtualServer { return v.server }

// RealName returns the registry name of the tool exposed as name, and
// false when the view exposes no tool of that name.
func (v *View) RealName(exposed string) (string, bool) {
	real, ok := v.toReal[exposed]
	return real, ok
}

// Tool returns the tool of registry name real as the view exposes it (a
// copy the caller must not modify), and false when the view does not
// expose it.
func (v *View) Tool(real string) (*mcp.Tool, bool) {
	t, ok := v.tools[real]
	return t, ok
}

// Tools returns the tools the view exposes, sorted by exposed name
// (copies the caller must not modify).
func (v *View) Tools() []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(v.tools))
	for _, t := range v.tools {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Len is the number of tools the view exposes.
func (v *View) Len() int { return len(v.tools) }

// Dropped lists the tools a selection admitted that could not be exposed,
// each with why, sorted.
func (v *View) Dropped() []string { return slices.Clone(v.dropped) }

// selectTool returns the index of the first selection that admits rt, or -1.
func selectTool(sels []agentsmcp.VirtualSelection, rt *agentsmcp.RegisteredTool) int {
	for i, s := range sels {
		if s.Upstream != "" && s.Upstream != rt.Source {
			continue
		}
		if !matchesAny(s.Names, rt.Tool.Name) {
			continue
		}
		if len(s.Tags) > 0 && !slices.ContainsFunc(ToolTags(rt.Tool), func(tag string) bool { return slices.Contains(s.Tags, tag) }) {
			continue
		}
		return i
	}
	return -1
}

// AdmitsPrompt reports whether one of v's prompt selections admits the
// prompt exposed as name ("<upstream>__<prompt>", or a local one).
func AdmitsPrompt(v *agentsmcp.VirtualServer, name string) bool {
	upstream := "local"
	if i := strings.Index(name, agentsmcp.NamespaceSeparator); i > 0 {
		upstream = name[:i]
	}
	return admits(v.Prompts, upstream, name)
}

// AdmitsResource reports whether one of v's resource selections admits the
// resource or resource template exposed as uri.
func AdmitsResource(v *agentsmcp.VirtualServer, uri string) bool {
	upstream, ok := agentsmcp.ResourceUpstream(uri)
	if !ok {
		upstream = "local"
	}
	return admits(v.Resources, upstream, uri)
}

func admits(sels []agentsmcp.VirtualSelection, upstream, name string) bool {
	return slices.ContainsFunc(sels, func(s agentsmcp.VirtualSelection) bool {
		return (s.Upstream == "" || s.Upstream == upstream) && matchesAny(s.Names, name)
	})
}

// matchesAny reports whether one of patterns matches name; no pattern
// matches every name.
func matchesAny(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, _ := path.Match(p, name)
		return ok
	})
}

// ToolTags returns the tags a tool carries: the strings of its _meta
// "tags" list, and of FastMCP's _meta._fastmcp.tags.
func ToolTags(t *mcp.Tool) []string {
	var tags []string
	add := func(v any) {
		list, _ := v.([]any)
		for _, x := range list {
			if s, ok := x.(string); ok {
				tags = append(tags, s)
			}
		}
	}
	add(t.Meta["tags"])
	if fm, ok := t.Meta["_fastmcp"].(map[string]any); ok {
		add(fm["tags"])
	}
	return tags
}

// aliasDigestHex is how many hex digits of the registry name's SHA-256 end
// an alias that had to be cut.
const aliasDigestHex = 8

// ToolAlias returns alias when it fits [agentsmcp.MaxToolNameBytes], and
// otherwise its first bytes, "_" and the first 8 hex digits of the SHA-256
// of real, the registry name: the same long alias always gives the same
// short one, and two long aliases of different tools differ in the digest.
func ToolAlias(alias, real string) string {
	if len(alias) <= agentsmcp.MaxToolNameBytes {
		return alias
	}
	sum := sha256.Sum256([]byte(real))
	keep := agentsmcp.MaxToolNameBytes - 1 - aliasDigestHex
	return alias[:keep] + "_" + hex.EncodeToString(sum[:])[:aliasDigestHex]
}
