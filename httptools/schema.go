package httptools

import (
	"regexp"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	"go.yaml.in/yaml/v4"
)

// This file turns the schemas of an OpenAPI document into self-contained
// JSON Schema (draft 2020-12, the MCP default dialect), with every $ref
// expanded in place.

// maxSchemaDepth bounds how deep a converted schema nests: a schema that is
// deeper (or that expands shared parts to more than maxSchemaNodes nodes) is
// cut there, and the cut accepts anything.
const (
	maxSchemaDepth = 24
	maxSchemaNodes = 4000
)

// schemaConverter converts the schemas of one tool: the node budget is per
// tool, so one huge operation cannot starve the others.
type schemaConverter struct {
	nodes int
	// doc counts the nodes of the whole document against its [Budget];
	// nil counts nothing.
	doc *loadBudget
	// refs are the $refs being expanded on the way from the root to the
	// current schema: a $ref met again is a cycle.
	refs []string
}

// permissive is the schema put where a schema cannot be expanded: a cycle,
// the depth or size bound, or a reference that was not resolved (a remote
// one, say). It accepts any value, so that it never refuses arguments the
// API would take.
func permissive(why string) map[string]any {
	return map[string]any{"description": why}
}

// convert returns the JSON Schema of sp, or a permissive schema when sp is
// nil or cannot be built.
func (c *schemaConverter) convert(sp *base.SchemaProxy) map[string]any {
	return c.proxy(sp, 0)
}

func (c *schemaConverter) proxy(sp *base.SchemaProxy, depth int) map[string]any {
	if sp == nil {
		return map[string]any{}
	}
	if depth > maxSchemaDepth {
		return permissive("(nested too deep to describe here)")
	}
	c.nodes++
	if c.nodes > maxSchemaNodes || !c.doc.takeNode() {
		return permissive("(too large to describe here)")
	}
	if sp.IsReference() {
		ref := sp.GetReference()
		for _, r := range c.refs {
			if r == ref {
				return c.cycle(sp, ref)
			}
		}
		c.refs = append(c.refs, ref)
		defer func() { c.refs = c.refs[:len(c.refs)-1] }()
	}
	s := sp.Schema()
	if s == nil {
		return permissive("(schema not available: " + refName(sp.GetReference()) + ")")
	}
	return c.schema(s, depth)
}

// cycle is the schema put where a $ref meets itself again: the type of
// the schema it names (a permissive object, for the usual recursive
// object), with no further constraint, and a description saying what it
// stands for.
func (c *schemaConverter) cycle(sp *base.SchemaProxy, ref string) map[string]any {
	out := permissive("(recursive: the same shape as " + refName(ref) + ")")
	s := sp.Schema()
	if s == nil || len(s.Type) != 1 || !jsonTypes[s.Type[0]] {
		return out
	}
	if s.Nullable != nil && *s.Nullable && s.Type[0] != "null" {
		out["type"] = []any{s.Type[0], "null"}
	} else {
		out["type"] = s.Type[0]
	}
	return out
}

// refName shortens a $ref for a description: "#/components/schemas/Pet"
// becomes "Pet".
func refName(ref string) string {
	if i := strings.LastIndex(ref, "/"); i >= 0 && i < len(ref)-1 {
		return ref[i+1:]
	}
	if ref == "" {
		return "unresolved"
	}
	return ref
}

func (c *schemaConverter) list(sps []*base.SchemaProxy, depth int) []any {
	out := make([]any, 0, len(sps))
	for _, sp := range sps {
		out = append(out, c.proxy(sp, depth+1))
	}
	return out
}

