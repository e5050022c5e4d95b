package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// sessionlessMeta is the _meta every request of MCP 2026-07-28 carries.
const sessionlessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// callBoth sends method with params (a JSON object's members, without
// braces) once as MCP 2026-07-28, with headers added, and once in a
// 2025-11-25 session, and returns both results as JSON objects.
func callBoth(t *testing.T, url, method, params string, headers map[string]string) (sessionless, session map[string]json.RawMessage) {
	t.Helper()
	decode := func(resp *http.Response, data []byte) map[string]json.RawMessage {
		r := routertest.DecodeReply(t, resp, data)
		if r.Error != nil {
			t.Fatalf("%s: %d %s", method, r.Error.Code, r.Error.Message)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r.Result, &fields); err != nil {
			t.Fatalf("%s: result %s: %v", method, r.Result, err)
		}
		return fields
	}
	sep := ""
	if params != "" {
		sep = ","
	}
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	maps.Copy(h, headers)
	resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+sessionlessMeta+sep+params+`}}`), h)
	sessionless = decode(resp, data)
	sid := routertest.Initialize(t, url)
	resp, data = routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":8,"method":"`+method+`","params":{`+params+`}}`),
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	session = decode(resp, data)
	return sessionless, session
}

// tools/validate is our own method: its result carries resultType, which
// 2026-07-28 requires of every result (the TypeScript SDK 2.x client
// refuses a result without it), and only there.
func TestValidateResultTypeOnlyOnTheSessionlessRevision(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	now, before := callBoth(t, srv.URL+"/mcp", router.MethodValidate, `"name":"search_tools","arguments":{"query":"x"}`, nil)
	if string(now["resultType"]) != `"complete"` {
		t.Errorf("2026-07-28: resultType %s, want \"complete\"", now["resultType"])
	}
	if string(now["valid"]) != "true" || string(before["valid"]) != "true" {
		t.Errorf("valid: %s and %s", now["valid"], before["valid"])
	}
	if rt, ok := before["resultType"]; ok {
		t.Errorf("2025-11-25: resultType %s, which that revision does not define", rt)
	}
}

// ttlMs and cacheScope are 2026-07-28 fields: earlier revisions' list
// results and resources/read do not carry them.
func TestCacheHintsOnlyOnTheSessionlessRevision(t *testing.T) {
	r, srv := newHTTPServer(t, router.HTTPOptions{})
	r.Server().AddResource(&mcp.Resource{URI: "test://note", Name: "note"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://note", Text: "hi"}}}, nil
	})
	for method, params := range map[string]string{"tools/list": "", "prompts/list": "", "resources/list": "", "resources/templates/list": "", "resources/read": `"uri":"test://note"`} {
		now, before := callBoth(t, srv.URL+"/mcp", method, params, map[string]string{"Mcp-Name": "test://note"})
		for _, field := range []string{"ttlMs", "cacheScope"} {
			if _, ok := now[field]; !ok {
				t.Errorf("%s on 2026-07-28: no %s", method, field)
			}
			if v, ok := before[field]; ok {
				t.Errorf("%s on 2025-11-25: %s is %s, a field that revision does not define", method, field, v)
			}
		}
		if method == "tools/list" {
			// Without params (a nil params pointer in the SDK).
			sid := routertest.Initialize(t, srv.URL+"/mcp")
			resp, data := routertest.Post(t, srv.URL+"/mcp", []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`),
				map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
			if reply := routertest.DecodeReply(t, resp, data); reply.Error != nil || bytes.Contains(reply.Result, []byte("ttlMs")) {
				t.Errorf("tools/list without params on 2025-11-25: %s", data)
			}
			if _, ok := before["tools"]; !ok {
				t.Errorf("tools/list on 2025-11-25 lost its tools: %v", before)
			}
		}
	}
}
