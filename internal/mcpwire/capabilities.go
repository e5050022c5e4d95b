package mcpwire

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Capabilities is what the client of one request speaks and can receive:
// the revision it negotiated, the capabilities it declared, and the
// [Channel] on which a server can ask it something in the middle of a
// call. The edge that receives a request computes it once and puts it in
// the request's context ([WithCapabilities]); every consumer reads it
// there ([CapabilitiesFrom], [CallCapabilities]) through its methods, so
// that no consumer derives protocol facts from strings of its own.
//
// The edges are: the router's receiving middleware for go-sdk's sessions
// (streamable HTTP, legacy SSE, stdio, sessionless requests included), the
// tools/call fast paths ([SessionCapabilities]), the REST bridge (the zero
// value: no MCP client), subscriptions/listen ([MetaCapabilities]) and
// the router's in-process calls ([RequestCapabilities] of the step's own
// request, never the values of the outer request it runs under).
//
// The zero value is a caller without an MCP client: no revision, nothing
// declared, no channel.
type Capabilities struct {
	revision Revision
	channel  Channel
	// declared is a session's capabilities (2025-*), or nil.
	declared *mcp.ClientCapabilities
	// meta is the clientCapabilities object of a sessionless request's
	// own _meta, or nil.
	meta map[string]any
}

// Channel is how a server reaches a client in the middle of a call.
type Channel int

const (
	// ChannelNone: the client cannot be asked anything (the REST bridge,
	// an in-process call without a session, or one made on behalf of a
	// sessionless client, whose retries only its own requests carry).
	ChannelNone Channel = iota
	// ChannelSession: server-to-client requests (elicitation, sampling,
	// roots/list, ping) on the client's session, MCP before 2026-07-28.
	ChannelSession
	// ChannelInputRequired: input_required results that the client
	// answers by retrying its request (MCP 2026-07-28, SEP-2322); the
	// server sends it no requests.
	ChannelInputRequired
)

// SessionCapabilities are those of a request on a session that init
// opened: the session's revision and declared capabilities, and
// [ChannelSession] unless the revision is sessionless. init may be nil (a
// session not yet initialized).
func SessionCapabilities(init *mcp.InitializeParams) Capabilities {
	if init == nil {
		return Capabilities{channel: ChannelSession}
	}
	c := Capabilities{revision: Revision(init.ProtocolVersion), channel: ChannelSession, declared: init.Capabilities}
	if c.revision.Sessionless() {
		c.channel = ChannelNone
	}
	return c
}

// MetaCapabilities are those of a request without a session that carries
// its revision and capabilities in its own _meta (MCP 2026-07-28): the
// revision is meta's, else header's (Mcp-Protocol-Version); the channel is
// [ChannelInputRequired] when that revision is sessionless.
func MetaCapabilities(meta map[string]any, header string) Capabilities {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	if v == "" {
		v = header
	}
	c := Capabilities{revision: Revision(v)}
	if c.revision.Sessionless() {
		c.channel = ChannelInputRequired
		c.meta, _ = meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	}
	return c
}

// RequestCapabilities are those of req, a request go-sdk's server hands
// its middleware or a request a caller builds in-process: a request whose
// own _meta names a sessionless revision is answered through
// input_required ([MetaCapabilities]); any other is its session's
// ([SessionCapabilities]), or the zero value without a session. A request
// without _meta on behalf of a sessionless session (an executor step of a
// task a 2026-07-28 request started) thus has [ChannelNone].
func RequestCapabilities(req mcp.Request) Capabilities {
	if req == nil {
		return Capabilities{}
	}
	var meta map[string]any
	// A request without params has a nil pointer of its params type.
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		meta = p.GetMeta()
	}
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); Revision(v).Sessionless() {
		return MetaCapabilities(meta, "")
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return Capabilities{}
	}
	return SessionCapabilities(ss.InitializeParams())
}

type capabilitiesKey struct{}

// WithCapabilities returns ctx carrying c, for the edge that computed it.
func WithCapabilities(ctx context.Context, c Capabilities) context.Context {
	return context.WithValue(ctx, capabilitiesKey{}, c)
}

// CapabilitiesFrom returns the capabilities an edge put in ctx; ok is
// false when none did.
func CapabilitiesFrom(ctx context.Context) (c Capabilities, ok bool) {
	c, ok = ctx.Value(capabilitiesKey{}).(Capabilities)
	return c, ok
}

// CallCapabilities returns the capabilities in ctx, else
// [RequestCapabilities] of req: for a provider handed a request by a caller
// that passed no edge (a test, a provider calling another directly).
func CallCapabilities(ctx context.Context, req mcp.Request) Capabilities {
	if c, ok := CapabilitiesFrom(ctx); ok {
		return c
	}
	return RequestCapabilities(req)
}

// Revision is the revision the client negotiated (its session's) or sends
// on each request (sessionless); "" when unknown.
func (c Capabilities) Revision() Revision { return c.revision }

// Sessionless reports whether the client speaks a sessionless revision
// ([Revision.Sessionless]), whatever the channel of this request.
func (c Capabilities) Sessionless() bool { return c.revision.Sessionless() }

// Channel is how the client of this request can be asked something in
// the middle of the call.
func (c Capabilities) Channel() Channel { return c.channel }

// Elicitation reports whether the client declared elicitation.
func (c Capabilities) Elicitation() bool {
	if c.meta != nil {
		return c.meta["elicitation"] != nil
	}
	return c.declared != nil && c.declared.Elicitation != nil
}

// Sampling reports whether the client declared sampling.
func (c Capabilities) Sampling() bool {
	if c.meta != nil {
		return c.meta["sampling"] != nil
	}
	return c.declared != nil && c.declared.Sampling != nil
}

// Roots reports whether the client declared roots.
func (c Capabilities) Roots() bool {
	if c.meta != nil {
		return c.meta["roots"] != nil
	}
	return c.declared != nil && (c.declared.RootsV2 != nil || c.declared.Roots.ListChanged)
}

// Tasks reports whether the client declared the Tasks extension
// (TasksExtension) in its request's own _meta, which only a
// sessionless revision does.
func (c Capabilities) Tasks() bool {
	if !c.Sessionless() || c.meta == nil {
		return false
	}
	exts, _ := c.meta["extensions"].(map[string]any)
	_, ok := exts[TasksExtension]
	return ok
}

// CanElicit reports whether the client declared elicitation and this
// request has a channel to ask it on.
func (c Capabilities) CanElicit() bool { return c.channel != ChannelNone && c.Elicitation() }

// CanSample reports whether the client declared sampling and this request
// has a channel to ask it on.
func (c Capabilities) CanSample() bool { return c.channel != ChannelNone && c.Sampling() }

// Declared returns the capabilities the client declared, as go-sdk
// decodes them (nil when none): what a relay passes on to an upstream. A
// sessionless request's are decoded from its _meta on each call.
func (c Capabilities) Declared() *mcp.ClientCapabilities {
	if c.meta == nil {
		return c.declared
	}
	data, err := json.Marshal(c.meta)
	if err != nil {
		return nil
	}
	// As go-sdk's ServerRequest.ClientCapabilities decodes _meta: roots
	// is an object of its own in 2026-07-28.
	var v struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	caps := v.ClientCapabilities
	caps.RootsV2 = v.Roots
	if v.Roots != nil {
		caps.Roots.ListChanged = v.Roots.ListChanged
	}
	return &caps
}
