package planlang_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
)

// refValues are the outputs and inputs the resolution tests refer to.
var refValues = planlang.RefValues{
	Steps: map[string]json.RawMessage{
		"list": json.RawMessage(`{"files": ["a.txt", "b.txt"], "count": 2, "meta": {"z": 1, "a": [true, null], "my key": "spaced", "a\"b": "quoted", "日本": "語"}}`),
		"big":  json.RawMessage(`{"id": 12345678901234567890, "f": 1.50e+300, "neg": -0.0}`),
		"s":    json.RawMessage(`"plain \"text\" <&>"`),
		"n":    json.RawMessage(`42`),
		"null": json.RawMessage(`null`),
		"arr":  json.RawMessage("[\n  {\"b\": 2, \"a\": 1},\n  [1, 2]\n]"),
		"bad":  json.RawMessage(`{"x":`),
		"dup":  json.RawMessage(`{"k": 1, "k": 2}`),
		"esc":  json.RawMessage(`{"\u006bey": "escaped key"}`),
		"none": json.RawMessage(``),
	},
	Inputs: json.RawMessage(`{"query": "cats", "limit": 10, "tags": ["x", "y"], "opts": {"deep": {"er": "yes"}}}`),
}

func TestResolveRefs(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"empty args", ``, ``},
		{"no refs", `{"a": 1, "b": "x"}`, `{"a": 1, "b": "x"}`},
		{"no refs keep bytes", "{ \"z\" :12345678901234567890,\n\"a\":[ 1.0e2 ,\"\\u00e9\"] }", "{ \"z\" :12345678901234567890,\n\"a\":[ 1.0e2 ,\"\\u00e9\"] }"},
		{"whole object", `{"x": "{{steps.list.output.meta}}"}`, `{"x": {"z":1,"a":[true,null],"my key":"spaced","a\"b":"quoted","日本":"語"}}`},
		{"whole array", `{"x":"{{steps.list.output.files}}"}`, `{"x":["a.txt","b.txt"]}`},
		{"whole number", `{"x":"{{steps.list.output.count}}"}`, `{"x":2}`},
		{"whole bool", `{"x":"{{steps.list.output.meta.a[0]}}"}`, `{"x":true}`},
		{"whole null", `{"x":"{{steps.null.output}}"}`, `{"x":null}`},
		{"whole string", `{"x":"{{steps.list.output.files[1]}}"}`, `{"x":"b.txt"}`},
		{"whole string keeps escapes", `{"x":"{{steps.s.output}}"}`, `{"x":"plain \"text\" <&>"}`},
		{"whole with spaces", `{"x":"{{ steps.n.output }}"}`, `{"x":42}`},
		{"whole with tabs and newlines", `{"x":"{{\t\nsteps.n.output\n}}"}`, `{"x":42}`},
		{"big integer exact", `{"id":"{{steps.big.output.id}}"}`, `{"id":12345678901234567890}`},
		{"big integer embedded", `{"id":"#{{steps.big.output.id}}"}`, `{"id":"#12345678901234567890"}`},
		{"number text kept", `{"v":"{{steps.big.output}}"}`, `{"v":{"id":12345678901234567890,"f":1.50e+300,"neg":-0.0}}`},
		{"key order kept", `{"v":"{{steps.arr.output[0]}}"}`, `{"v":{"b":2,"a":1}}`},
		{"negative index", `{"v":"{{steps.list.output.files[-1]}}","w":"{{steps.list.output.files[-2]}}"}`, `{"v":"b.txt","w":"a.txt"}`},
		{"nested index", `{"v":"{{steps.arr.output[1][0]}}"}`, `{"v":1}`},
		{"bracket key with space", `{"v":"{{steps.list.output.meta[\"my key\"]}}"}`, `{"v":"spaced"}`},
		{"bracket key with escaped quote", `{"v":"{{steps.list.output.meta[\"a\\\"b\"]}}"}`, `{"v":"quoted"}`},
		{"bracket key unicode", `{"v":"{{steps.list.output.meta[\"日本\"]}}"}`, `{"v":"語"}`},
		{"bracket key unicode escape", `{"v":"{{steps.list.output.meta[\"\\u65e5本\"]}}"}`, `{"v":"語"}`},
		{"bracket key plain", `{"v":"{{steps.list.output[\"count\"]}}"}`, `{"v":2}`},
		{"escaped key in output", `{"v":"{{steps.esc.output.key}}"}`, `{"v":"escaped key"}`},
		{"duplicate key takes last", `{"v":"{{steps.dup.output.k}}"}`, `{"v":2}`},
		{"embedded string", `{"q":"find {{inputs.query}} now"}`, `{"q":"find cats now"}`},
		{"embedded several", `{"q":"{{inputs.query}}/{{inputs.limit}}/{{steps.list.output.files}}/{{steps.null.output}}/{{steps.list.output.meta.a}}"}`, `{"q":"cats/10/[\"a.txt\",\"b.txt\"]/null/[true,null]"}`},
		{"embedded object compact", `{"q":"x={{steps.arr.output}}"}`, `{"q":"x=[{\"b\":2,\"a\":1},[1,2]]"}`},
		{"embedded string unescaped", `{"q":"say {{steps.s.output}}"}`, `{"q":"say plain \"text\" <&>"}`},
		{"adjacent refs", `{"q":"{{inputs.query}}{{inputs.query}}"}`, `{"q":"catscats"}`},
		{"space outside braces is embedded", `{"q":" {{inputs.limit}}"}`, `{"q":" 10"}`},
		{"unicode around", `{"q":"é{{inputs.query}}日本"}`, `{"q":"écats日本"}`},
		{"escaped braces in args", `{"q":"\u007b{inputs.query}}"}`, `{"q":"cats"}`},
		{"inputs path", `{"q":"{{inputs.opts.deep.er}}","t":"{{inputs.tags[1]}}"}`, `{"q":"yes","t":"y"}`},
		{"whole inputs value", `{"o":"{{inputs.opts}}"}`, `{"o":{"deep":{"er":"yes"}}}`},
		{"nested containers", `{"a":{"b":[1,{"c":"{{inputs.limit}}"},"{{inputs.tags}}"]},"d":"{{inputs.query}}"}`, `{"a":{"b":[1,{"c":10},["x","y"]]},"d":"cats"}`},
		{"keys never templated", `{"{{inputs.query}}":"{{inputs.query}}"}`, `{"{{inputs.query}}":"cats"}`},
		{"literal double braces", `{"t":"{{name}} and {{ other }} and {{steps}} and {{inputs}} {{Steps.a.output}}"}`, `{"t":"{{name}} and {{ other }} and {{steps}} and {{inputs}} {{Steps.a.output}}"}`},
		{"literal then ref", `{"t":"{{x}} {{inputs.query}}"}`, `{"t":"{{x}} cats"}`},
		{"triple brace", `{"t":"{{{inputs.query}}}"}`, `{"t":"{cats}"}`},
		{"lone braces", `{"t":"{ } }} {"}`, `{"t":"{ } }} {"}`},
		{"html not escaped", `{"t":"<{{inputs.query}}>&"}`, `{"t":"<cats>&"}`},
		{"other values kept", "{\"a\" : [ true , null , -1.5E3 ] ,\n \"b\":\"{{inputs.limit}}\" }", "{\"a\" : [ true , null , -1.5E3 ] ,\n \"b\":10 }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planlang.ResolveRefs(json.RawMessage(tt.args), refValues)
			if err != nil {
				t.Fatalf("ResolveRefs(%s): %v", tt.args, err)
			}
			if string(got) != tt.want {
				t.Errorf("ResolveRefs(%s)\n got %s\nwant %s", tt.args, got, tt.want)
			}
			if len(got) > 0 && !json.Valid(got) {
				t.Errorf("ResolveRefs(%s) = %s, not valid JSON", tt.args, got)
			}
		})
	}
}

