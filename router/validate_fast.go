package router

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
// router's CPU on an in-process call. The schemas most tools
// have (inferred from Go types: typed properties, required, no additional
// properties, any-value as anyOf of the six types) fit in this subset.
//
// It knows the 2020-12 dialect (the default) and draft-07 (see
// fastDialects); a schema naming another gets no fast path. It knows these
// keywords: type, properties, required, additionalProperties, items (one
// schema), anyOf, enum and const (of strings, booleans and null),
// minLength, maxLength, minItems, maxItems, minProperties, maxProperties,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum (integers), and the
// annotations, which assert nothing (format among them in 2020-12, where
// the library does not assert it, see ADR 0003). A subschema with any
// other keyword, or with a value of these it does not decide, is
// undecided wherever it is reached.
type fastSchema struct {
	undecided bool     // reaching this subschema sends the instance to the library
	accept    bool     // true, {} or only annotations: every value is valid
	types     []string // nil when the schema has no "type"
	props     map[string]*fastSchema
	required  []string
	// additional is the schema of properties not in props; nil when
	// additionalProperties is absent (any value).
	additional *fastSchema
	items      *fastSchema
	anyOf      []*fastSchema
	// enum holds the allowed values of enum (or the one of const) that a
	// comparison of Go values decides: strings, booleans and null. A
	// number, array or object instance is undecided; so is a value that
	// matches none, for the library to refuse.
	enum    []any
	hasEnum bool // enum or const is present (enum may then be empty)
	// Bounds; nil when absent. Numbers are compared only when both the
	// bound and the instance are integers written without a fraction or
	// exponent that fit in int64.
	minLength, maxLength, minItems, maxItems, minProps, maxProps *int64
	minimum, maximum, exclMinimum, exclMaximum                   *int64
}

// fastDialects are the values of $schema that keep the fast path, and
// whether the library asserts format in that dialect. Absent $schema is
// 2020-12 (ADR 0003). Draft-07 is there because the schemas of TypeScript
// upstreams (zod) name it; for the keywords of the subset it means what
// 2020-12 means, except that the library asserts format there, so format
// is undecided in it.
var fastDialects = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema": false,
	"http://json-schema.org/draft-07/schema#":      true,
	"http://json-schema.org/draft-07/schema":       true,
}

// annotationKeywords assert nothing about an instance in 2020-12.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

var undecided = &fastSchema{undecided: true}

// newFastSchema builds the pre-check of the decoded schema doc (the value
// the library compiled), or nil when the whole schema is undecided.
func newFastSchema(doc any) *fastSchema {
	formatAsserted := false
	if m, ok := doc.(map[string]any); ok {
		if d, ok := m["$schema"]; ok {
			name, _ := d.(string)
			asserted, known := fastDialects[name]
			if !known {
				return nil
			}
			formatAsserted = asserted
		}
	}
	fs := (&fastBuilder{formatAsserted: formatAsserted}).build(doc, true)
	if fs.undecided {
		return nil
	}
	return fs
}

// fastBuilder builds a fastSchema in one dialect.
type fastBuilder struct {
	formatAsserted bool // format is a validation keyword, not an annotation
}

func (b *fastBuilder) build(doc any, root bool) *fastSchema {
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
			case annotationKeywords[k], root && k == "$schema", k == "format" && !b.formatAsserted:
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
					fs.props[name] = b.build(sub, false)
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
				fs.additional = b.build(v, false)
				n++
			case k == "items":
				fs.items = b.build(v, false)
				n++
			case k == "enum" || k == "const":
				if _, both := doc["enum"]; both && k == "const" {
					return undecided // two lists to intersect: left to the library
				}
				list := []any{v}
				if k == "enum" {
					var ok bool
					if list, ok = v.([]any); !ok {
						return undecided
					}
				}
				fs.hasEnum = true
				for _, item := range list {
					switch item.(type) {
					case string, bool, nil:
						fs.enum = append(fs.enum, item)
					}
				}
				n++
			case intKeywords[k] != nil:
				num, ok := v.(json.Number)
				if !ok {
					return undecided
				}
				i, err := strconv.ParseInt(string(num), 10, 64)
				if err != nil {
					return undecided
				}
				*intKeywords[k](fs) = &i
				n++
			case k == "anyOf":
				list, ok := v.([]any)
				if !ok || len(list) == 0 {
					return undecided
				}
				for _, sub := range list {
					fs.anyOf = append(fs.anyOf, b.build(sub, false))
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

// intKeywords are the keywords with an integer value, and where each is
// kept.
var intKeywords = map[string]func(*fastSchema) **int64{
	"minLength":        func(fs *fastSchema) **int64 { return &fs.minLength },
	"maxLength":        func(fs *fastSchema) **int64 { return &fs.maxLength },
	"minItems":         func(fs *fastSchema) **int64 { return &fs.minItems },
	"maxItems":         func(fs *fastSchema) **int64 { return &fs.maxItems },
	"minProperties":    func(fs *fastSchema) **int64 { return &fs.minProps },
	"maxProperties":    func(fs *fastSchema) **int64 { return &fs.maxProps },
	"minimum":          func(fs *fastSchema) **int64 { return &fs.minimum },
	"maximum":          func(fs *fastSchema) **int64 { return &fs.maximum },
	"exclusiveMinimum": func(fs *fastSchema) **int64 { return &fs.exclMinimum },
	"exclusiveMaximum": func(fs *fastSchema) **int64 { return &fs.exclMaximum },
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
	if fs.hasEnum {
		if !slices.Contains(fs.enum, v) {
			return false
		}
	}
	switch v := v.(type) {
	case string:
		if fs.minLength != nil || fs.maxLength != nil {
			if !within(int64(utf8.RuneCountInString(v)), fs.minLength, fs.maxLength) {
				return false
			}
		}
	case json.Number:
		if fs.minimum != nil || fs.maximum != nil || fs.exclMinimum != nil || fs.exclMaximum != nil {
			if strings.ContainsAny(string(v), ".eE") {
				return false
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || !within(n, fs.minimum, fs.maximum) ||
				(fs.exclMinimum != nil && n <= *fs.exclMinimum) || (fs.exclMaximum != nil && n >= *fs.exclMaximum) {
				return false
			}
		}
	case map[string]any:
		if !within(int64(len(v)), fs.minProps, fs.maxProps) {
			return false
		}
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
		if !within(int64(len(v)), fs.minItems, fs.maxItems) {
			return false
		}
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

// within reports whether n is within the bounds that are set.
func within(n int64, lo, hi *int64) bool {
	return (lo == nil || n >= *lo) && (hi == nil || n <= *hi)
}
