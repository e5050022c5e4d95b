package mcphttp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzParseFastToolCall checks the fast path's decoder against go-sdk's on
// arbitrary JSON: whatever it accepts, go-sdk must decode to a tools/call
// with the same id, tool name and arguments, and nothing else in params.
func FuzzParseFastToolCall(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"a"}}`,
		`{"params":{"arguments":{"a":[1,{"b":"\""}]},"name":"n"},"method":"tools/call","id":-0,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"a"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"jsonrpc":"2.0","id":123456789012345,"method":"tools/call","params":{ "name" : "é" , "arguments" : { } }}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return // the guard answers it before the fast path sees it
		}
		c, ok := parseFastToolCall(body)
		if !ok {
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("fast path accepts %q; go-sdk: %v", body, err)
		}
		req, isReq := msg.(*jsonrpc.Request)
		if !isReq || req.Method != "tools/call" || req.ID != c.id {
			t.Fatalf("fast path reads %q as a call %v; go-sdk decodes %#v", body, c.id, msg)
		}
		var p mcp.CallToolParamsRaw
		if err := json.Unmarshal(req.Params, &p); err != nil {
			t.Fatalf("params of %q: %v", body, err)
		}
		if p.Name != c.name || !bytes.Equal(p.Arguments, c.args) || p.Meta != nil || p.RequestState != "" || p.InputResponses != nil {
			t.Fatalf("fast path reads %q as %q %s; go-sdk as %+v", body, c.name, c.args, p)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(req.Params, &members); err != nil {
			t.Fatal(err)
		}
		for k := range members {
			if k != "name" && k != "arguments" {
				t.Fatalf("fast path accepts %q with params member %q", body, k)
			}
		}
	})
}
