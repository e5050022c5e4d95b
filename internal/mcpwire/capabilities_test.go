package mcpwire

import (
	"context"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCapabilities(t *testing.T) {
	declared := map[string]any{
		"elicitation": map[string]any{},
		"roots":       map[string]any{},
		"extensions":  map[string]any{TasksExtension: map[string]any{}},
	}
	for _, tt := range []struct {
		name                                  string
		caps                                  Capabilities
		revision                              Revision
		channel                               Channel
		sessionless, elicit, sample, roots    bool
		tasks, canElicit, canSample, declares bool
	}{
		{name: "no client", caps: Capabilities{}, channel: ChannelNone},
		{name: "2025 session", revision: "2025-11-25", channel: ChannelSession,
			caps: SessionCapabilities(&mcp.InitializeParams{ProtocolVersion: "2025-11-25",
				Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}}),
			sample: true, canSample: true, declares: true},
		{name: "uninitialized session", caps: SessionCapabilities(nil), channel: ChannelSession},
		{name: "sessionless session, no request of its own", revision: ProtocolSessionless, channel: ChannelNone,
			caps: SessionCapabilities(&mcp.InitializeParams{ProtocolVersion: ProtocolSessionless,
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}),
			sessionless: true, elicit: true, declares: true},
		{name: "sessionless request", revision: ProtocolSessionless, channel: ChannelInputRequired,
			caps: MetaCapabilities(map[string]any{mcp.MetaKeyProtocolVersion: ProtocolSessionless,
				mcp.MetaKeyClientCapabilities: declared}, ""),
			sessionless: true, elicit: true, roots: true, tasks: true, canElicit: true, declares: true},
		{name: "revision from the header", revision: ProtocolSessionless, channel: ChannelInputRequired,
			caps:        MetaCapabilities(nil, ProtocolSessionless),
			sessionless: true},
		{name: "2025 revision in _meta", revision: "2025-11-25", channel: ChannelNone,
			caps: MetaCapabilities(map[string]any{mcp.MetaKeyProtocolVersion: "2025-11-25",
				mcp.MetaKeyClientCapabilities: declared}, "")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.caps
			if c.Revision() != tt.revision || c.Channel() != tt.channel || c.Sessionless() != tt.sessionless {
				t.Errorf("revision %q channel %v sessionless %v, want %q %v %v", c.Revision(), c.Channel(), c.Sessionless(), tt.revision, tt.channel, tt.sessionless)
			}
			if c.Elicitation() != tt.elicit || c.Sampling() != tt.sample || c.Roots() != tt.roots || c.Tasks() != tt.tasks {
				t.Errorf("elicitation %v sampling %v roots %v tasks %v, want %v %v %v %v",
					c.Elicitation(), c.Sampling(), c.Roots(), c.Tasks(), tt.elicit, tt.sample, tt.roots, tt.tasks)
			}
			if c.CanElicit() != tt.canElicit || c.CanSample() != tt.canSample {
				t.Errorf("CanElicit %v CanSample %v, want %v %v", c.CanElicit(), c.CanSample(), tt.canElicit, tt.canSample)
			}
			if d := c.Declared(); (d != nil) != tt.declares {
				t.Errorf("Declared() = %+v, want declared %v", d, tt.declares)
			}
		})
	}
}

// A sessionless request's declared capabilities decode as go-sdk decodes
// them, roots included.
func TestCapabilitiesDeclaredFromMeta(t *testing.T) {
	c := MetaCapabilities(map[string]any{mcp.MetaKeyProtocolVersion: ProtocolSessionless,
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{"listChanged": true}}}, "")
	d := c.Declared()
	if d == nil || d.Elicitation == nil || d.Sampling != nil || d.RootsV2 == nil || !d.Roots.ListChanged {
		t.Fatalf("Declared() = %+v", d)
	}
}

func TestRequestCapabilities(t *testing.T) {
	meta := mcp.Meta{mcp.MetaKeyProtocolVersion: ProtocolSessionless,
		mcp.MetaKeyClientCapabilities: map[string]any{"sampling": map[string]any{}}}
	if c := RequestCapabilities(&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta}}); c.Channel() != ChannelInputRequired || !c.CanSample() {
		t.Errorf("sessionless request: %+v", c)
	}
	if c := RequestCapabilities(&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}}); !reflect.DeepEqual(c, Capabilities{}) {
		t.Errorf("request without a session or _meta: %+v, want the zero value", c)
	}
	if c := RequestCapabilities(&mcp.CallToolRequest{}); !reflect.DeepEqual(c, Capabilities{}) {
		t.Errorf("request without params: %+v", c)
	}
	if c := RequestCapabilities(nil); !reflect.DeepEqual(c, Capabilities{}) {
		t.Errorf("nil request: %+v", c)
	}

	ctx := context.Background()
	if _, ok := CapabilitiesFrom(ctx); ok {
		t.Error("CapabilitiesFrom of an empty context reports capabilities")
	}
	edge := SessionCapabilities(&mcp.InitializeParams{ProtocolVersion: "2025-06-18"})
	ctx = WithCapabilities(ctx, edge)
	if c, ok := CapabilitiesFrom(ctx); !ok || !reflect.DeepEqual(c, edge) {
		t.Errorf("CapabilitiesFrom = %+v, %v", c, ok)
	}
	// What the edge computed wins over the request's own _meta.
	if c := CallCapabilities(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta}}); !reflect.DeepEqual(c, edge) {
		t.Errorf("CallCapabilities = %+v, want the edge's", c)
	}
}
