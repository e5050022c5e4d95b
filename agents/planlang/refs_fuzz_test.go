package planlang_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/agents/planlang"
)

// FuzzResolveRefs checks, for any arguments, step output and inputs, that
// resolution never panics, produces valid JSON, leaves arguments without
// references as they are, and agrees with FindRefs and
// ArgumentsForValidation.
func FuzzResolveRefs(f *testing.F) {
	for _, seed := range [][3]string{
		{`{"a":"{{steps.a.output}}"}`, `{"x":[1,2,{"y":"z"}]}`, `{"q":"cats"}`},
		{`{"a":"x {{steps.a.output.x[2].y}} {{inputs.q}}"}`, `{"x":[1,2,{"y":"z"}]}`, `{"q":"cats"}`},
		{`{"a":["{{ steps.b.output[-1] }}"],"b":{"c":"{{inputs.q[\"k k\"]}}"}}`, `[1, 12345678901234567890]`, `{"q":{"k k":true}}`},
		{`{"a":"{{steps.}}"}`, `1`, `{}`},
		{`{"a":"{{steps.a.outputs}}"}`, `1`, `{}`},
		{`{"a":"{{steps.a.output"}`, `1`, `{}`},
		{`{"a":"{{name}} {{ other }}","{{inputs.q}}":1}`, `null`, `{"q":1}`},
		{`{"a":"\u007b{inputs.q}}","b":"\ud83d\ude00{{inputs.q}}"}`, `null`, `{"q":"é"}`},
		{` { "n" : 1.0e10 , "m" : [ true , null ] } `, ``, ``},
		{`{"a":"{{steps.a.output[0][0]}}"}`, `[[{"b":2,"a":1}]]`, ``},
		{`[]`, `{}`, `{}`},
		{`{"a":`, `{}`, `{}`},
		{`{"a":"{{steps.a.output.x}}"}`, `{"x":`, `{}`},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, args, output, inputs string) {
		v := planlang.RefValues{
			Steps:  map[string]json.RawMessage{"a": json.RawMessage(output), "b": json.RawMessage(output)},
			Inputs: json.RawMessage(inputs),
		}
		refs, findErr := planlang.FindRefs(json.RawMessage(args))
		got, err := planlang.ResolveRefs(json.RawMessage(args), v)
		if findErr != nil && err == nil {
			t.Fatalf("FindRefs(%q) failed (%v) but ResolveRefs succeeded", args, findErr)
		}
		if err != nil {
			return
		}
		if len(bytes.Trim(got, " \t\r\n")) == 0 {
			if len(bytes.Trim([]byte(args), " \t\r\n")) != 0 {
				t.Fatalf("ResolveRefs(%q) is empty", args)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ResolveRefs(%q) = %q, not valid JSON", args, got)
		}
		if b := bytes.Trim(got, " \t\r\n"); b[0] != '{' {
			t.Fatalf("ResolveRefs(%q) = %q, not an object", args, got)
		}
		if len(refs) == 0 {
			if string(got) != args {
				t.Fatalf("ResolveRefs(%q) = %q, want the arguments unchanged", args, got)
			}
			// Numbers compare as their literals: valid JSON such as 1e700
			// does not fit a float64, and the arguments keep it as written.
			a, errA := decodeUseNumber([]byte(args))
			b, errB := decodeUseNumber(got)
			if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("ResolveRefs(%q) = %q, not JSON-equal", args, got)
			}
		}
		_, pointers, err := planlang.ArgumentsForValidation(json.RawMessage(args))
		if err != nil {
			t.Fatalf("ArgumentsForValidation(%q): %v", args, err)
		}
		for _, r := range refs {
			if whole, ok := pointers[r.Pointer]; !ok || whole != r.Whole {
				t.Fatalf("ArgumentsForValidation(%q) = %v, missing %+v", args, pointers, r)
			}
			if !strings.HasPrefix(r.Text, "{{") || !strings.HasSuffix(r.Text, "}}") {
				t.Fatalf("reference text %q lacks its braces", r.Text)
			}
			// A whole-value reference resolves to what Lookup returns.
			if r.Whole && len(refs) == 1 {
				want, err := r.Lookup(v)
				if err != nil {
					t.Fatalf("ResolveRefs(%q) succeeded but Lookup(%s): %v", args, r, err)
				}
				if !bytes.Contains(got, want) {
					t.Fatalf("ResolveRefs(%q) = %q, lacks %q", args, got, want)
				}
			}
		}
	})
}

// decodeUseNumber decodes one JSON value with numbers as json.Number.
func decodeUseNumber(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}
