package router

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// decodeSeeds are inputs for the decoder's edge cases: every JSON kind,
// escapes (valid, surrogate pairs, lone surrogates), invalid UTF-8,
// duplicate names, number forms, whitespace, and malformed input.
var decodeSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `1E+2`, `12345678901234567890123`, `1e999`,
	`{"a":1,"b":"x","c":[1,2,{"d":null}],"e":true}`,
	` {"a" : [ 1 , 2 ] } `, "\t{\"a\":\r\n1}\n",
	`{"a":1,"a":2}`, `{"":""}`,
	`"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\u0000"`, `"\uD83D\uDE00"`,
	"\"\xff\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", "\"caf\xc3\xa9\"", "{\"\xc3\xa9\":1}",
	`{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"abc`, `{"a"}`, `{a:1}`,
	`1 2`, `{} x`, "\"a\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `NaN`, `[` + strings.Repeat(`[`, 300) + strings.Repeat(`]`, 301),
	strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200),
}

// FuzzDecodeArguments is the differential test of the fast decoder against
// the library's decoding it replaces: whatever the fast decoder accepts,
// the library must accept with a deeply equal value (the same Go types,
// json.Number literals included), and decodeArguments must give the
// library's answer, value or error text, for every input.
func FuzzDecodeArguments(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if fast, ok := fastDecode(b); ok {
			if wantErr != nil {
				t.Fatalf("fast decoder accepted %q, which the library refuses: %v", b, wantErr)
			}
			if !reflect.DeepEqual(fast, want) {
				t.Fatalf("fast decoder gave %#v for %q, the library %#v", fast, b, want)
			}
		}
		got, err := decodeArguments(b)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("decodeArguments(%q) error %v, library %v", b, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeArguments(%q) = %#v, library %#v", b, got, want)
		}
	})
}

// TestFastDecodeTakesCommonInput fails if the fast decoder hands ordinary
// arguments to the library, which would make it correct but useless.
func TestFastDecodeTakesCommonInput(t *testing.T) {
	for _, s := range []string{`{"a":1,"b":"x","c":[1,2,{"d":null}],"e":true}`, `{"q":"caf\u00e9 \"quoted\"","n":-1.5e3}`} {
		if _, ok := fastDecode([]byte(s)); !ok {
			t.Errorf("fast decoder refused %s", s)
		}
	}
}

// referenceValidate is compiledSchema.validate as it was before the fast
// decoder: the library decodes the arguments (and jsonnum.CheckValue
// bounds their numbers). The differential test holds the
// current validation to it.
func referenceValidate(c *compiledSchema, args json.RawMessage) (issues []agentsmcp.ValidationIssue, missing []string, err error) {
	sch, err := c.get()
	if err != nil {
		return nil, nil, err
	}
	var inst any = map[string]any{}
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(trimmed)); err != nil {
			return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "arguments are not valid JSON: %v", err)
		}
		if err := jsonnum.CheckValue(inst); err != nil {
			return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "invalid arguments: %v", err)
		}
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil, nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return nil, nil, verr
	}
	issues, missing = flattenValidationError(ve)
	return issues, missing, nil
}

// differentialSchemas cover the keywords whose verdict or message depends
// on the decoded value: types (integer against number literals), numeric
// bounds and multipleOf, enum and const (equality of numbers and strings),
// string lengths and patterns (runes), uniqueItems, nested objects,
// combinators, $ref, an older draft and unevaluatedProperties.
var differentialSchemas = []string{
	// What localtools infers for struct{ I int; V any; P *string; L []string; M map[string]int }.
	`{"type":"object","properties":{"i":{"type":"integer","description":"an index"},` +
		`"v":{"anyOf":[{"type":"object"},{"type":"array"},{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}]},` +
		`"p":{"anyOf":[{"type":"null"},{"type":"string"}]},"l":{"type":"array","items":{"type":"string"}},` +
		`"m":{"type":"object","additionalProperties":{"type":"integer"}}},"required":["i","v"],"additionalProperties":{"not":{}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":["object","null"],"title":"t",` +
		`"properties":{"a":{"type":["integer","string"]},"b":true,"c":false,"d":{},"e":{"type":"number","default":1}},` +
		`"additionalProperties":false,"required":["a"]}`,
	`{"type":"object","properties":{"x":{"type":"array","items":{"type":"object","properties":{"y":{"type":"boolean"}},` +
		`"required":["y"],"additionalProperties":true}},"z":{"anyOf":[{"type":"integer"},{"format":"date"},{"minimum":3}]}}}`,
	`{}`,
	`true`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"message":{"type":"string",` +
		`"description":"m"},"when":{"type":"string","format":"date"},"n":{"type":"number","minimum":0}},` +
		`"required":["message"],"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3,"enum":["ab","abc","é€","x",1,null]},` +
		`"n":{"type":"integer","minimum":-2,"exclusiveMaximum":5},"m":{"maximum":10,"exclusiveMinimum":0},"c":{"const":null},` +
		`"b":{"enum":[true,"true"]},"a":{"type":"array","minItems":1,"maxItems":2},` +
		`"o":{"type":"object","minProperties":1,"maxProperties":1,"format":"email"},"e":{"enum":[[1],{"k":1},2]},` +
		`"k":{"const":"x","enum":["x","y"]}},"required":["s"]}`,
	`{"type":"object","properties":{"a":{"type":"integer","minimum":0},"b":{"enum":["x","y",1,1.5,null,[1],{"k":2}]},` +
		`"c":{"type":"array","items":{"type":"string"},"uniqueItems":true},"d":{"$ref":"#/$defs/d"},"e/f~g":{"type":"string"}},` +
		`"required":["a"],"$defs":{"d":{"type":"object","required":["z"]}},"oneOf":[{"required":["b"]},{"required":["c"]}]}`,
	`{"type":"object","properties":{"n":{"type":"number","exclusiveMaximum":10,"multipleOf":0.5},"i":{"type":"integer","maximum":1e3},` +
		`"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-zé]+$"},"k":{"const":{"x":[1,"2"]}}},"additionalProperties":false}`,
	`{"type":"object","properties":{"v":{"anyOf":[{"type":"object"},{"type":"array"},{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}]},` +
		`"i":{"type":"integer"}},"required":["i"],"unevaluatedProperties":false}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":["integer","null"]},` +
		`"b":{"type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":false}},"dependencies":{"a":["b"]}}`,
	`{"type":"object","properties":{"deep":{"type":"object","properties":{"x":{"type":"array","items":{"type":"object",` +
		`"properties":{"y":{"type":"integer","minimum":-5}},"required":["y"]}}}}},"minProperties":1,"maxProperties":3}`,
}

