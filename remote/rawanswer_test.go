package remote

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The raw path decodes an upstream's message as json.Unmarshal does, on
// the direct path and off it.
func TestDecodeRawMessageAsUnmarshal(t *testing.T) {
	cases := []string{
		`{"jsonrpc":"2.0","id":"agents-mcp-1","result":{"content":[{"type":"text","text":"Echo: hello"}]}}`,
		" {\n \"jsonrpc\" : \"2.0\" ,\"id\" : 7 , \"result\" : { \"a\" : [ 1 , \"}]\\\"\" ] } } \n",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[]}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad"}}`,
		`{"id":"x","error":{"code":1,"message":"a"},"error":{"data":2}}`,
		`{"id":null,"result":null,"params":null,"method":null}`,
		`{"id":"a","id":"b","result":{},"result":[]}`,
		`{"ID":"x","Result":{}}`,
		`{"iD":"x","rEsult":{}}`,
		`{"method":"a\u00e9"}`,
		`{"method":"a\"b"}`,
		`{"method":"é"}`,
		`{"method":1}`,
		`{"method":"ok","other":{"id":"inner"},"id":"outer"}`,
		`{"\u0069d":"escaped key"}`,
		`{"ſ":1,"K":2}`,
		`{}`,
		` {} `,
		`[]`,
		`"x"`,
		`null`,
		``,
		`{`,
		`{"id":"x",}`,
		`{"id":"x"} {}`,
		`{"id":"x","result":{"s":"` + "\xff" + `"}}`,
		`{"id":-1.5e3,"result":true}`,
		`{"result":"str","params":[1,[2,{"a":"]"}]]}`,
	}
	for i, c := range cases {
		checkDecodeRawMessage(t, i, []byte(c))
	}
	for _, i := range []int{0, 1, 2, 3, 7, 14, 17, 27, 28} { // the direct way's kind
		if _, ok := scanRawMessage([]byte(cases[i])); !ok {
			t.Errorf("case %d %q: not decoded the direct way", i, cases[i])
		}
	}
}

func checkDecodeRawMessage(t *testing.T, i int, data []byte) {
	t.Helper()
	orig := string(data)
	got, gotErr := decodeRawMessage(data)
	want := new(rawMessage)
	wantErr := json.Unmarshal(data, want)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("case %d %q: error %v, json.Unmarshal's %v", i, orig, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if !reflect.DeepEqual(normalizeRaw(got), normalizeRaw(want)) {
		t.Fatalf("case %d %q:\n got  %+v\n want %+v", i, orig, got, want)
	}
	// The message does not share the caller's buffer (a pooled one).
	for j := range data {
		data[j] = 'X'
	}
	if len(got.Result) > 0 && got.Result[0] == 'X' || len(got.ID) > 0 && got.ID[0] == 'X' || len(got.Params) > 0 && got.Params[0] == 'X' {
		t.Fatalf("case %d %q: the message shares the input's memory", i, orig)
	}
}

// normalizeRaw makes an empty and a nil json.RawMessage compare the same
// (both mean the key was absent); strings are compared as strings.
func normalizeRaw(m *rawMessage) map[string]any {
	s := func(r json.RawMessage) any {
		if r == nil {
			return nil
		}
		return string(r)
	}
	return map[string]any{"id": s(m.ID), "method": m.Method, "params": s(m.Params), "result": s(m.Result), "error": m.Error}
}

func FuzzDecodeRawMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"agents-mcp-1","result":{"content":[{"type":"text","text":"Echo: hi"}]}}`))
	f.Add([]byte(`{"method":"notifications/message","params":{"level":"info","data":"x"}}`))
	f.Add([]byte(` { "Id" : [ "a" , { } ] , "error" : null } `))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeRawMessage(t, 0, data)
	})
}

// BenchmarkDecodeRawMessage decodes an upstream's answer to a relayed call:
// decode=unmarshal is the json.Unmarshal the raw path used before
// decodeRawMessage.
func BenchmarkDecodeRawMessage(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":"agents-mcp-12345","result":{"content":[{"type":"text","text":"Echo: hello"}],"structuredContent":{"echo":"hello"}}}`)
	b.Run("decode=scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeRawMessage(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode=unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := json.Unmarshal(data, new(rawMessage)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
