package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcid"
)

// FuzzJSONRPCGuard feeds arbitrary bodies to the guard in front of /mcp. The
// guard must never panic, must either pass the body on unchanged or answer
// with a well-formed JSON-RPC error of a code it documents, and must accept
// every well-formed request of a known method. What it passes on is at
// most maxBatch messages, each beyond the first charged to the rate limit
// (the batch path), and never a request with a fractional id.
func FuzzJSONRPCGuard(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"b":[1,2,{"c":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":2,"method":[]}`,
		`not json`, ``, `[]`, `null`, `"str"`, `{"jsonrpc":"2.0","id":1,"method":""}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2.5,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":-1E2,"method":"ping"}`,
	} {
		f.Add([]byte(seed), "")
		f.Add([]byte(seed), "2025-11-25")
	}
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		var forwarded []byte
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			forwarded, _ = io.ReadAll(r.Body)
			w.WriteHeader(299)
		})
		const maxBatch = 4
		charged := -1
		g := &JSONRPCGuard{MaxBodyBytes: 1 << 16, MaxBatchMessages: maxBatch, ChargeBatch: func(_ http.ResponseWriter, _ *http.Request, extra int) bool {
			if charged != -1 {
				t.Fatal("ChargeBatch called twice for one body")
			}
			charged = extra
			return true
		}}
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		rec := httptest.NewRecorder()
		g.Wrap(next).ServeHTTP(rec, req)

		switch rec.Code {
		case 299:
			if !bytes.Equal(forwarded, body) {
				t.Fatalf("body changed on the way through: %q -> %q", body, forwarded)
			}
			messages := []json.RawMessage{forwarded}
			if trimmed := bytes.TrimSpace(forwarded); len(trimmed) > 0 && trimmed[0] == '[' {
				if err := json.Unmarshal(trimmed, &messages); err != nil {
					t.Fatalf("passed on a batch that is not a JSON array: %q", body)
				}
			}
			if len(messages) > maxBatch {
				t.Fatalf("passed on a batch of %d messages, over the limit of %d", len(messages), maxBatch)
			}
			if want := len(messages) - 1; want > 0 && charged != want || want == 0 && charged != -1 {
				t.Fatalf("a body of %d messages charged %d extra, want %d: %q", len(messages), charged, want, body)
			}
			for _, m := range messages {
				if rpcid.Inexact(m) {
					t.Fatalf("passed on a fractional id: %q", m)
				}
			}
			return
		case http.StatusAccepted:
			return
		}
		var reply struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil || reply.JSONRPC != "2.0" || reply.Error == nil || reply.ID == nil {
			t.Fatalf("status %d with a body that is not a JSON-RPC error: %q (%v)", rec.Code, rec.Body.Bytes(), err)
		}
		switch reply.Error.Code {
		case -32700, -32600, -32601:
		default:
			t.Fatalf("undocumented code %d for %q", reply.Error.Code, body)
		}
		if reply.Error.Code == -32700 && json.Valid(bytes.TrimSpace(body)) && len(bytes.TrimSpace(body)) > 0 {
			t.Fatalf("valid JSON %q reported as a parse error", body)
		}
	})
}

// FuzzValidateArguments checks that validation never panics on arbitrary
// arguments and that its verdict agrees with whether it found issues.
func FuzzValidateArguments(f *testing.F) {
	schema := newCompiledSchema(json.RawMessage(`{"type":"object","properties":{` +
		`"a":{"type":"integer","minimum":0},"b":{"enum":["x","y"]},"c":{"type":"array","items":{"type":"string"}},` +
		`"d":{"$ref":"#/$defs/d"},"e/f~g":{"type":"string"}},"required":["a"],` +
		`"$defs":{"d":{"type":"object","required":["z"]}},"oneOf":[{"required":["b"]},{"required":["c"]}]}`))
	for _, seed := range []string{`{}`, `{"a":1,"b":"x"}`, `{"a":-1,"c":[1]}`, `{"d":{},"e/f~g":3}`, `[]`, `null`, `1e999`, `{"a":1e400}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		issues, missing, err := schema.validate(args)
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
	schema := newCompiledSchema(json.RawMessage(`{"type":"object","properties":{` +
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
		issues, _, err := schema.validate(json.RawMessage(args))
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
