package router

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientProfile is what the router assumes a client handles, and so how it
// shapes the results of that client's tools/call. It comes from the
// clientInfo and protocol version of the client's session (MCP 2025-*) or
// of each request's _meta (2026-07-28 and later), matched against
// [ClientProfiles]; [ToolCallRecord] carries it to the audit trail.
type ClientProfile struct {
	// ID is the short name of the row of [ClientProfiles] that matched.
	ID string
	// StructuredContent: the client reads structuredContent. Without it,
	// the text content is made to carry the whole answer: the JSON of
	// structuredContent is added unless a text block already holds it.
	StructuredContent bool
	// ResourceLinks: the client can use resource_link content. Without
	// it, each link becomes a text block naming the resource.
	ResourceLinks bool
}

// The IDs of [ClientProfiles].
const (
	ProfileREST     = "rest"     // the REST bridge: no MCP client at all
	ProfileLegacy   = "legacy"   // MCP before 2025-06-18
	ProfileStandard = "standard" // every other client
)

// profileRule is one row of [ClientProfiles].
type profileRule struct {
	ClientProfile
	// Why the row exists; docs/interface.md quotes it.
	Why string
	// match reports whether a client, by its clientInfo name and version
	// and its protocol revision ("" when unknown), has this profile.
	match func(name, version string, protocol mcpwire.Revision) bool
}

// ClientProfiles is the table of client profiles, first match wins. It is
// deliberately small: a row is added for a client whose behaviour was
// seen, not guessed. Every profile gets, for a result with
// structuredContent and no text, the JSON of structuredContent as text:
// MCP asks servers to send both, and upstreams do not all do it.
var ClientProfiles = []profileRule{
	{
		ClientProfile: ClientProfile{ID: ProfileLegacy},
		Why:           "structuredContent and resource_link content appeared in MCP 2025-06-18; an older client knows neither",
		match:         func(_, _ string, protocol mcpwire.Revision) bool { return protocol.Legacy() },
	},
	{
		ClientProfile: ClientProfile{ID: ProfileStandard, StructuredContent: true, ResourceLinks: true},
		Why:           "a client of MCP 2025-06-18 or later, or of an unknown version",
		match:         func(_, _ string, _ mcpwire.Revision) bool { return true },
	},
}

// restProfile is the REST bridge's: its answer holds structuredContent
// as "result", or the content array with its links.
var restProfile = ClientProfile{ID: ProfileREST, StructuredContent: true, ResourceLinks: true}

// clientCall is what the audit trail records of the client of one call.
type clientCall struct {
	profile       ClientProfile
	name, version string
}

type clientCallKey struct{}

func withClientCall(ctx context.Context, c clientCall) context.Context {
	return context.WithValue(ctx, clientCallKey{}, c)
}

// clientCallFrom returns the client of the call in ctx; ok is false for
// in-process calls (the agents' steps), which no client shapes.
func clientCallFrom(ctx context.Context) (clientCall, bool) {
	c, ok := ctx.Value(clientCallKey{}).(clientCall)
	return c, ok
}

// profileOf finds the profile of the client of req, whose protocol
// capabilities ctx carries.
func profileOf(ctx context.Context, req *mcp.CallToolRequest) clientCall {
	var c clientCall
	c.name, c.version = clientInfoOf(req)
	protocol := capabilitiesOf(ctx, req).Revision()
	for _, rule := range ClientProfiles {
		if rule.match(c.name, c.version, protocol) {
			c.profile = rule.ClientProfile
			return c
		}
	}
	c.profile = ClientProfile{ID: ProfileStandard, StructuredContent: true, ResourceLinks: true}
	return c
}

// clientInfoOf returns the name and version of req.ClientInfo(). That
// method decodes a 2026-07-28 caller's clientInfo from the request's _meta
// by encoding the decoded JSON object again and decoding that, about 32
// KiB of allocations per call with go-sdk's decoder. The object holds
// strings only in practice, and then they are read from it directly;
// anything else is left to ClientInfo, so the answer is the same.
func clientInfoOf(req *mcp.CallToolRequest) (name, version string) {
	if req.Params != nil {
		if m, ok := req.Params.Meta[mcp.MetaKeyClientInfo].(map[string]any); ok {
			if name, version, ok := plainImplementation(m); ok {
				return name, version
			}
		}
	}
	if info := req.ClientInfo(); info != nil {
		return info.Name, info.Version
	}
	return "", ""
}

// plainImplementation reads name and version from m, the JSON object of an
// mcp.Implementation, when every member of m is one of its string fields
// with a string value: then decoding m into an Implementation gives those
// same strings. ok is false for any other object.
func plainImplementation(m map[string]any) (name, version string, ok bool) {
	for k, v := range m {
		switch k {
		case "name", "title", "description", "version", "websiteUrl":
			if _, isString := v.(string); !isString {
				return "", "", false
			}
		default:
			return "", "", false
		}
	}
	name, _ = m["name"].(string)
	version, _ = m["version"].(string)
	return name, version, true
}

// shapeResult returns res as the client of profile p can use it (see
// [ClientProfile]); res itself is left unchanged, since a provider may
// keep it. structuredContent always stays: a client that does not read it
// ignores it.
func shapeResult(res *mcp.CallToolResult, p ClientProfile) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	var structured string
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			structured = string(b)
		}
	}
	// Every client gets text when a tool sent structuredContent alone; a
	// client that does not read structuredContent also gets it when the
	// tool's own text is something else (a summary, say).
	needsText := structured != "" && !slices.ContainsFunc(res.Content, func(c mcp.Content) bool {
		t, ok := c.(*mcp.TextContent)
		return ok && (p.StructuredContent || jsonEqual(t.Text, structured))
	})
	hasLinks := !p.ResourceLinks && slices.ContainsFunc(res.Content, func(c mcp.Content) bool {
		_, ok := c.(*mcp.ResourceLink)
		return ok
	})
	if !needsText && !hasLinks {
		return res
	}
	out := *res
	out.Content = make([]mcp.Content, 0, len(res.Content)+1)
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && !p.ResourceLinks {
			out.Content = append(out.Content, &mcp.TextContent{Text: linkText(l)})
			continue
		}
		out.Content = append(out.Content, c)
	}
	if needsText {
		out.Content = append(out.Content, &mcp.TextContent{Text: structured})
	}
	return &out
}

// jsonEqual reports whether text is JSON of the same value as the JSON
// want (key order and spacing aside).
func jsonEqual(text, want string) bool {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return false
	}
	b, err := json.Marshal(v)
	return err == nil && string(b) == want
}

// linkText names a resource link for a client that cannot follow it.
func linkText(l *mcp.ResourceLink) string {
	s := fmt.Sprintf("Resource %s", l.URI)
	if l.Name != "" {
		s += fmt.Sprintf(" (%s)", l.Name)
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s
}
