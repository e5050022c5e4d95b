package remote

import (
	"bytes"
	"encoding/json"
)

// decodeRawMessage decodes one JSON-RPC message of the raw path, as
// json.Unmarshal(data, msg) does, into a new rawMessage that does not share
// data's memory.
//
// Why not json.Unmarshal alone: it scans the message twice (validating,
// then decoding, where each json.RawMessage field is skipped over once
// more) and copies each field on its own; perf put 2 % of a relayed call's
// CPU there. A usual message (an object whose keys are plain ASCII and
// spelled exactly as rawMessage's, without "error", whose "method" is a
// plain string) is validated once, its fields found by a byte scan that
// needs no validation, and copied once. Any other message goes through
// json.Unmarshal, so the result (and the errors) are json.Unmarshal's in
// every case (TestDecodeRawMessageAsUnmarshal, FuzzDecodeRawMessage).
func decodeRawMessage(data []byte) (*rawMessage, error) {
	if msg, ok := scanRawMessage(data); ok {
		return msg, nil
	}
	msg := new(rawMessage)
	if err := json.Unmarshal(data, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// scanRawMessage is decodeRawMessage's direct way; false when the message
// is not of the usual kind.
func scanRawMessage(data []byte) (*rawMessage, bool) {
	i := skipJSONSpace(data, 0)
	if i == len(data) || data[i] != '{' || !json.Valid(data) {
		return nil, false
	}
	data = bytes.Clone(data) // one copy, which the fields share
	msg := new(rawMessage)
	i = skipJSONSpace(data, i+1)
	if data[i] == '}' {
		return msg, true
	}
	for {
		// A key: a string, plain (valid JSON, so it ends at the next quote
		// when it holds no backslash).
		end := bytes.IndexByte(data[i+1:], '"') + i + 1
		key := data[i+1 : end]
		if !plainKey(key) {
			return nil, false
		}
		i = skipJSONSpace(data, end+1) // at ':'
		i = skipJSONSpace(data, i+1)   // at the value
		vend := skipJSONValue(data, i) // after it
		value := data[i:vend:vend]
		switch string(key) {
		case "id":
			msg.ID = value
		case "params":
			msg.Params = value
		case "result":
			msg.Result = value
		case "method":
			if value[0] != '"' || !plainKey(value[1:len(value)-1]) {
				return nil, false
			}
			msg.Method = string(value[1 : len(value)-1])
		case "error":
			return nil, false
		default:
			if foldsToField(key) {
				return nil, false
			}
		}
		i = skipJSONSpace(data, vend)
		if data[i] == '}' {
			return msg, true
		}
		i = skipJSONSpace(data, i+1) // after ','
	}
}

// rawMessageFields are rawMessage's JSON names.
var rawMessageFields = []string{"id", "method", "params", "result", "error"}

// plainKey reports whether an object key, as it stands between its quotes,
// is printable ASCII without escapes: what json.Unmarshal matches against
// field names as it stands, case aside.
func plainKey(k []byte) bool {
	for _, c := range k {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// foldsToField reports whether json.Unmarshal would match key, not spelled
// exactly as any of rawMessage's names, to one of them case-insensitively.
func foldsToField(key []byte) bool {
	for _, f := range rawMessageFields {
		if bytes.EqualFold(key, []byte(f)) {
			return true
		}
	}
	return false
}

// skipJSONSpace returns the index of the first byte at or after i that is
// not JSON whitespace.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipJSONValue returns the index just after the value that starts at i in
// valid JSON.
func skipJSONValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipJSONString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipJSONString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // a number or a literal
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipJSONString returns the index just after the string that starts at i
// (its opening quote) in valid JSON.
func skipJSONString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}