// schema converts one resolved schema. OpenAPI 3.0's nullable becomes a
// "null" type, its boolean exclusive bounds become 2020-12 numbers, and
// keywords that are OpenAPI's own (discriminator, xml, example) are left
// out; a pattern that Go's regexp (the validator's engine) cannot compile
// is left out too, so that every schema compiles.
func (c *schemaConverter) schema(s *base.Schema, depth int) map[string]any {
	out := map[string]any{}
	var types []string
	for _, t := range s.Type {
		// Swagger 2.0's "file" and other non-JSON-Schema types would
		// make the schema fail to compile.
		if jsonTypes[t] && !contains(types, t) {
			types = append(types, t)
		}
	}
	if s.Nullable != nil && *s.Nullable && len(types) > 0 && !contains(types, "null") {
		types = append(types, "null")
	}
	switch len(types) {
	case 0:
	case 1:
		out["type"] = types[0]
	default:
		ts := make([]any, len(types))
		for i, t := range types {
			ts[i] = t
		}
		out["type"] = ts
	}
	if s.Title != "" {
		out["title"] = s.Title
	}
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err == nil {
			out["pattern"] = s.Pattern
		}
	}
	setNum := func(k string, v *float64) {
		if v != nil {
			out[k] = *v
		}
	}
	setInt := func(k string, v *int64) {
		if v != nil && *v >= 0 {
			out[k] = *v
		}
	}
	setNum("minimum", s.Minimum)
	setNum("maximum", s.Maximum)
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		out["multipleOf"] = *s.MultipleOf
	}
	exclusive := func(k, bound string, v *base.DynamicValue[bool, float64]) {
		if v == nil {
			return
		}
		if v.IsB() {
			out[k] = v.B
			return
		}
		// 3.0: a boolean that makes minimum/maximum exclusive.
		if b, ok := out[bound]; ok && v.A {
			out[k] = b
			delete(out, bound)
		}
	}
	exclusive("exclusiveMinimum", "minimum", s.ExclusiveMinimum)
	exclusive("exclusiveMaximum", "maximum", s.ExclusiveMaximum)
	setInt("minLength", s.MinLength)
	setInt("maxLength", s.MaxLength)
	setInt("minItems", s.MinItems)
	setInt("maxItems", s.MaxItems)
	setInt("minProperties", s.MinProperties)
	setInt("maxProperties", s.MaxProperties)
	if s.UniqueItems != nil && *s.UniqueItems {
		out["uniqueItems"] = true
	}
	if len(s.Enum) > 0 {
		vals := make([]any, 0, len(s.Enum))
		for _, n := range s.Enum {
			if v, ok := nodeValue(n); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) > 0 {
			if contains(types, "null") && !containsValue(vals, nil) {
				vals = append(vals, nil)
			}
			out["enum"] = vals
		}
	}
	if v, ok := nodeValue(s.Const); ok {
		out["const"] = v
	}
	if v, ok := nodeValue(s.Default); ok {
		out["default"] = v
	}
	if s.ReadOnly != nil && *s.ReadOnly {
		out["readOnly"] = true
	}
	if s.WriteOnly != nil && *s.WriteOnly {
		out["writeOnly"] = true
	}
	if s.Deprecated != nil && *s.Deprecated {
		out["deprecated"] = true
	}
	if s.Properties != nil && s.Properties.Len() > 0 {
		props := map[string]any{}
		for name, p := range s.Properties.FromOldest() {
			props[name] = c.proxy(p, depth+1)
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		req := make([]any, 0, len(s.Required))
		seen := map[string]bool{}
		for _, r := range s.Required {
			if !seen[r] {
				seen[r] = true
				req = append(req, r)
			}
		}
		out["required"] = req
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.IsA() && ap.A != nil {
			out["additionalProperties"] = c.proxy(ap.A, depth+1)
		} else if ap.IsB() {
			out["additionalProperties"] = ap.B
		}
	}
	if s.PatternProperties != nil && s.PatternProperties.Len() > 0 {
		pp := map[string]any{}
		for pat, p := range s.PatternProperties.FromOldest() {
			if _, err := regexp.Compile(pat); err == nil {
				pp[pat] = c.proxy(p, depth+1)
			}
		}
		if len(pp) > 0 {
			out["patternProperties"] = pp
		}
	}
	if it := s.Items; it != nil {
		if it.IsA() && it.A != nil {
			out["items"] = c.proxy(it.A, depth+1)
		} else if it.IsB() {
			out["items"] = it.B
		}
	}
	if len(s.PrefixItems) > 0 {
		out["prefixItems"] = c.list(s.PrefixItems, depth)
	}
	if len(s.AllOf) > 0 {
		out["allOf"] = c.list(s.AllOf, depth)
	}
	if len(s.AnyOf) > 0 {
		out["anyOf"] = c.list(s.AnyOf, depth)
	}
	if len(s.OneOf) > 0 {
		// OpenAPI documents often give oneOf branches that overlap
		// (one object shape extending another), which JSON Schema's
		// "exactly one" then refuses; anyOf accepts what the API would.
		out["anyOf"] = append(asList(out["anyOf"]), c.list(s.OneOf, depth)...)
	}
	if s.Not != nil {
		out["not"] = c.proxy(s.Not, depth+1)
	}
	return out
}

var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func containsValue(l []any, v any) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// nodeValue decodes a YAML node of the document (an enum value, a default)
// into a JSON-compatible value.
func nodeValue(n *yaml.Node) (any, bool) {
	if n == nil {
		return nil, false
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, false
	}
	return jsonValue(v), true
}

// jsonValue turns what a YAML decoder returns into values encoding/json
// can marshal: maps with non-string keys get string keys.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonValue(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[toString(k)] = jsonValue(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonValue(e)
		}
		return x
	}
	return v
}
