package jsonnum_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// TestCheck: the numbers real clients write pass, whatever encoder wrote
// them; numbers whose exponent or length is beyond the bounds do not, and
// every number that passes converts to a big.Rat, as the validator needs.
func TestCheck(t *testing.T) {
	long := strings.Repeat("9", jsonnum.MaxLiteralBytes)
	for _, tc := range []struct {
		lit string
		ok  bool
	}{
		{"0", true}, {"-0", true}, {"1.5", true}, {"9007199254740993", true},
		{"18446744073709551615", true}, {"1.7976931348623157e308", true}, {"5e-324", true},
		{"4.9406564584124654E-324", true}, {"1e+21", true}, {"0.000001", true},
		{"1e700", true}, {"1e1000", true}, {"1E-1000", true}, {"1e+0001000", true},
		{"1e00000000000000000000000000000", true}, {long, true}, {"-" + long[1:], true},
		{"0." + long[2:], true}, {long[:len(long)-5] + "e1000", true},

		{"1e1001", false}, {"1e-1001", false}, {"1E+1001", false}, {"1e9999999", false},
		{"1e999999", false}, {"-2.5e99999999999999999999999999", false},
		{"1e0000000000000000000000000001001", false}, {long + "9", false},
		{"0." + long, false},
	} {
		err := jsonnum.Check(tc.lit)
		if (err == nil) != tc.ok {
			t.Errorf("Check(%.40q) = %v, want ok %v", tc.lit, err, tc.ok)
		}
		if errB := jsonnum.Check([]byte(tc.lit)); (errB == nil) != (err == nil) {
			t.Errorf("Check([]byte(%.40q)) = %v, but Check(string) = %v", tc.lit, errB, err)
		}
		if err == nil {
			if _, ok := new(big.Rat).SetString(tc.lit); !ok {
				t.Errorf("%.40q passes but big.Rat refuses it", tc.lit)
			}
		}
	}
}

// TestCheckValue: the number reported is named by its JSON pointer, the
// same one every time when there are several.
func TestCheckValue(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		bad     bool
		pointer string
	}{
		{`{"a":1,"b":[1,2,{"c":1e700}]}`, false, ""},
		{`1e9999`, true, ""},
		{`{"confidence":1e9999999}`, true, "/confidence"},
		{`{"a":[0,{"x/y~z":[1e2000]}]}`, true, "/a/1/x~1y~0z/0"},
		{`{"z":1e2000,"b":1e3000,"m":1e4000}`, true, "/b"},
		{`[1,2,1e-5000]`, true, "/2"},
	} {
		dec := json.NewDecoder(strings.NewReader(tc.doc))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		for range 5 { // map order varies
			err := jsonnum.CheckValue(v)
			var e *jsonnum.Error
			switch {
			case !tc.bad:
				if err != nil {
					t.Errorf("CheckValue(%s) = %v, want nil", tc.doc, err)
				}
			case !errors.As(err, &e):
				t.Errorf("CheckValue(%s) = %v, want an *Error", tc.doc, err)
			case e.Pointer != tc.pointer:
				t.Errorf("CheckValue(%s) at %q, want %q", tc.doc, e.Pointer, tc.pointer)
			}
		}
	}
	if err := jsonnum.CheckValue(map[string]any{"f": 1e300, "s": "1e9999999"}); err != nil {
		t.Errorf("typed numbers and strings: %v", err)
	}
}

func ExampleCheck() {
	fmt.Println(jsonnum.Check("1.7976931348623157e308"))
	fmt.Println(jsonnum.Check("1e9999999"))
	// Output:
	// <nil>
	// the number 1e9999999 is out of range: its exponent is beyond ±1000
}

func ExampleCheckValue() {
	dec := json.NewDecoder(strings.NewReader(`{"text":"x","confidence":1e9999999}`))
	dec.UseNumber()
	var args any
	_ = dec.Decode(&args)
	fmt.Println(jsonnum.CheckValue(args))
	// Output:
	// the number 1e9999999 at /confidence is out of range: its exponent is beyond ±1000
}