func TestResolveRefsErrors(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"not json", `{"a":`, "arguments are not valid JSON"},
		{"not object", `["{{inputs.query}}"]`, "arguments are an array, not a JSON object"},
		{"string args", `"x"`, "arguments are a string, not a JSON object"},
		{"missing step", `{"a":"{{steps.nope.output}}"}`, `arguments at /a: reference "{{steps.nope.output}}": steps.nope.output: step "nope" has no output`},
		{"empty output", `{"a":"{{steps.none.output}}"}`, `steps.none.output: step "none" has no output`},
		{"invalid output", `{"a":"{{steps.bad.output.x}}"}`, `steps.bad.output: the output of step "bad" is not valid JSON`},
		{"index out of range", `{"a":{"b":"{{steps.list.output.files[3]}}"}}`, `arguments at /a/b: reference "{{steps.list.output.files[3]}}": steps.list.output.files[3]: index 3 out of range (len 2)`},
		{"negative index out of range", `{"a":"{{steps.list.output.files[-3]}}"}`, `steps.list.output.files[-3]: index -3 out of range (len 2)`},
		{"failure mid path", `{"a":"{{steps.list.output.files[3].name}}"}`, `reference "{{steps.list.output.files[3].name}}": steps.list.output.files[3]: index 3 out of range (len 2)`},
		{"missing field", `{"a":"x {{steps.list.output.meta.nope}}"}`, `steps.list.output.meta.nope: field "nope" is missing`},
		{"index non-array", `{"a":"{{steps.list.output.meta[0]}}"}`, `steps.list.output.meta[0]: cannot index an object`},
		{"field of non-object", `{"a":"{{steps.list.output.count.x}}"}`, `steps.list.output.count.x: cannot take field "x" of a number`},
		{"field of string", `{"a":"{{steps.s.output.x}}"}`, `steps.s.output.x: cannot take field "x" of a string`},
		{"missing input", `{"a":"{{inputs.nope}}"}`, `inputs.nope: no input "nope" was supplied`},
		{"pointer escaped", `{"a/b":{"c~d":["{{inputs.nope}}"]}}`, `arguments at /a~1b/c~0d/0: reference "{{inputs.nope}}"`},
		{"malformed empty step", `{"a":"{{steps.}}"}`, `arguments at /a: malformed reference "{{steps.}}": a step id must follow "steps."`},
		{"malformed outputs", `{"a":"{{steps.a.outputs}}"}`, `malformed reference "{{steps.a.outputs}}": ".output" must follow the step id`},
		{"malformed no output", `{"a":"{{steps.a}}"}`, `malformed reference "{{steps.a}}": ".output" must follow the step id`},
		{"malformed step id", `{"a":"{{steps.Big.output}}"}`, `malformed reference "{{steps.Big.output}}": step id "Big" does not match ^[a-z0-9_-]{1,64}$`},
		{"malformed unclosed", `{"a":"{{steps.a.output.x"}`, `malformed reference "{{steps.a.output.x": "}}" is missing`},
		{"malformed unclosed later", `{"a":"{{inputs.q} and more"}`, `malformed reference "{{inputs.q} and more": unexpected '}'; "}}" must follow the path`},
		{"malformed empty input", `{"a":"{{inputs.}}"}`, `an input name must follow "inputs."`},
		{"malformed input name", `{"a":"{{inputs.9x}}"}`, `input name "9x" does not match`},
		{"malformed field digit", `{"a":"{{inputs.q.0}}"}`, `field "0" does not match ^[A-Za-z_][A-Za-z0-9_-]*$; use [N] for an index`},
		{"malformed empty field", `{"a":"{{inputs.q.}}"}`, `a field name must follow "."`},
		{"malformed inner space", `{"a":"{{steps.a.output .x}}"}`, `unexpected '.'; "}}" must follow the path`},
		{"malformed bracket", `{"a":"{{inputs.q[x]}}"}`, `"[" must be followed by an index or a quoted key`},
		{"malformed bracket unclosed", `{"a":"{{inputs.q[1}}"}`, `"]" is missing`},
		{"malformed bracket key", `{"a":"{{inputs.q[\"k}}"}`, `unterminated key in brackets`},
		{"malformed leading zero", `{"a":"{{inputs.q[01]}}"}`, `index 01 is not in canonical form`},
		{"malformed minus zero", `{"a":"{{inputs.q[-0]}}"}`, `index -0 is not in canonical form`},
		{"malformed huge index", `{"a":"{{inputs.q[99999999999999999999]}}"}`, `index 99999999999999999999 is out of range`},
		{"malformed after good", `{"a":"{{inputs.query}} {{steps.x.oops}}"}`, `malformed reference "{{steps.x.oops}}"`},
		{"malformed long", `{"a":"{{steps.a.output ` + strings.Repeat("é", 100) + `"}`, `malformed reference "{{steps.a.output éé`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planlang.ResolveRefs(json.RawMessage(tt.args), refValues)
			if err == nil {
				t.Fatalf("ResolveRefs(%s) = %s, want an error", tt.args, got)
			}
			if code := agentsmcp.ErrorCode(err); code != agentsmcp.EINVALID {
				t.Errorf("ResolveRefs(%s): code %q, want %q (%v)", tt.args, code, agentsmcp.EINVALID, err)
			}
			if msg := agentsmcp.ErrorMessage(err); !strings.Contains(msg, tt.want) {
				t.Errorf("ResolveRefs(%s): message\n %s\ndoes not contain\n %s", tt.args, msg, tt.want)
			}
		})
	}
}