// FuzzValidateDifferential holds the validation of arbitrary arguments to
// the reference (the library decoding them) on the same schemas: the
// verdict, every issue, the missing names and the error text must be
// identical, since tools/call and tools/validate report them.
func FuzzValidateDifferential(f *testing.F) {
	for _, s := range append(decodeSeeds, `{"a":1,"b":"x"}`, `{"a":-1,"c":[1,1]}`, `{"a":1.0,"b":1.50}`, `{"a":1e2,"b":15e-1}`,
		`{"n":9.5,"i":1000.0,"s":"é\u00e9","k":{"x":[1.0,"2"]}}`, `{"n":10,"s":"\ud83d\ude00\ud83d"}`, `{"i":1,"v":{"a":[]},"w":1}`,
		`{"a":null,"b":["x",2,3]}`, `{"a":1}`, `{"deep":{"x":[{"y":-6},{"y":"1"},{}]}}`, `{"a":12345678901234567890123}`,
		`{"i":1,"v":null,"p":"s","l":["a"],"m":{"k":2}}`, `{"i":1.0,"v":1,"m":{"k":2.5}}`, `{"i":-0,"v":[],"p":null,"q":1}`,
		`{"s":"ab","n":4,"m":10,"c":null,"b":true,"a":[1],"o":{"k":1},"e":2,"k":"x"}`,
		`{"s":"é€","n":-2,"m":1e1,"b":"true","a":[1,2],"o":{"x":"y"},"e":[1]}`,
		`{"s":"x","n":5,"m":0,"c":1,"b":false,"a":[],"o":{},"e":{"k":1.0},"k":"y"}`,
		`{"message":"hi","when":"2020-01-01","n":1}`, `{"message":"hi","when":"not a date"}`, `{"message":1,"n":-1}`,
		`{"s":"abcd","n":-3,"m":0.5}`, `{"s":1,"n":9223372036854775808,"m":-1}`, `{"s":"abc","n":4.0,"m":3}`,
		`{"a":"x","c":1}`, `{"a":1,"b":[],"d":null,"e":"1"}`, `{"x":[{"y":true,"w":1}],"z":"2020-01-01"}`, `{"x":[{}],"z":5}`,
		`{"n":1e9999999,"i":1e700,"m":[1e1001]}`, `{"s":"\ud800","n":1e-1001}`) {
		f.Add([]byte(s))
	}
	schemas := make([]*compiledSchema, len(differentialSchemas))
	for i, s := range differentialSchemas {
		schemas[i] = newCompiledSchema(json.RawMessage(s))
		if _, err := schemas[i].get(); err != nil {
			f.Fatalf("schema %d: %v", i, err)
		}
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for i, c := range schemas {
			issues, missing, err := c.validate(args)
			wantIssues, wantMissing, wantErr := referenceValidate(c, args)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("schema %d, %q: error %v, reference %v", i, args, err, wantErr)
			}
			// The library walks objects in map order, so the order of
			// issues, and of the names within a message ("additional
			// properties 'b', 'a' not allowed"), varies from run to run on
			// either side; everything else may not.
			slices.Sort(missing)
			slices.Sort(wantMissing)
			if !reflect.DeepEqual(canonicalIssues(issues), canonicalIssues(wantIssues)) || !reflect.DeepEqual(missing, wantMissing) {
				t.Fatalf("schema %d, %q: issues %+v missing %q, reference %+v %q", i, args, issues, missing, wantIssues, wantMissing)
			}
		}
	})
}

