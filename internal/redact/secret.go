package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// This file is what keeps the secrets of the agents' data (the inputs a
// user gives a task, the arguments of a plan's steps, the text of a
// request) out of the views shown over MCP and the admin API. Stores keep
// them sealed at rest (memory/secrets); the views here show them redacted.

// IsSecretName reports whether an argument or input name names a value to
// keep secret: every key name Arguments redacts, and any name that
// holds key, token, password or secret (case-insensitively, '-', '_', '.'
// and spaces ignored).
func IsSecretName(k string) bool {
	n := normalizeKey(k)
	if notSecretKeys[n] {
		return false
	}
	return isSecretKey(k) || containsAny(n, []string{"key", "token", "password", "secret"})
}

// HasSecret reports whether the text s holds something Text removes:
// a secret of a known format or pattern, or a token that looks generated.
func HasSecret(s string) bool {
	return redactString(strings.ToValidUTF8(s, "\uFFFD"), len(s)+1) != s
}

// EditSecrets returns the JSON value raw with edit applied to each value
// that may hold a secret: the value of every object key that IsSecretName
// names (named true; null, booleans and the numbers of counting keys such
// as max_tokens excepted, as Arguments keeps them), and
// every other string (named false; edit decides, usually with HasSecret).
// edit returns the replacement, or nil to keep the value. Key order is
// kept; raw itself is returned when nothing changed. Input that is not
// valid JSON, or nested deeper than 64 levels, is an [*InvalidError].
func EditSecrets(raw json.RawMessage, edit func(v json.RawMessage, named bool) (json.RawMessage, error)) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw, nil
	}
	out, changed, err := editSecrets(bytes.TrimSpace(raw), 0, edit)
	if err != nil || !changed {
		return raw, err
	}
	return out, nil
}

const maxEditDepth = 64

func editSecrets(raw []byte, depth int, edit func(json.RawMessage, bool) (json.RawMessage, error)) ([]byte, bool, error) {
	if depth > maxEditDepth {
		return nil, false, invalidf("JSON nested deeper than %d levels", maxEditDepth)
	}
	if len(raw) == 0 {
		return nil, false, invalidf("not valid JSON")
	}
	switch raw[0] {
	case '"':
		r, err := edit(json.RawMessage(raw), false)
		if err != nil || r == nil {
			return raw, false, err
		}
		return r, true, nil
	case '{', '[':
	default:
		if !json.Valid(raw) {
			return nil, false, invalidf("not valid JSON")
		}
		return raw, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false, invalidf("not valid JSON")
	}
	object := raw[0] == '{'
	var out bytes.Buffer
	out.WriteByte(raw[0])
	changed := false
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		key := ""
		if object {
			tok, err := dec.Token()
			k, ok := tok.(string)
			if err != nil || !ok {
				return nil, false, invalidf("not valid JSON")
			}
			key = k
			out.Write(quote(k))
			out.WriteByte(':')
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, invalidf("not valid JSON")
		}
		v = bytes.TrimSpace(v)
		if object && IsSecretName(key) && string(secretValue(key, v)) == string(quote(Marker)) {
			r, err := edit(v, true)
			if err != nil {
				return nil, false, err
			}
			if r != nil {
				v, changed = r, true
			}
		} else {
			r, c, err := editSecrets(v, depth+1, edit)
			if err != nil {
				return nil, false, err
			}
			v, changed = r, changed || c
		}
		out.Write(v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, invalidf("not valid JSON")
	}
	if object {
		out.WriteByte('}')
	} else {
		out.WriteByte(']')
	}
	return out.Bytes(), changed, nil
}

// Secrets returns raw as shown to people: the values of secret names
// (IsSecretName) become [Marker], and every other string is cleaned by
// Text, whole. Unlike Arguments it keeps the shape and length
// of everything else. Input that is not JSON becomes a JSON string saying
// so.
func Secrets(raw json.RawMessage) json.RawMessage {
	out, err := EditSecrets(raw, func(v json.RawMessage, named bool) (json.RawMessage, error) {
		if named {
			return quote(Marker), nil
		}
		var s string
		if json.Unmarshal(v, &s) != nil || !HasSecret(s) {
			return nil, nil
		}
		return quote(redactWhole(s)), nil
	})
	if err != nil {
		return notJSON(len(raw))
	}
	return out
}

// redactWhole is Text without its length limit.
func redactWhole(s string) string {
	return Text(s, 2*len(s)+64)
}
