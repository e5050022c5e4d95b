package router

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientInfoOfAgreesWithSDK: clientInfoOf reads what ClientInfo
// decodes, for the objects it reads itself and those it leaves to go-sdk,
// and does not allocate for a plain one.
func TestClientInfoOfAgreesWithSDK(t *testing.T) {
	for _, info := range []any{
		map[string]any{"name": "claude-code", "version": "2.1.0"},
		map[string]any{"name": "x", "version": "1", "title": "X", "description": "d", "websiteUrl": "https://example.com"},
		map[string]any{"name": "x"},
		map[string]any{},
		map[string]any{"name": "x", "version": "1", "icons": []any{map[string]any{"src": "https://example.com/i.png"}}},
		map[string]any{"name": "x", "version": 2},
		map[string]any{"Name": "upper", "version": "1"},
		map[string]any{"name": nil, "version": "1"},
		map[string]any{"name": "x", "version": "1", "extra": true},
		&mcp.Implementation{Name: "in-process", Version: "3"},
		"not an object",
		nil,
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t", Meta: mcp.Meta{mcp.MetaKeyClientInfo: info}}}
		var wantName, wantVersion string
		if i := req.ClientInfo(); i != nil {
			wantName, wantVersion = i.Name, i.Version
		}
		if name, version := clientInfoOf(req); name != wantName || version != wantVersion {
			t.Errorf("clientInfoOf(%#v) = %q, %q; ClientInfo says %q, %q", info, name, version, wantName, wantVersion)
		}
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t", Meta: mcp.Meta{
		mcp.MetaKeyClientInfo: map[string]any{"name": "claude-code", "version": "2.1.0"}}}}
	if n := testing.AllocsPerRun(100, func() { _, _ = clientInfoOf(req) }); n != 0 {
		t.Errorf("clientInfoOf allocates %v times for a plain clientInfo; want 0", n)
	}
	if name, _ := clientInfoOf(&mcp.CallToolRequest{}); name != "" {
		t.Errorf("clientInfoOf of a request without params = %q", name)
	}
}
