package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/mock"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// resultProvider answers each of its tools, provider "up"'s, with a
// fixed result.
func resultProvider(results map[string]*mcp.CallToolResult) *mock.ToolProvider {
	return &mock.ToolProvider{
		NameFn: func() string { return "up" },
		ToolsFn: func(context.Context) ([]*mcp.Tool, error) {
			var out []*mcp.Tool
			for name := range results {
				out = append(out, rawTool(name, `{"type":"object"}`))
			}
			return out, nil
		},
		CallToolFn: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return results[req.Params.Name], nil
		},
	}
}

// TestClientProfilesShapeResultsAndAreRecorded calls a tool that answers
// with a resource link and one that answers with structuredContent alone,
// as a client of MCP 2025-11-25, as one of 2025-03-26 (which has no
// resource links) and as a sessionless one of 2026-07-28, over real HTTP: each gets what it can use, and the
// record of each call names the client and its profile.
func TestClientProfilesShapeResultsAndAreRecorded(t *testing.T) {
	var mu sync.Mutex
	var records []router.ToolCallRecord
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		mu.Lock()
		records = append(records, c)
		mu.Unlock()
	}})
	link := &mcp.ResourceLink{URI: "upstream://up/file:///report.txt", Name: "report.txt", Description: "the report"}
	up := resultProvider(map[string]*mcp.CallToolResult{
		"up__link":       {Content: []mcp.Content{&mcp.TextContent{Text: "see the report"}, link}},
		"up__structured": {StructuredContent: map[string]any{"temperature": 21, "conditions": "sunny"}},
		"up__summary":    {Content: []mcp.Content{&mcp.TextContent{Text: "sunny, 21°"}}, StructuredContent: map[string]any{"temperature": 21}},
	})
	if err := r.AddProvider(context.Background(), up); err != nil {
		t.Fatal(err)
	}
	h := r.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); r.CloseSessions(context.Background()); srv.Close() })
	url := srv.URL + "/mcp"

	// session opens a session as client name speaking protocol.
	session := func(name, protocol string) map[string]string {
		resp, data := routertest.Post(t, url, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":%q,"version":"9.1"}}}`, protocol, name), nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize %s: %d %s", protocol, resp.StatusCode, data)
		}
		hdr := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": protocol}
		routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr)
		return hdr
	}
	call := func(hdr map[string]string, tool string) (content []map[string]any, structured any) {
		resp, data := routertest.Post(t, url, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, tool), hdr)
		reply := routertest.DecodeReply(t, resp, data)
		var res struct {
			Content           []map[string]any `json:"content"`
			StructuredContent any              `json:"structuredContent"`
		}
		if reply.Error != nil || json.Unmarshal(reply.Result, &res) != nil {
			t.Fatalf("tools/call %s: %s", tool, data)
		}
		return res.Content, res.StructuredContent
	}
	types := func(content []map[string]any) []string {
		var out []string
		for _, c := range content {
			out = append(out, c["type"].(string))
		}
		return out
	}
	hasText := func(content []map[string]any, want string) bool {
		return slices.ContainsFunc(content, func(c map[string]any) bool { return c["type"] == "text" && strings.Contains(c["text"].(string), want) })
	}

	modern := session("modern-client", "2025-11-25")
	legacy := session("legacy-client", "2025-03-26")

	// Resource links: kept for the modern client, text for the legacy one.
	if got := types(first(call(modern, "up__link"))); !slices.Equal(got, []string{"text", "resource_link"}) {
		t.Errorf("modern client, resource link: content types %v", got)
	}
	legacyLink := first(call(legacy, "up__link"))
	if got := types(legacyLink); !slices.Equal(got, []string{"text", "text"}) || !hasText(legacyLink, "upstream://up/file:///report.txt (report.txt): the report") {
		t.Errorf("legacy client, resource link: %v; want the link as text", legacyLink)
	}
	// structuredContent alone: every client gets it as text too.
	for name, hdr := range map[string]map[string]string{"modern": modern, "legacy": legacy} {
		content, structured := call(hdr, "up__structured")
		if structured == nil || !hasText(content, `"conditions":"sunny"`) {
			t.Errorf("%s client, structuredContent alone: %v %v; want it kept and as text", name, content, structured)
		}
	}
	// structuredContent with a summary: the client that does not read it
	// gets the whole answer as text; the modern one gets the tool's own.
	if content, _ := call(modern, "up__summary"); len(content) != 1 {
		t.Errorf("modern client, summary and structuredContent: %v; want the tool's content only", content)
	}
	if content, _ := call(legacy, "up__summary"); !hasText(content, `{"temperature":21}`) || !hasText(content, "sunny, 21°") {
		t.Errorf("legacy client, summary and structuredContent: %v; want both as text", content)
	}

	// A client of MCP 2026-07-28 has no session: its request's _meta
	// names it and its protocol version.
	resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"up__link","arguments":{},"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
		`"io.modelcontextprotocol/clientInfo":{"name":"sessionless-client","version":"9.1"}}}}`),
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "up__link"})
	if reply := routertest.DecodeReply(t, resp, data); reply.Error != nil || !strings.Contains(string(reply.Result), `"resource_link"`) {
		t.Errorf("2026-07-28 tools/call: %d %s; want the resource link kept", resp.StatusCode, data)
	}

	mu.Lock()
	defer mu.Unlock()
	seen := map[string]int{}
	for _, rec := range records {
		seen[rec.Client+"/"+rec.ClientVersion+" "+rec.ClientProfile]++
	}
	if seen["modern-client/9.1 standard"] != 3 || seen["legacy-client/9.1 legacy"] != 3 || seen["sessionless-client/9.1 standard"] != 1 {
		t.Errorf("records by client and profile: %v; want 3 calls of each session's client and 1 of the sessionless one, with its profile", seen)
	}
}

func first[A, B any](a A, _ B) A { return a }
