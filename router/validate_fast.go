package router

import (
	"encoding/json"
	"strings"
)

// fastSchema is a conservative pre-check of a tool's input schema: for the
// keywords it knows it can prove an instance valid, and when it can, the
// library's validator is skipped. It never refuses: an instance it cannot
// prove valid, because it is invalid or because it meets a keyword or a
// value it does not decide, goes to the library, which alone writes
// refusals. So refusals are the library's, word for word, and a bug here
// could only accept what the library would refuse, which
// FuzzValidateDifferential checks against the previous validation.
//
// Why: the library's validator allocates a validator, a scope and
// evaluation tracking for every value and every subschema it visits, and
// formats each number with fmt to check "integer"; it was most of the
// router's CPU on an in-process call (issue 17). The schemas most tools
// have (inferred from Go types: typed properties, required, no additional
// properties, any-value as anyOf of the six types) fit in this subset.
//
// It knows only the 2020-12 dialect (the default; a schema naming another
// gets no fast path) and these keywords: type, properties, required,
// additionalProperties, items (one schema), anyOf, and the annotations,
// which assert nothing. A subschema with any other keyword is undecided
// wherever it is reached.
type fastSchema struct {
	undecided bool     // reaching this subschema sends the instance to the library
	accept    bool     // the schema true or {}: every value is valid
	types     []string // nil when the schema has no "type"
	props     map[string]*fastSchema
	required  []string
	// additional is the schema of properties not in props; nil when
	// additionalProperties is absent (any value).
	additional *fastSchema
	items      *fastSchema
	anyOf      []*fastSchema
}

// draft2020 names the dialect a schema may declare and keep the fast path.
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// annotationKeywords assert nothing about an instance in 2020-12.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

var undecided = &fastSchema{undecided: true}

// newFastSchema builds the pre-check of the decoded schema doc (the value
// the library compiled), or nil when the whole schema is undecided.
func newFastSchema(doc any) *fastSchema {
	if m, ok := doc.(map[string]any); ok {
		if d, ok := m["$schema"]; ok && d != draft2020 {
			return nil
		}
	}
	fs := buildFastSchema(doc, true)
	if fs.undecided {
		return nil
	}
	return fs
}

func buildFastSchema(doc any, root bool) *fastSchema {
	switch doc := doc.(type) {
	case bool:
		if doc {
			return &fastSchema{accept: true}
		}
		return undecided
	case map[string]any:
		fs := &fastSchema{}
		n := 0 // keywords that assert something
		for k, v := range doc {
			switch {
			case annotationKeywords[k], root && k == "$schema":
			case k == "type":
				if fs.types = typeNames(v); fs.types == nil {
					return undecided
				}
				n++
			case k == "properties":
				pm, ok := v.(map[string]any)
				if !ok {
					return undecided
				}
				fs.props = make(map[string]*fastSchema, len(pm))
				for name, sub := range pm {
					fs.props[name] = buildFastSchema(sub, false)
				}
				n++
			case k == "required":
				list, ok := v.([]any)
				if !ok {
					return undecided
				}
				for _, name := range list {
					s, ok := name.(string)
					if !ok {
						return undecided
					}
					fs.required = append(fs.required, s)
				}
				n++
			case k == "additionalProperties":
				fs.additional = buildFastSchema(v, false)
				n++
			case k == "items":
				fs.items = buildFastSchema(v, false)
				n++
			case k == "anyOf":
				list, ok := v.([]any)
				if !ok || len(list) == 0 {
					return undecided
				}
				for _, sub := range list {
					fs.anyOf = append(fs.anyOf, buildFastSchema(sub, false))
				}
				n++
			default:
				return undecided
			}
		}
		fs.accept = n == 0
		return fs
	}
	return undecided
}

// typeNames reads "type", a name or a list of names, or returns nil.
func typeNames(v any) []string {
	known := func(s string) bool {
		switch s {
		case "object", "array", "string", "number", "integer", "boolean", "null":
			return true
		}
		return false
	}
	switch v := v.(type) {
	case string:
		if known(v) {
			return []string{v}
		}
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]string, 0, len(v))
		for _, t := range v {
			s, ok := t.(string)
			if !ok || !known(s) {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

// valid reports whether it can prove v (a value from [decodeArguments])
// valid; false means invalid or undecided.
func (fs *fastSchema) valid(v any) bool {
	if fs.undecided {
		return false
	}
	if fs.accept {
		return true
	}
	if fs.types != nil && !fastTypeMatches(fs.types, v) {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		for _, name := range fs.required {
			if _, ok := v[name]; !ok {
				return false
			}
		}
		if fs.props != nil || fs.additional != nil {
			for name, pv := range v {
				sub, ok := fs.props[name]
				if !ok {
					sub = fs.additional
				}
				if sub != nil && !sub.valid(pv) {
					return false
				}
			}
		}
	case []any:
		if fs.items != nil {
			for _, item := range v {
				if !fs.items.valid(item) {
					return false
				}
			}
		}
	}
	if fs.anyOf != nil {
		for _, branch := range fs.anyOf {
			if branch.valid(v) {
				return true
			}
		}
		return false
	}
	return true
}

// fastTypeMatches decides "type" for v. A number counts as an integer only
// when its literal has no fraction or exponent: the library also accepts
// 1.0 and 1e2, which are left to it.
func fastTypeMatches(types []string, v any) bool {
	for _, t := range types {
		switch v := v.(type) {
		case map[string]any:
			if t == "object" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case nil:
			if t == "null" {
				return true
			}
		case json.Number:
			if t == "number" || (t == "integer" && !strings.ContainsAny(string(v), ".eE")) {
				return true
			}
		}
	}
	return false
}