func TestResolveRefsMessageTruncated(t *testing.T) {
	args := `{"a":"{{steps.a.output ` + strings.Repeat("é", 100) + `"}`
	_, err := planlang.ResolveRefs(json.RawMessage(args), refValues)
	msg := agentsmcp.ErrorMessage(err)
	if !strings.Contains(msg, `…"`) || len(msg) > 250 {
		t.Errorf("message not truncated: %s", msg)
	}
}

func TestResolveRefsSizeGuard(t *testing.T) {
	big := `"` + strings.Repeat("x", 60<<10) + `"`
	v := planlang.RefValues{Steps: map[string]json.RawMessage{"big": json.RawMessage(big)}}
	var parts []string
	for i := range 20 {
		parts = append(parts, `"k`+string(rune('a'+i))+`":"{{steps.big.output}}"`)
	}
	for _, args := range []string{
		"{" + strings.Join(parts, ",") + "}",                         // whole-value references
		`{"k":"` + strings.Repeat("{{steps.big.output}}", 20) + `"}`, // embedded in one string
	} {
		_, err := planlang.ResolveRefs(json.RawMessage(args), v)
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(agentsmcp.ErrorMessage(err), "resolved arguments would be over 1048576 bytes") {
			t.Errorf("ResolveRefs of %d references to 60 KiB: err = %v, want the size guard", 20, err)
		}
	}
	// Under the limit it works.
	got, err := planlang.ResolveRefs(json.RawMessage(`{"a":"{{steps.big.output}}","b":"{{steps.big.output}}"}`), v)
	if err != nil || len(got) != 2*len(big)+len(`{"a":,"b":}`) {
		t.Errorf("two references: len %d, err %v", len(got), err)
	}
}

