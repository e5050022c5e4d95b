package remote

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The raw path's request is the bytes json.Marshal makes of the call, for
// every kind of name and arguments, on the direct path and off it.
func TestRawCallBodyAsMarshal(t *testing.T) {
	cases := []*mcp.CallToolParams{
		{Name: "echo", Arguments: json.RawMessage(`{"message":"hello"}`)},
		{Name: "echo", Arguments: json.RawMessage(" {\n\t\"message\" : \"hi there\" , \"n\": [1, 2 ,3]}\r\n")},
		{Name: "echo", Arguments: json.RawMessage(`{"html":"<b>&amp;</b>","sep":"a` + "\u2028" + `b` + "\u2029" + `c"}`)},
		{Name: "echo", Arguments: json.RawMessage(`{"esc":"\u003c\"\\\n","uni":"é😀"}`)},
		{Name: "echo", Arguments: json.RawMessage(`{"amp":"a&b"}`)},
		{Name: "echo", Arguments: json.RawMessage(`{"gt":"a>b","q":"\\\" x"}`)},
		{Name: "echo", Arguments: json.RawMessage(`{"sep":"` + "\u2029" + `"}`)},
		{Name: "echo", Arguments: json.RawMessage(`[]`)},
		{Name: "echo", Arguments: json.RawMessage(`null`)},
		{Name: "echo", Arguments: json.RawMessage(`{}`)},
		{Name: "echo", Arguments: json.RawMessage(`{"a":1}  `)},
		{Name: "echo", Arguments: json.RawMessage(`{"a":1} {}`)}, // two values: json.Marshal's error
		{Name: "echo", Arguments: json.RawMessage(`{"a":tru}`)},  // invalid
		{Name: "echo", Arguments: json.RawMessage(`{"a":"` + "\xff" + `"}`)},
		{Name: "echo", Arguments: json.RawMessage(nil)},
		{Name: "echo", Arguments: json.RawMessage{}},
		{Name: "echo", Arguments: nil},
		{Name: "echo", Arguments: map[string]any{"b": 2, "a": "<x>"}},
		{Name: `a"b\c<d>&e`, Arguments: json.RawMessage(`{}`)},
		{Name: "tab\there", Arguments: json.RawMessage(`{}`)},
		{Name: "naïve", Arguments: json.RawMessage(`{}`)},
		{Name: "bad\xffutf8", Arguments: json.RawMessage(`{}`)},
		{Name: "sep\u2028", Arguments: json.RawMessage(`{}`)},
		{Name: "", Arguments: json.RawMessage(`{}`)},
		{Name: "echo", Meta: mcp.Meta{"progressToken": "p<1>"}, Arguments: json.RawMessage(`{"x":1}`)},
		{Name: "echo", Meta: mcp.Meta{}, Arguments: json.RawMessage(`{"x":1}`)},
		{Name: "echo", RequestState: "s", Arguments: json.RawMessage(`{"x":1}`)},
	}
	for i, p := range cases {
		checkRawCallBody(t, i, p)
	}
}

func checkRawCallBody(t *testing.T, i int, p *mcp.CallToolParams) {
	t.Helper()
	const id = "agents-mcp-17"
	got, gotErr := rawCallBody(id, p)
	want, wantErr := envelopeCall(id, p)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("case %d (%q): error %v, json.Marshal's %v", i, p.Name, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("case %d (%q):\n got  %s\n want %s", i, p.Name, got, want)
	}
	if gotErr == nil && !json.Valid(got) {
		t.Fatalf("case %d: not JSON: %s", i, got)
	}
}

func FuzzRawCallBody(f *testing.F) {
	f.Add("echo", []byte(`{"message":"hello"}`))
	f.Add("a<b", []byte(" { \"k\" : [1,\"<&>\u2028\"] } "))
	f.Add("x", []byte(`{"a":1} x`))
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		checkRawCallBody(t, 0, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	})
}

// BenchmarkRawCallBody writes the request of a relayed call: envelope=marshal
// is the json.Marshal way the raw path took before rawCallBody.
func BenchmarkRawCallBody(b *testing.B) {
	p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hello","count":3,"tags":["a","b"]}`)}
	b.Run("envelope=direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rawCallBody("agents-mcp-12345", p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("envelope=marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := envelopeCall("agents-mcp-12345", p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
