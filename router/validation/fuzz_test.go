package validation

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// FuzzValidateArguments checks that validation never panics on arbitrary
// arguments and that its verdict agrees with whether it found issues.
func FuzzValidateArguments(f *testing.F) {
	schema := New(json.RawMessage(`{"type":"object","properties":{` +
		`"a":{"type":"integer","minimum":0},"b":{"enum":["x","y"]},"c":{"type":"array","items":{"type":"string"}},` +
		`"d":{"$ref":"#/$defs/d"},"e/f~g":{"type":"string"}},"required":["a"],` +
		`"$defs":{"d":{"type":"object","required":["z"]}},"oneOf":[{"required":["b"]},{"required":["c"]}]}`))
	for _, seed := range []string{`{}`, `{"a":1,"b":"x"}`, `{"a":-1,"c":[1]}`, `{"d":{},"e/f~g":3}`, `[]`, `null`, `1e999`, `{"a":1e400}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		issues, missing, err := schema.Validate(args)
		if err != nil {
			return // not JSON: reported as an error, which is what callers turn into -32602
		}
		for _, is := range issues {
			if is.Keyword == "" || is.Message == "" || (is.Path != "" && is.Path[0] != '/') {
				t.Fatalf("malformed issue %+v for %q", is, args)
			}
		}
		if len(missing) > 0 && len(issues) == 0 {
			t.Fatalf("missing %q without issues for %q", missing, args)
		}
	})
}

// FuzzNumbersInArguments puts one number literal wherever the validator
// meets numbers (the bounds of a number, integer, multipleOf, an enum and
// a const of numbers, uniqueItems over an array long enough for the
// library's hashing) and validates the arguments as tools/call and
// tools/validate do, by the fast decoder or (viaLibrary) by the library's
// decoding. Validation must not panic (the library did on 1e9999999,
// once); it refuses the arguments as EINVALID naming the number
// exactly when jsonnum.Check refuses the literal, on both decoding paths;
// and every number it lets through converts to a big.Rat, which is what
// the library needs of it.
//
// pad nines go after the literal's first digit, so that literals around
// the length bound come from short inputs, which the fuzzer mutates and
// minimizes quickly.
func FuzzNumbersInArguments(f *testing.F) {
	schema := New(json.RawMessage(`{"type":"object","properties":{` +
		`"n":{"type":"number","minimum":0,"maximum":1,"exclusiveMinimum":-1,"exclusiveMaximum":2,"multipleOf":0.001},` +
		`"i":{"type":"integer"},"e":{"enum":[1,2.5,1e700]},"c":{"const":1e-5},` +
		`"u":{"type":"array","uniqueItems":true,"items":{"type":"number","minimum":-1e300}},"s":{"type":"string"}}}`))
	for _, seed := range []struct {
		lit string
		pad uint16
	}{
		{"0", 0}, {"-0.0", 0}, {"0.5", 0}, {"1e9999999", 0}, {"1e999999", 0}, {"-1e1000", 0}, {"1E+1001", 0},
		{"1e-1001", 0}, {"1e0000000000000000001", 0}, {"2.5e-00000000000000000000000000001000", 0},
		{"123456789012345678901234567890e-30", 0}, {"1", jsonnum.MaxLiteralBytes - 1}, {"1", jsonnum.MaxLiteralBytes},
		{"-1.5e-1000", jsonnum.MaxLiteralBytes - 10}, {"0.1", jsonnum.MaxLiteralBytes - 3},
	} {
		f.Add(seed.lit, seed.pad, false)
		f.Add(seed.lit, seed.pad, true)
	}
	f.Fuzz(func(t *testing.T, lit string, pad uint16, viaLibrary bool) {
		if i := strings.IndexAny(lit, "0123456789"); i >= 0 && pad > 0 {
			lit = lit[:i+1] + strings.Repeat("9", int(pad)%(2*jsonnum.MaxLiteralBytes)) + lit[i+1:]
		}
		dec := json.NewDecoder(strings.NewReader(lit))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || v != json.Number(lit) {
			return // not exactly one number literal
		}
		others := make([]string, 21) // the library hashes the items of more than 20
		for i := range others {
			others[i] = strconv.Itoa(i + 7)
		}
		s := `"x"`
		if viaLibrary {
			s = `"\ud800"` // the fast decoder leaves an escaped surrogate to the library
		}
		args := fmt.Sprintf(`{"n":%[1]s,"i":%[1]s,"e":%[1]s,"c":%[1]s,"u":[%[1]s,%[2]s],"s":%[3]s}`, lit, strings.Join(others, ","), s)
		issues, _, err := schema.Validate(json.RawMessage(args))
		bound := jsonnum.Check(lit)
		switch {
		case bound != nil:
			if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("%.40q is beyond the bounds (%v), but validation answered %v", lit, bound, err)
			}
		case err != nil:
			t.Fatalf("%.40q is within the bounds, but validation failed: %v", lit, err)
		default:
			if _, ok := new(big.Rat).SetString(lit); !ok {
				t.Fatalf("%.40q passed the bounds but big.Rat refuses it", lit)
			}
			for _, is := range issues {
				if is.Message == "" || is.Path == "" {
					t.Fatalf("malformed issue %+v for %.40q", is, lit)
				}
			}
		}
	})
}
