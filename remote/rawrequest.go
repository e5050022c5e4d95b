package remote

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawCallBody is the JSON-RPC request of the raw path's tools/call with the
// string id id: the bytes the envelope around json.Marshal(params) makes.
//
// Why not json.Marshal alone: perf put 2 % of a relayed call's CPU in it,
// most of that reflection and encoder-cache lookups over CallToolParams.
// The usual call (a tool name of plain characters, arguments that are
// already JSON, no _meta, no input responses, no request state) is written
// here directly, the arguments compacted and HTML-escaped as encoding/json
// does for a json.RawMessage; any other call goes through json.Marshal, so
// the bytes (and the errors) are json.Marshal's in every case.
func rawCallBody(id string, params *mcp.CallToolParams) ([]byte, error) {
	args, ok := params.Arguments.(json.RawMessage)
	if !ok || len(args) == 0 || len(params.Meta) > 0 || len(params.InputResponses) > 0 || params.RequestState != "" || !plainJSONString(params.Name) {
		return envelopeCall(id, params)
	}
	// Not from a pool: net/http may still be writing the body when the
	// answer is in (an upstream that answers before reading it all).
	const head, mid, tail = `{"jsonrpc":"2.0","id":"`, `","method":"tools/call","params":{"name":"`, `","arguments":`
	body := make([]byte, 0, len(head)+len(id)+len(mid)+len(params.Name)+len(tail)+len(args)+len("}}"))
	body = append(body, head...)
	body = append(body, id...)
	body = append(body, mid...)
	body = append(body, params.Name...)
	body = append(body, tail...)
	switch {
	case !json.Valid(args):
		return envelopeCall(id, params) // json.Marshal's error
	case compactAndPlain(args):
		body = append(body, args...)
	default:
		var buf bytes.Buffer
		_ = json.Compact(&buf, args) // valid, so no error
		if needsHTMLEscape(buf.Bytes()) {
			var esc bytes.Buffer
			json.HTMLEscape(&esc, buf.Bytes())
			buf = esc
		}
		body = append(body, buf.Bytes()...)
	}
	return append(body, "}}"...), nil
}

// envelopeCall is rawCallBody by json.Marshal.
func envelopeCall(id string, params *mcp.CallToolParams) ([]byte, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 0, len(p)+len(id)+64)
	body = append(body, `{"jsonrpc":"2.0","id":"`...)
	body = append(body, id...)
	body = append(body, `","method":"tools/call","params":`...)
	body = append(body, p...)
	return append(body, '}'), nil
}

// plainJSONString reports whether encoding/json writes s as itself between
// quotes: printable ASCII without the characters it escapes (", \ and the
// HTML-sensitive <, > and &).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// compactAndPlain reports whether valid JSON is already as encoding/json
// writes it in a json.RawMessage it marshals: no whitespace outside strings,
// nothing needsHTMLEscape finds.
func compactAndPlain(b []byte) bool {
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8:
			return false
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}

// needsHTMLEscape reports whether compacted JSON holds a character that
// encoding/json escapes in a json.RawMessage it marshals: <, >, & or the
// line and paragraph separators U+2028 and U+2029 (E2 80 A8/A9 in UTF-8).
func needsHTMLEscape(b []byte) bool {
	return bytes.ContainsAny(b, "<>&") || bytes.Contains(b, []byte("\u2028")) || bytes.Contains(b, []byte("\u2029"))
}
