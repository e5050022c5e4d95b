package mcphttp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// passesPlainly must only ever say "pass" where the full decode passes too;
// these cases pin which messages take the fast path and that the tricky ones
// (which the SDK decoder may judge differently from a naive reading) do not.
func TestPassesPlainlyAgreesWithDecode(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`
	for _, tc := range []struct {
		body string
		fast bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__echo","arguments":{"message":"hi"}}}`, true},
		{` { "jsonrpc" : "2.0" , "id" : "abc" , "method" : "ping" } `[1:], true},
		{`{"method":"notifications/initialized","jsonrpc":"2.0"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, true},
		{`{"jsonrpc":"2.0","id":-12,"method":"tools/list","params":{"cursor":"x\"y\\z","n":[1,{"a":"]}"}]}}`, true},
		{`{"jsonrpc":"2.0","id":123456789012345,"method":"ping"}`, true},
		// Left to the full decode:
		{`{"jsonrpc":"2.0","id":1234567890123456,"method":"ping"}`, false},                       // not exact as float64
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false},                                    // not an integer literal
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, false},                                   // null id
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, false},                                   // invalid id type
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, false},                                     // invalid id type
		{`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`, false},                                 // escape in id
		{`{"jsonrpc":"2.0","id":1,"method":"pi\u006eg"}`, false},                                 // escape in method
		{`{"jsonrpc":"2.0","id":1,"method":"nope"}`, false},                                      // unknown method
		{`{"jsonrpc":"2.0","id":1,"method":""}`, false},                                          // empty method
		{`{"jsonrpc":"2.0","method":"ping"}`, false},                                             // call without id
		{`{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}`, false},                 // notification with id
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, false},                                      // wrong version
		{`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, false},                                 // escaped version
		{`{"id":1,"method":"ping"}`, false},                                                      // no version
		{`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, false},                                      // case differs
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"notifications/initialized"}`, false}, // duplicate
		{`{"jsonrpc":"2.0","id":1,"method":"notifications/initialized","Method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, false},               // other member
		{`{"jsonrpc":"2.0","id":1,"method":"ping","error":1}`, false},                 // other member
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},                               // a response
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"` + "\xff" + `"}`, false}, // invalid UTF-8
		{deep, false}, // beyond the SDK's nesting limit
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false}, // a batch (handled by check)
		{`{}`, false},
		{`"x"`, false},
	} {
		body := []byte(tc.body)
		if got := passesPlainly(body); got != tc.fast {
			t.Errorf("passesPlainly(%.80s) = %v, want %v", tc.body, got, tc.fast)
		}
		if json.Valid(body) && passesPlainly(body) {
			if _, _, code, msg := checkDecoded(body); code != 0 {
				t.Errorf("fast path passes %.80s, the full decode answers %d %s", tc.body, code, msg)
			}
		}
	}
}

// FuzzPassesPlainly checks the fast path against the full decode on
// arbitrary input: whatever it passes, the decode must pass.
func FuzzPassesPlainly(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping","params":{"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		body = bytes.TrimSpace(body)
		if !json.Valid(body) || !passesPlainly(body) {
			return
		}
		if status, _, code, msg := checkDecoded(body); code != 0 {
			t.Fatalf("fast path passes %q; the full decode answers %d, %d %s", body, status, code, msg)
		}
	})
}
