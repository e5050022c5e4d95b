package localtools_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sj "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agents-mcp/agents-mcp/localtools"
)

type inferInner struct {
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

type inferSample struct {
	List   []string          `json:"list,omitempty" jsonschema:"a nil-able slice"`
	Ptr    *inferInner       `json:"ptr,omitempty"`
	Nested []*inferInner     `json:"nested,omitempty"`
	Raw    json.RawMessage   `json:"raw,omitempty" jsonschema:"any JSON value"`
	Any    any               `json:"any,omitempty"`
	Map    map[string]any    `json:"map,omitempty"`
	Lists  map[string][]int  `json:"lists,omitempty"`
	Count  int               `json:"count,omitempty"`
	Strs   map[string]string `json:"strs,omitempty"`
}

// Infer spells the inferred schema portably (no type lists, no schema
// without a validation keyword) and accepts exactly what the plain
// inference accepts.
func TestInferIsPortableAndAcceptsTheSameValues(t *testing.T) {
	plain, err := jsonschema.For[inferSample](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rewritten, err := localtools.Infer[inferSample]()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(rewritten)
	for _, bad := range []string{`"type":[`, `:true`} {
		// additionalProperties may be true; nothing else.
		if strings.Contains(strings.ReplaceAll(string(out), `"additionalProperties":true`, ""), bad) {
			t.Errorf("rewritten schema still has %s: %s", bad, out)
		}
	}
	if !strings.Contains(string(out), `"description":"a nil-able slice"`) {
		t.Errorf("a description was lost: %s", out)
	}
	before, after := compile(t, plain), compile(t, rewritten)
	for _, inst := range []string{
		`{}`,
		`{"list":null}`, `{"list":["a"]}`, `{"list":[1]}`, `{"list":"a"}`,
		`{"ptr":null}`, `{"ptr":{"name":"x"}}`, `{"ptr":{"name":"x","tags":null}}`, `{"ptr":{"name":1}}`, `{"ptr":{"name":"x","extra":1}}`, `{"ptr":[]}`,
		`{"nested":[null,{"name":"y","tags":["t"]}]}`, `{"nested":[{"tags":[2]}]}`,
		`{"raw":null}`, `{"raw":1}`, `{"raw":"s"}`, `{"raw":[1,{}]}`, `{"raw":{"a":true}}`, `{"raw":false}`, `{"raw":1.5}`,
		`{"any":null}`, `{"any":{"b":[]}}`,
		`{"map":{"a":null,"b":[1]}}`, `{"map":3}`,
		`{"lists":{"a":null,"b":[1]}}`, `{"lists":{"a":["x"]}}`,
		`{"count":1}`, `{"count":"1"}`, `{"count":null}`,
		`{"strs":{"a":"b"}}`, `{"strs":{"a":1}}`,
		`{"unknown":1}`, `null`, `[]`,
	} {
		v, err := sj.UnmarshalJSON(strings.NewReader(inst))
		if err != nil {
			t.Fatal(err)
		}
		if b, a := before.Validate(v) == nil, after.Validate(v) == nil; a != b {
			t.Errorf("%s: accepted %v by the inference, %v by Infer", inst, b, a)
		}
	}
}

func compile(t *testing.T, s *jsonschema.Schema) *sj.Schema {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sj.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := sj.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return compiled
}
