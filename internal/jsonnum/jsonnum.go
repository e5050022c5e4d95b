// Package jsonnum bounds the JSON numbers that agents-mcp takes from a
// request (a tool call's arguments, a task's inputs) or from a schema,
// before a JSON Schema validator reads them.
//
// JSON has no limit on a number's size, and the arguments keep every number
// as written (1e700 is valid JSON and reaches an upstream unchanged). The
// validator, santhosh-tekuri/jsonschema v6.0.3, converts each number it
// checks against a numeric keyword (minimum, maximum, multipleOf, integer,
// enum, const, uniqueItems) to an exact big.Rat. math/big refuses decimal
// exponents beyond 10^6, and the validator ignores that refusal and
// dereferences nil: one number such as 1e9999999 crashed the process
// once. Below that limit, the conversion costs grow with the
// exponent (1e999999 takes about 0.1 s) and with the number of digits
// (quadratically). So a number is refused, before the validator, when its
// literal is longer than [MaxLiteralBytes] or its exponent, as written, is
// beyond ±[MaxExponent]. Every number a client produces from a 64-bit
// float or integer (at most 25 characters, exponents within ±324), from a
// 128-bit decimal or a 256-bit integer is far inside both.
package jsonnum

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The bounds. math/big always accepts a number within both, and converts
// it in at most about 0.2 ms here (4096 digits; 1e1000 takes 7 µs, 1.5
// about 0.8 µs): per byte of request, within a few times what small
// numbers cost, where 1e999999 cost 0.1 s for 8 bytes.
const (
	// MaxLiteralBytes bounds the length of a number as written, sign,
	// fraction and exponent included.
	MaxLiteralBytes = 4096
	// MaxExponent bounds the magnitude of the exponent as written: 1e1000
	// and 1e-1000 pass, 1e1001 does not. It is three times float64's
	// range, so that numbers written by arbitrary-precision encoders
	// (1e700) stay valid.
	MaxExponent = 1000
)

// Error is a number out of the bounds.
type Error struct {
	// Pointer is the JSON pointer of the number in the value checked;
	// "" for the value itself, or when [Check] checked a literal alone.
	Pointer string
	// Literal is the number as written, cut to its first 32 bytes.
	Literal string
	// Reason says which bound it exceeds.
	Reason string
}

func (e *Error) Error() string {
	where := ""
	if e.Pointer != "" {
		where = " at " + e.Pointer
	}
	return fmt.Sprintf("the number %s%s is out of range: %s", e.Literal, where, e.Reason)
}

// Check reports an [*Error] when lit, a number literal of JSON's grammar,
// is out of the bounds, and nil otherwise. For a literal that is not of
// JSON's grammar its answer is unspecified (it does not panic).
func Check[T ~string | ~[]byte](lit T) error {
	if len(lit) > MaxLiteralBytes {
		return &Error{Literal: cut(string(lit[:33])), Reason: fmt.Sprintf("it is %d characters long; at most %d are accepted", len(lit), MaxLiteralBytes)}
	}
	// The exponent is the run of digits at the end, after e or E and an
	// optional sign.
	end := len(lit)
	i := end
	for i > 0 && lit[i-1] >= '0' && lit[i-1] <= '9' {
		i--
	}
	digits := i
	if i > 0 && (lit[i-1] == '+' || lit[i-1] == '-') {
		i--
	}
	if i == 0 || (lit[i-1] != 'e' && lit[i-1] != 'E') {
		return nil // no exponent
	}
	for digits < end && lit[digits] == '0' {
		digits++
	}
	exp := 0
	for ; digits < end; digits++ {
		exp = exp*10 + int(lit[digits]-'0')
		if exp > MaxExponent {
			return &Error{Literal: cut(string(lit)), Reason: fmt.Sprintf("its exponent is beyond ±%d", MaxExponent)}
		}
	}
	return nil
}

// cut shortens a literal for a message.
func cut(lit string) string {
	if len(lit) > 32 {
		return lit[:32] + "…"
	}
	return lit
}

// CheckValue reports the first number out of the bounds in v, a value
// decoded with its numbers as [json.Number] (encoding/json's UseNumber,
// the validator's UnmarshalJSON): an [*Error] with the number's JSON
// pointer. Objects are map[string]any and arrays []any; any other type
// holds no number or (float64, int…) one in range by its type. Of several
// numbers out of range, the one reported is the same every time: in an
// object, the one under the smallest name.
func CheckValue(v any) error {
	e, reversed := check(v)
	if e == nil {
		return nil
	}
	var sb strings.Builder
	for _, token := range slices.Backward(reversed) {
		sb.WriteByte('/')
		sb.WriteString(pointerEscaper.Replace(token))
	}
	e.Pointer = sb.String()
	return e
}

// check is CheckValue with the pointer's tokens in reverse order (so that
// the common case, no error, builds none).
func check(v any) (*Error, []string) {
	switch v := v.(type) {
	case json.Number:
		if err := Check(v); err != nil {
			return err.(*Error), nil
		}
	case map[string]any:
		var bad *Error
		var badPath []string
		var badName string
		for name, x := range v {
			if e, path := check(x); e != nil && (bad == nil || name < badName) {
				bad, badPath, badName = e, path, name
			}
		}
		if bad != nil {
			return bad, append(badPath, badName)
		}
	case []any:
		for i, x := range v {
			if e, path := check(x); e != nil {
				return e, append(path, strconv.Itoa(i))
			}
		}
	}
	return nil, nil
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