// canonicalIssues returns issues sorted, each message replaced by its
// bytes in order: equal for two runs that differ only in map order.
func canonicalIssues(issues []agentsmcp.ValidationIssue) []agentsmcp.ValidationIssue {
	out := make([]agentsmcp.ValidationIssue, len(issues))
	for i, is := range issues {
		msg := []byte(is.Message)
		slices.Sort(msg)
		is.Message = string(msg)
		out[i] = is
	}
	slices.SortFunc(out, func(a, b agentsmcp.ValidationIssue) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Keyword, b.Keyword), strings.Compare(a.Message, b.Message))
	})
	return out
}

// TestValidateDifferentialFindsIssues fails if the differential seeds
// never reach the value-dependent keywords, which would make the
// comparison vacuous.
func TestValidateDifferentialFindsIssues(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range []string{`{"a":1.5,"b":"z","c":["x","x"]}`, `{"n":10.25,"i":1e4,"s":"abcde","k":{"x":[2]},"z":1}`,
		`{"i":1,"w":1}`, `{"a":"1","b":["x","y","z"]}`, `{"deep":{"x":[{"y":-6}]}}`} {
		for _, raw := range differentialSchemas {
			issues, _, err := newCompiledSchema(json.RawMessage(raw)).validate([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			for _, is := range issues {
				seen[is.Keyword] = true
			}
		}
	}
	for _, kw := range []string{"type", "enum", "uniqueItems", "multipleOf", "maxLength", "const", "additionalProperties",
		"false" /* unevaluatedProperties: false */, "minimum", "maximum", "exclusiveMaximum"} {
		if !seen[kw] {
			t.Errorf("no seed violates %s; seen %v", kw, seen)
		}
	}
}

// TestFastSchemaDecides fails if the pre-check does not take the schemas
// it was built for, or takes one outside its subset: either would go
// unnoticed by the differential test, which only compares answers.
func TestFastSchemaDecides(t *testing.T) {
	for i, raw := range differentialSchemas {
		c := newCompiledSchema(json.RawMessage(raw))
		if _, err := c.get(); err != nil {
			t.Fatal(err)
		}
		// A schema is taken when its root is in the subset (its
		// subschemas may not be); the others have $defs and oneOf,
		// unevaluatedProperties, and draft-07's dependencies at the root.
		if want := !slices.Contains([]int{7, 9, 10}, i); (c.fast != nil) != want {
			t.Errorf("schema %d: fast path %v, want %v", i, c.fast != nil, want)
		}
	}
	fast := func(raw, args string) bool {
		c := newCompiledSchema(json.RawMessage(raw))
		if _, err := c.get(); err != nil || c.fast == nil {
			t.Fatalf("%s: %v, fast %v", raw, err, c.fast)
		}
		v, err := decodeArguments([]byte(args))
		if err != nil {
			t.Fatal(err)
		}
		return c.fast.valid(v)
	}
	for _, tc := range []struct {
		schema, args string
		want         bool
	}{
		{differentialSchemas[0], `{"i":1,"v":{"a":[1]},"p":null,"l":["x"],"m":{"k":3}}`, true},
		{differentialSchemas[0], `{"i":1.0,"v":1}`, false},         // an integer the library decides
		{differentialSchemas[0], `{"i":1,"v":1,"extra":1}`, false}, // not {} is left to the library
		{differentialSchemas[0], `{"v":1}`, false},
		{differentialSchemas[0], `{"i":1,"v":1,"m":{"k":"x"}}`, false},
		{differentialSchemas[1], `null`, true},
		{differentialSchemas[1], `{"a":"x","b":[],"d":{},"e":2.5}`, true},
		{differentialSchemas[1], `{"a":1,"c":1}`, false},
		{differentialSchemas[2], `{"x":[{"y":false,"k":1}],"z":4}`, true},
		{differentialSchemas[2], `{"z":"not a date"}`, true},                            // format asserts nothing in 2020-12
		{differentialSchemas[5], `{"message":"hi","when":"2020-01-01","n":1.5}`, false}, // draft-07 asserts format
		{differentialSchemas[5], `{"message":"hi","n":1}`, true},
		{differentialSchemas[6], `{"s":"ab","n":4,"m":10,"c":null,"b":true,"a":[1],"o":{"k":1}}`, true},
		{differentialSchemas[6], `{"s":"é€","n":-2,"m":1,"b":"true","a":[1,2],"o":{"x":"y"}}`, true},
		{differentialSchemas[6], `{"s":"abcd"}`, false},
		{differentialSchemas[6], `{"s":"ab","m":1e1}`, false}, // an exponent is left to the library
		{differentialSchemas[6], `{"s":"ab","e":2}`, false},   // so is a number in an enum
		{differentialSchemas[6], `{"s":"ab","k":"x"}`, false}, // and const beside enum
		{differentialSchemas[6], `{"s":"ab","n":5}`, false},
		{differentialSchemas[6], `{"s":"ab","o":{}}`, false},
	} {
		if got := fast(tc.schema, tc.args); got != tc.want {
			t.Errorf("%s against %s: fast valid %v, want %v", tc.args, tc.schema, got, tc.want)
		}
	}
}
