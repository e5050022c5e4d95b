package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/mock"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// TestEachEntryPointComputesTheCapabilitiesOfItsClient calls one tool
// through each entry point and checks the protocol capabilities the
// provider finds in its context: those of a 2025 session (its revision,
// its declared sampling, its session to ask on), of a sessionless
// request (its _meta's, answered through input_required), none for the
// REST bridge, and for an in-process call those of its own request, not
// those of the outer request whose values it carries.
func TestEachEntryPointComputesTheCapabilitiesOfItsClient(t *testing.T) {
	var mu sync.Mutex
	var seen []mcpwire.Capabilities
	probe := &mock.ToolProvider{
		NameFn: func() string { return "up" },
		ToolsFn: func(context.Context) ([]*mcp.Tool, error) {
			return []*mcp.Tool{{Name: "up__probe", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
		},
		CallToolFn: func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, ok := mcpwire.CapabilitiesFrom(ctx)
			if !ok {
				t.Error("a call reached the provider without capabilities in its context")
			}
			mu.Lock()
			seen = append(seen, c)
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		},
	}
	last := func() mcpwire.Capabilities {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			t.Fatal("the provider was not called")
		}
		c := seen[len(seen)-1]
		seen = nil
		return c
	}
	r, srv := routertest.NewHTTPServer(t, router.HTTPOptions{}, func(testing.TB, *router.Router) agentsmcp.ToolProvider { return probe })
	ctx := t.Context()

	// A 2025-11-25 session that declared sampling (in memory, as stdio).
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { return nil, nil }})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__probe"}); err != nil {
		t.Fatal(err)
	}
	if c := last(); c.Channel() != mcpwire.ChannelSession || c.Sessionless() || !c.CanSample() || c.Elicitation() || c.Revision() != "2025-11-25" {
		t.Errorf("2025 session: revision %q channel %v sampling %v elicitation %v", c.Revision(), c.Channel(), c.CanSample(), c.Elicitation())
	}

	// A sessionless request over streamable HTTP that declares elicitation
	// and the Tasks extension.
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"up__probe","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	resp, data := routertest.Post(t, srv.URL+"/mcp", []byte(body), map[string]string{
		"Mcp-Protocol-Version": mcpwire.ProtocolSessionless, "Mcp-Method": "tools/call", "Mcp-Name": "up__probe"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sessionless call: %d %s", resp.StatusCode, data)
	}
	sessionless := last()
	if c := sessionless; c.Channel() != mcpwire.ChannelInputRequired || !c.Sessionless() || !c.CanElicit() || c.Sampling() || !c.Tasks() {
		t.Errorf("sessionless request: revision %q channel %v elicit %v sampling %v tasks %v", c.Revision(), c.Channel(), c.CanElicit(), c.Sampling(), c.Tasks())
	}

	// The REST bridge: no MCP client.
	resp, data = routertest.Post(t, srv.URL+router.RESTBridgePath, []byte(`{"tool":"up__probe"}`), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("REST bridge: %d %s", resp.StatusCode, data)
	}
	if c := last(); c.Channel() != mcpwire.ChannelNone || c.Revision() != "" || c.Declared() != nil {
		t.Errorf("REST bridge: revision %q channel %v declared %v", c.Revision(), c.Channel(), c.Declared())
	}

	// In process, under the values of the sessionless request above (an
	// executor step): nobody to ask.
	if _, err := r.CallTool(mcpwire.WithCapabilities(ctx, sessionless), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__probe"}}); err != nil {
		t.Fatal(err)
	}
	if c := last(); c.Channel() != mcpwire.ChannelNone || c.Sessionless() || c.Elicitation() {
		t.Errorf("in-process call: revision %q channel %v elicitation %v, want none of the outer request's", c.Revision(), c.Channel(), c.Elicitation())
	}
}