func TestFindRefs(t *testing.T) {
	args := `{"a": "{{ steps.list.output.files[-1] }}", "b": [{"c": "x {{inputs.q[\"my key\"][0]}} y {{steps.s.output}}"}], "{{inputs.k}}": "{{x}}", "e~/": "{{inputs.n}}"}`
	got, err := planlang.FindRefs(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	want := []planlang.Ref{
		{Kind: planlang.RefStep, Name: "list", Path: []planlang.PathElem{{Field: "files"}, {Index: -1, IsIndex: true}}, Text: "{{ steps.list.output.files[-1] }}", Pointer: "/a", Whole: true},
		{Kind: planlang.RefInput, Name: "q", Path: []planlang.PathElem{{Field: "my key"}, {Index: 0, IsIndex: true}}, Text: `{{inputs.q["my key"][0]}}`, Pointer: "/b/0/c"},
		{Kind: planlang.RefStep, Name: "s", Text: "{{steps.s.output}}", Pointer: "/b/0/c"},
		{Kind: planlang.RefInput, Name: "n", Text: "{{inputs.n}}", Pointer: "/e~0~1", Whole: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FindRefs:\n got %+v\nwant %+v", got, want)
	}
	wantStrings := []string{"steps.list.output.files[-1]", `inputs.q["my key"][0]`, "steps.s.output", "inputs.n"}
	for i, r := range got {
		if r.String() != wantStrings[i] {
			t.Errorf("String() = %s, want %s", r.String(), wantStrings[i])
		}
	}

	for _, args := range []string{``, ` `, `{}`, `{"a":"{{x}}","b":1}`} {
		if refs, err := planlang.FindRefs(json.RawMessage(args)); err != nil || len(refs) != 0 {
			t.Errorf("FindRefs(%q) = %v, %v; want none", args, refs, err)
		}
	}
	for _, args := range []string{`[]`, `1`, `{`, `{"a":"{{steps.}}"}`} {
		if _, err := planlang.FindRefs(json.RawMessage(args)); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("FindRefs(%q): err = %v, want EINVALID", args, err)
		}
	}
}

func TestRefLookup(t *testing.T) {
	refs, err := planlang.FindRefs(json.RawMessage(`{"a":"{{steps.arr.output[0]}}","b":"{{steps.list.output.files[3]}}"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := refs[0].Lookup(refValues)
	if err != nil || string(got) != `{"b":2,"a":1}` {
		t.Errorf("Lookup = %s, %v", got, err)
	}
	_, err = refs[1].Lookup(refValues)
	if msg := agentsmcp.ErrorMessage(err); msg != "steps.list.output.files[3]: index 3 out of range (len 2)" {
		t.Errorf("Lookup error = %q", msg)
	}
	if _, err := refs[0].Lookup(planlang.RefValues{}); agentsmcp.ErrorMessage(err) != `steps.arr.output: step "arr" has no output` {
		t.Errorf("Lookup without outputs: %v", err)
	}
	in := planlang.Ref{Kind: planlang.RefInput, Name: "q"}
	for inputs, want := range map[string]string{
		``:        `inputs.q: no input "q" was supplied`,
		`{}`:      `inputs.q: no input "q" was supplied`,
		`[1]`:     `inputs.q: the task inputs are an array, not an object`,
		`{"q":`:   `inputs.q: the task inputs are not valid JSON`,
		`{"q":1}`: ``,
	} {
		_, err := in.Lookup(planlang.RefValues{Inputs: json.RawMessage(inputs)})
		if msg := agentsmcp.ErrorMessage(err); msg != want {
			t.Errorf("Lookup with inputs %s: %q, want %q", inputs, msg, want)
		}
	}
}

func TestArgumentsForValidation(t *testing.T) {
	doc, refs, err := planlang.ArgumentsForValidation(json.RawMessage(`{"n":"{{steps.a.output.n}}","q":"find {{inputs.q}}","l":"{{x}}","o":{"p":["{{inputs.list}}"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"/n": true, "/q": false, "/o/p/0": true}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("refs = %v, want %v", refs, want)
	}
	if string(doc) != `{"n":"{{steps.a.output.n}}","q":"find {{inputs.q}}","l":"{{x}}","o":{"p":["{{inputs.list}}"]}}` {
		t.Errorf("doc = %s", doc)
	}
	doc, refs, err = planlang.ArgumentsForValidation(nil)
	if err != nil || string(doc) != "{}" || len(refs) != 0 {
		t.Errorf("empty args: %s, %v, %v", doc, refs, err)
	}
	if _, _, err := planlang.ArgumentsForValidation(json.RawMessage(`{"a":"{{inputs.}}"}`)); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("malformed: err = %v", err)
	}
}
