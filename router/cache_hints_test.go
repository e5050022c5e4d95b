package router_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// TestCacheHintsOfTheRouter: on 2026-07-28 the list results are private
// and stale at once (what they show depends on the caller, its mode and
// the virtual server; list_changed tells of changes); a resources/read
// keeps its ttlMs and is public only when the server serves every caller
// alike (no credentials) and the resource said public, else private.
func TestCacheHintsOfTheRouter(t *testing.T) {
	addNote := func(s router.Server) {
		s.AddResource(&mcp.Resource{URI: "test://note", Name: "note"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{TTLMs: 5000, CacheScope: "public"},
				Contents: []*mcp.ResourceContents{{URI: "test://note", Text: "hi"}}}, nil
		})
	}
	r, open := newHTTPServer(t, router.HTTPOptions{})
	addNote(r.Server())
	f := newVirtualFixture(t)
	addNote(f.router.Server())
	withKey := map[string]string{"Mcp-Name": "test://note", "Authorization": "Bearer wide"}

	for _, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		for name, c := range map[string]struct {
			url     string
			headers map[string]string
		}{"no credentials": {open.URL + "/mcp", nil}, "a key": {f.srv.URL + "/mcp", withKey}} {
			now := resultOf2026(t, c.url, method, "", c.headers)
			if string(now["cacheScope"]) != `"private"` || string(now["ttlMs"]) != "0" {
				t.Errorf("%s (%s): ttlMs %s cacheScope %s, want 0 and private", method, name, now["ttlMs"], now["cacheScope"])
			}
		}
	}
	now := resultOf2026(t, open.URL+"/mcp", "resources/read", `"uri":"test://note"`, map[string]string{"Mcp-Name": "test://note"})
	if string(now["cacheScope"]) != `"public"` || string(now["ttlMs"]) != "5000" {
		t.Errorf("resources/read without credentials: ttlMs %s cacheScope %s, want 5000 and public", now["ttlMs"], now["cacheScope"])
	}
	now = resultOf2026(t, f.srv.URL+"/mcp", "resources/read", `"uri":"test://note"`, withKey)
	if string(now["cacheScope"]) != `"private"` || string(now["ttlMs"]) != "5000" {
		t.Errorf("resources/read with a key: ttlMs %s cacheScope %s, want 5000 and private", now["ttlMs"], now["cacheScope"])
	}
}

// resultOf2026 sends method with params (JSON members, or "") as a 2026-07-28
// request with headers and returns the result's fields.
func resultOf2026(t *testing.T, url, method, params string, headers map[string]string) map[string]json.RawMessage {
	t.Helper()
	if params != "" {
		params = "," + params
	}
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	maps.Copy(h, headers)
	resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+sessionlessMeta+params+`}}`), h)
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
