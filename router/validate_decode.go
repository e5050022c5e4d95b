package router

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// decodeArguments decodes a call's arguments into the values the validator
// reads, exactly as [jsonschema.UnmarshalJSON] does: objects as
// map[string]any (the last of duplicate names wins), arrays as non-nil
// []any, numbers as [json.Number] holding their literal, strings, bools
// and nil.
//
// Every call pays this decoding, and the library's (encoding/json's
// Decoder, which scans the input twice and allocates a reader and a
// buffer) was a third of the router's validation CPU. So a
// single-pass decoder reads what it can decode exactly, and leaves the rest
// to the library, whose value and error text are then the answer: input
// that is not JSON, strings with invalid UTF-8 or escaped surrogates (which
// the library turns into U+FFFD by rules not worth repeating here), and
// nesting deeper than fastDecodeMaxDepth, and numbers out of the bounds
// of [jsonnum]. FuzzDecodeArguments checks that whatever the fast decoder
// accepts the library accepts with an equal value.
//
// Every number of the value returned is within [jsonnum]'s bounds: a
// number beyond them is reported as a [*jsonnum.Error] (with its JSON
// pointer), because the validator cannot be given it (it panics on an
// exponent beyond 10^6 and spends seconds on lesser ones).
// The fast decoder checks each number as it reads it; what the library
// decodes is checked afterwards.
func decodeArguments(b []byte) (any, error) {
	if v, ok := fastDecode(b); ok {
		return v, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if err := jsonnum.CheckValue(v); err != nil {
		return nil, err
	}
	return v, nil
}

// fastDecodeMaxDepth bounds the recursion of the fast decoder; deeper
// input goes to the library, which has its own limit.
const fastDecodeMaxDepth = 256

// fastDecode decodes b, one JSON value with optional whitespace around it,
// or reports false for anything it does not decode exactly (see
// [decodeArguments]).
func fastDecode(b []byte) (any, bool) {
	d := argDecoder{b: b}
	d.skipSpace()
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	d.skipSpace()
	return v, d.i == len(d.b)
}

type argDecoder struct {
	b []byte
	i int
}

// skipSpace skips JSON whitespace, which is only these four bytes.
func (d *argDecoder) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *argDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *argDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *argDecoder) object(depth int) (any, bool) {
	if depth > fastDecodeMaxDepth {
		return nil, false
	}
	d.i++ // {
	m := map[string]any{}
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.skipSpace()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.skipSpace()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.skipSpace()
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *argDecoder) array(depth int) (any, bool) {
	if depth > fastDecodeMaxDepth {
		return nil, false
	}
	d.i++ // [
	a := []any{}
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.skipSpace()
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// number reads a number by the JSON grammar and keeps its literal, as
// [json.Decoder.UseNumber] does. A number beyond [jsonnum]'s bounds is
// left to the library's path, which reports it.
func (d *argDecoder) number() (any, bool) {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return nil, false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if !d.digits() {
			return nil, false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, false
		}
	}
	if jsonnum.Check(d.b[start:d.i]) != nil {
		return nil, false
	}
	return json.Number(d.b[start:d.i]), true
}

// digits skips one or more decimal digits, and reports false for none.
func (d *argDecoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// str reads a string. Without escapes it is one copy of its bytes; with
// them it is built rune by rune. Invalid UTF-8 and escaped surrogates are
// refused (left to the library, see [decodeArguments]), as are the
// control characters JSON forbids.
func (d *argDecoder) str() (any, bool) {
	d.i++ // opening quote
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			return s, true
		case c == '\\':
			return d.escapedStr(start)
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			d.i += size
		}
	}
	return nil, false
}

// escapedStr continues [argDecoder.str] from the first backslash; the
// string began at start.
func (d *argDecoder) escapedStr(start int) (any, bool) {
	buf := make([]byte, 0, d.i-start+16)
	buf = append(buf, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(buf), true
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return nil, false
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok || (r >= 0xD800 && r <= 0xDFFF) {
					return nil, false
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			buf = append(buf, d.b[d.i:d.i+size]...)
			d.i += size
		}
	}
	return nil, false
}

// hex4 reads the four hex digits of a \u escape.
func (d *argDecoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}
