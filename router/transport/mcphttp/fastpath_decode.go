package mcphttp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fastToolCall is a tools/call request as the fast path reads it
// (fastpath.go).
type fastToolCall struct {
	id   jsonrpc.ID
	name string
	args json.RawMessage // an object, as it came; nil when absent
}

// parseFastToolCall decodes body if it is a tools/call that go-sdk would
// certainly decode to the same request, and reports false otherwise (go-sdk
// then decides, as before). It accepts only what [passesPlainly] accepts
// (members jsonrpc "2.0", method, id and params, each once and no other,
// no escapes in those, valid UTF-8, bounded nesting), with method
// "tools/call", an id, and params an object whose members are "name" (a
// string without escapes) and optionally "arguments" (an object), each
// once and no other. So every request with _meta (a progress token, a
// protocol version, the Tasks extension), a task, input responses, a null
// or non-object argument value, or a member spelled in another case goes
// to go-sdk. The id is made as go-sdk makes it: a string as is, an integer
// through the float64 its decoder yields.
func parseFastToolCall(body []byte) (c fastToolCall, ok bool) {
	if !passesPlainly(body) {
		return c, false
	}
	var idRaw, params []byte
	method := false
	i := skipJSONSpace(body, 1)
	for {
		key, next, _ := plainJSONString(body, i)
		i = skipJSONSpace(body, next)
		i = skipJSONSpace(body, i+1) // the colon
		end := skipJSONValue(body, i)
		val := body[i:end]
		switch string(key) {
		case "method":
			method = string(val) == `"tools/call"`
		case "id":
			idRaw = val
		case "params":
			params = val
		}
		i = skipJSONSpace(body, end)
		if body[i] == '}' {
			break
		}
		i = skipJSONSpace(body, i+1)
	}
	if !method || idRaw == nil || len(params) == 0 || params[0] != '{' {
		return c, false
	}
	if s, n, ok := plainJSONString(idRaw, 0); ok && n == len(idRaw) {
		c.id, _ = jsonrpc.MakeID(string(s))
	} else {
		n, err := strconv.ParseInt(string(idRaw), 10, 64)
		if err != nil {
			return c, false
		}
		// passesPlainly admits at most 15 digits: exact as a float64.
		c.id, _ = jsonrpc.MakeID(float64(n))
	}
	name, args, ok := parseFastParams(params)
	if !ok {
		return fastToolCall{}, false
	}
	c.name, c.args = name, args
	return c, true
}

// parseFastParams reads the params object of [parseFastToolCall]; params
// is a valid JSON object (the whole message is valid JSON).
func parseFastParams(params []byte) (name string, args json.RawMessage, ok bool) {
	i := skipJSONSpace(params, 1)
	if i >= len(params) || params[i] == '}' {
		return "", nil, false
	}
	hasName := false
	for {
		key, next, ok := plainJSONString(params, i)
		if !ok {
			return "", nil, false
		}
		i = skipJSONSpace(params, next)
		if i >= len(params) || params[i] != ':' {
			return "", nil, false
		}
		i = skipJSONSpace(params, i+1)
		end := skipJSONValue(params, i)
		if end < 0 {
			return "", nil, false
		}
		val := params[i:end]
		switch string(key) {
		case "name":
			s, n, ok := plainJSONString(val, 0)
			if !ok || n != len(val) || hasName {
				return "", nil, false
			}
			name, hasName = string(s), true
		case "arguments":
			if args != nil || val[0] != '{' {
				return "", nil, false
			}
			// A copy: the body is the guard's pooled buffer, and the
			// arguments outlive the request in the audit trail.
			args = bytes.Clone(val)
		default:
			return "", nil, false
		}
		i = skipJSONSpace(params, end)
		if i >= len(params) {
			return "", nil, false
		}
		if params[i] == '}' {
			break
		}
		if params[i] != ',' {
			return "", nil, false
		}
		i = skipJSONSpace(params, i+1)
	}
	return name, args, hasName
}
