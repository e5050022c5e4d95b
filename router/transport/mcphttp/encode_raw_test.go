package mcphttp

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawTestResult encodes as raw, as the router's relayed result does.
type rawTestResult struct {
	*mcp.CallToolResult
	raw json.RawMessage
}

func (r rawTestResult) MarshalJSON() ([]byte, error)   { return r.raw, nil }
func (r rawTestResult) RawResultJSON() json.RawMessage { return r.raw }

// TestEncodeRawResponseAsGeneric: a result that is JSON already is
// answered with the very bytes the generic encoding gives it (go-sdk's
// encoder around the result's MarshalJSON), for ids of both kinds and
// results with spaces, HTML characters, escapes, U+2028 and non-ASCII
// text; invalid JSON fails as the generic encoding fails.
func TestEncodeRawResponseAsGeneric(t *testing.T) {
	ids := []any{float64(7), float64(-1), "agents-mcp-3", "<&>\u2028é\"x"}
	results := []string{
		`{"content":[{"type":"text","text":"Echo: hello"}]}`,
		"{ \"content\" : [ {\"type\":\"text\", \"text\":\"hi <there> & é\"} ],\n\t\"isError\": false }",
		`{"content":[{"type":"text","text":"\u003c\u2028 \\ \" \ud83d\ude00"}],"structuredContent":{"n":1.5e3,"a":[true,null]}}`,
		"{\"text\":\"\u2028\u2029 raw separators\"}",
		`{}`,
	}
	for _, v := range ids {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range results {
			res := rawTestResult{CallToolResult: &mcp.CallToolResult{}, raw: json.RawMessage(raw)}
			got, err := encodeResponse(id, res, nil)
			if err != nil {
				t.Fatalf("id %v, %s: %v", v, raw, err)
			}
			want, err := encodeResponseValue(id, res, nil)
			if err != nil {
				t.Fatalf("id %v, %s: generic: %v", v, raw, err)
			}
			if string(got) != string(want) {
				t.Errorf("id %v, %s:\n got %s\nwant %s", v, raw, got, want)
			}
		}
	}
	id, _ := jsonrpc.MakeID(float64(1))
	if _, err := encodeResponse(id, rawTestResult{CallToolResult: &mcp.CallToolResult{}, raw: json.RawMessage(`{"a":`)}, nil); err == nil {
		t.Error("invalid JSON was encoded")
	}
}

// BenchmarkEncodeResponse encodes the answer to a relayed echo call.
func BenchmarkEncodeResponse(b *testing.B) {
	id, _ := jsonrpc.MakeID(float64(7))
	res := rawTestResult{CallToolResult: &mcp.CallToolResult{}, raw: json.RawMessage(`{"content":[{"type":"text","text":"Echo: hello"}]}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeResponse(id, res, nil); err != nil {
			b.Fatal(err)
		}
	}
}
