package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLocalToolSchemasArePortable lists the tools of the real server
// assembly (local tools only: no upstreams are configured) and checks every
// input and output schema with the rules of the MCP Inspector's --strict
// schema lint (Inspector 2.12, core/json/schemaLint.ts). Clients that map
// tool schemas onto a narrower dialect, such as the OpenAPI subset of
// Gemini function declarations, reject or weaken what the lint reports.
// The Inspector fails --strict on errors only; warnings are held to the
// same bar here, because each is a constraint some client drops.
func TestLocalToolSchemasArePortable(t *testing.T) {
	base, _, _, _ := startServe(t, nil)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "portability-test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		for kind, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if schema == nil {
				continue
			}
			for _, f := range lintPortability(schema) {
				t.Errorf("tool %q: %s.%s", tool.Name, kind, f)
			}
		}
	}
	// The tools of every package that registers local tools.
	for _, want := range []string{"run_task", "execute_task", "search_tools", "query_memory"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not listed, so it was not checked; listed: %q", want, names)
		}
	}
}

func TestLintPortabilityFindsWhatTheInspectorFinds(t *testing.T) {
	for _, c := range []struct {
		schema string
		want   []string
	}{
		{`{"type":"object","properties":{"a":true}}`, []string{"properties.a: bare true"}},
		{`{"type":"object","properties":{"a":false}}`, []string{"properties.a: bare false"}},
		{`{"type":"object","additionalProperties":true,"properties":{"a":{"type":"array","items":{"type":"string"}}}}`, nil},
		{`{"type":"object","properties":{"a":{"type":["string","null"]}}}`, []string{`properties.a: type is an array ["string","null"]`}},
		{`{"type":"object","properties":{"a":{"description":"anything"}}}`, []string{"properties.a: no validation keyword"}},
		{`{"type":"object","properties":{"a":{"not":{}}}}`, nil},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{}]}}}`, []string{"properties.a.anyOf[1]: no validation keyword"}},
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, []string{"properties.a: remote $ref"}},
		{`{"type":"object","$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`, nil},
	} {
		var s any
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatal(err)
		}
		if got := lintPortability(s); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.schema, got, c.want)
		}
	}
}

// The keyword tables of the Inspector's schemaLint.ts.
var (
	lintBooleanValued    = []string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
	lintSubschemaKeys    = []string{"items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"}
	lintSubschemaArrays  = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	lintSubschemaMaps    = []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
	lintConstraining     = []string{"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems", "unevaluatedItems", "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref", "$dynamicRef", "$recursiveRef"}
	lintJSONSchemaTypes  = []string{"null", "boolean", "object", "array", "number", "string", "integer"}
	lintIdentifierLike   = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
	lintMaxDepth         = 64
	lintEmbeddedIDsFound = func(schema any) bool { return declaresID(schema, 0) }
)

// lintPortability returns one line per finding of the Inspector's schema
// lint: "path: what".
func lintPortability(schema any) []string {
	var out []string
	hasIDs := lintEmbeddedIDsFound(schema)
	var walk func(node any, path, keyword string, depth int)
	walk = func(node any, path, keyword string, depth int) {
		if depth > lintMaxDepth {
			return
		}
		if b, ok := node.(bool); ok {
			if keyword != "" && slices.Contains(lintBooleanValued, keyword) {
				return
			}
			out = append(out, fmt.Sprintf("%s: bare %t", path, b))
			return
		}
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		if types, ok := m["type"].([]any); ok && portableTypeUnion(types) {
			b, _ := json.Marshal(types)
			out = append(out, fmt.Sprintf("%s: type is an array %s", path, b))
		}
		if ref, ok := m["$ref"].(string); ok && ref != "" && ref[0] != '#' && !hasIDs {
			out = append(out, path+": remote $ref")
		}
		if !constrains(m) && keyword != "not" {
			out = append(out, path+": no validation keyword")
		}
		eachSubschema(m, path, func(child any, childPath, childKeyword string) {
			walk(child, childPath, childKeyword, depth+1)
		})
	}
	walk(schema, "", "", 0)
	return out
}

func eachSubschema(m map[string]any, path string, visit func(child any, path, keyword string)) {
	for _, k := range lintSubschemaMaps {
		sub, ok := m[k].(map[string]any)
		if !ok {
			continue
		}
		names := make([]string, 0, len(sub))
		for name := range sub {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			visit(sub[name], lintChild(lintChild(path, k), name), k)
		}
	}
	for _, k := range lintSubschemaArrays {
		arr, ok := m[k].([]any)
		if !ok {
			continue
		}
		for i, sub := range arr {
			visit(sub, fmt.Sprintf("%s[%d]", lintChild(path, k), i), k)
		}
	}
	for _, k := range lintSubschemaKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		if arr, isArr := v.([]any); isArr && k == "items" {
			for i, sub := range arr {
				visit(sub, fmt.Sprintf("%s[%d]", lintChild(path, k), i), k)
			}
			continue
		}
		visit(v, lintChild(path, k), k)
	}
}

func constrains(m map[string]any) bool {
	for k := range m {
		if slices.Contains(lintConstraining, k) {
			return true
		}
	}
	_, hasIf := m["if"]
	_, hasThen := m["then"]
	_, hasElse := m["else"]
	return hasIf && (hasThen || hasElse)
}

func portableTypeUnion(types []any) bool {
	if len(types) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, t := range types {
		s, ok := t.(string)
		if !ok || !slices.Contains(lintJSONSchemaTypes, s) || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

func declaresID(node any, depth int) bool {
	m, ok := node.(map[string]any)
	if depth > lintMaxDepth || !ok {
		return false
	}
	if id, ok := m["$id"].(string); ok && id != "" {
		return true
	}
	found := false
	eachSubschema(m, "", func(child any, _, _ string) {
		found = found || declaresID(child, depth+1)
	})
	return found
}

func lintChild(parent, key string) string {
	if lintIdentifierLike.MatchString(key) {
		if parent == "" {
			return key
		}
		return parent + "." + key
	}
	b, _ := json.Marshal(key)
	return parent + "[" + string(b) + "]"
}
