package router_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agents-mcp/agents-mcp/router"
)

// sessionlessMeta is the _meta every request of MCP 2026-07-28 carries.
const sessionlessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// callBoth sends method with params (a JSON object's members, without
// braces) once as MCP 2026-07-28 and once in a 2025-11-25 session, and
// returns both results as JSON objects.
func callBoth(t *testing.T, url, method, params string) (sessionless, session map[string]json.RawMessage) {
	t.Helper()
	decode := func(resp *http.Response, data []byte) map[string]json.RawMessage {
		r := decodeReply(t, resp, data)
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
	resp, data := post(t, url, []byte(`{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+sessionlessMeta+sep+params+`}}`),
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method})
	sessionless = decode(resp, data)
	sid := initialize(t, url)
	resp, data = post(t, url, []byte(`{"jsonrpc":"2.0","id":8,"method":"`+method+`","params":{`+params+`}}`),
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	session = decode(resp, data)
	return sessionless, session
}

// tools/validate is our own method: its result carries resultType, which
// 2026-07-28 requires of every result (the TypeScript SDK 2.x client
// refuses a result without it), and only there.
func TestValidateResultTypeOnlyOnTheSessionlessRevision(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	now, before := callBoth(t, srv.URL+"/mcp", router.MethodValidate, `"name":"search_tools","arguments":{"query":"x"}`)
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
