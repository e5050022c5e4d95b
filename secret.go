package agentsmcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// This file is what keeps the secrets of the agents' data (the inputs a
// user gives a task, the arguments of a plan's steps, the text of a
// request) out of the views shown over MCP and the admin API. Stores keep
// them sealed at rest (memory/secrets); the views here show them redacted.

// IsSecretName reports whether an argument or input name names a value to
// keep secret: every key name RedactArguments redacts, and any name that
// holds key, token, password or secret (case-insensitively, '-', '_', '.'
// and spaces ignored).
func IsSecretName(k string) bool {
	n := normalizeKey(k)
	if notSecretKeys[n] {
		return false
	}
	return isSecretKey(k) || containsAny(n, []string{"key", "token", "password", "secret"})
}

// HasSecret reports whether the text s holds something RedactText removes:
// a secret of a known format or pattern, or a token that looks generated.
func HasSecret(s string) bool {
	return redactString(strings.ToValidUTF8(s, "\uFFFD"), len(s)+1) != s
}

// EditSecrets returns the JSON value raw with edit applied to each value
// that may hold a secret: the value of every object key that IsSecretName
// names (named true; null, booleans and the numbers of counting keys such
// as max_tokens excepted, as RedactArguments keeps them), and
// every other string (named false; edit decides, usually with HasSecret).
// edit returns the replacement, or nil to keep the value. Key order is
// kept; raw itself is returned when nothing changed. Input that is not
// valid JSON, or nested deeper than 64 levels, is EINVALID.
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
		return nil, false, Errorf(EINVALID, "JSON nested deeper than %d levels", maxEditDepth)
	}
	if len(raw) == 0 {
		return nil, false, Errorf(EINVALID, "not valid JSON")
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
			return nil, false, Errorf(EINVALID, "not valid JSON")
		}
		return raw, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false, Errorf(EINVALID, "not valid JSON")
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
				return nil, false, Errorf(EINVALID, "not valid JSON")
			}
			key = k
			out.Write(quote(k))
			out.WriteByte(':')
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, Errorf(EINVALID, "not valid JSON")
		}
		v = bytes.TrimSpace(v)
		if object && IsSecretName(key) && string(secretValue(key, v)) == string(quote(Redacted)) {
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
		return nil, false, Errorf(EINVALID, "not valid JSON")
	}
	if object {
		out.WriteByte('}')
	} else {
		out.WriteByte(']')
	}
	return out.Bytes(), changed, nil
}

// RedactSecrets returns raw as shown to people: the values of secret names
// (IsSecretName) become [Redacted], and every other string is cleaned by
// RedactText, whole. Unlike RedactArguments it keeps the shape and length
// of everything else. Input that is not JSON becomes a JSON string saying
// so.
func RedactSecrets(raw json.RawMessage) json.RawMessage {
	out, err := EditSecrets(raw, func(v json.RawMessage, named bool) (json.RawMessage, error) {
		if named {
			return quote(Redacted), nil
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

// redactWhole is RedactText without its length limit.
func redactWhole(s string) string {
	return RedactText(s, 2*len(s)+64)
}

// Redacted returns the view of t shown over MCP and the admin API: its
// inputs and step outputs through RedactSecrets, its request, errors and
// history messages through RedactText. t is unchanged.
func (t *Task) Redacted() *Task {
	c := *t
	c.Request = redactWhole(t.Request)
	c.Inputs = RedactSecrets(t.Inputs)
	c.Error = redactWhole(t.Error)
	c.Steps = slices.Clone(t.Steps)
	for i := range c.Steps {
		c.Steps[i].Error = redactWhole(c.Steps[i].Error)
		if len(c.Steps[i].Output) > 0 {
			// A tool may answer with a secret (a token it issued).
			c.Steps[i].Output = RedactSecrets(c.Steps[i].Output)
		}
		if len(c.Steps[i].RepairedArguments) > 0 {
			// Shown like a plan step's arguments.
			c.Steps[i].RepairedArguments = RedactSecrets(c.Steps[i].RepairedArguments)
		}
	}
	c.History = slices.Clone(t.History)
	for i := range c.History {
		c.History[i].Message = redactWhole(c.History[i].Message)
	}
	c.PrincipalTools = slices.Clone(t.PrincipalTools)
	return &c
}

// Redacted returns the view of p shown over MCP and the admin API: its
// steps' arguments through RedactSecrets, its texts through RedactText. p
// is unchanged.
func (p *Plan) Redacted() *Plan {
	c := *p
	c.Request, c.Goal = redactWhole(p.Request), redactWhole(p.Goal)
	c.Steps = slices.Clone(p.Steps)
	for i := range c.Steps {
		c.Steps[i].Arguments = RedactSecrets(c.Steps[i].Arguments)
		c.Steps[i].Description = redactWhole(c.Steps[i].Description)
	}
	return &c
}

// Redacted returns the view of th shown over MCP and the admin API, its
// texts through RedactText. th is unchanged.
func (th *Thought) Redacted() *Thought {
	c := *th
	c.RedactTexts()
	return &c
}

// RedactTexts removes the secrets RedactText finds from every text of th,
// in place (its lists are copied first): how thoughts are stored, since
// nothing runs from their text.
func (th *Thought) RedactTexts() {
	th.Request, th.Reasoning = redactWhole(th.Request), redactWhole(th.Reasoning)
	for _, l := range []*[]string{&th.SubGoals, &th.Approaches, &th.Constraints, &th.Assumptions, &th.Uncertainties} {
		*l = slices.Clone(*l)
		for i := range *l {
			(*l)[i] = redactWhole((*l)[i])
		}
	}
	th.RecommendedTools = slices.Clone(th.RecommendedTools)
	for i := range th.RecommendedTools {
		th.RecommendedTools[i].Reason = redactWhole(th.RecommendedTools[i].Reason)
	}
}
