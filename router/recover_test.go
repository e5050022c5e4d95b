package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/router"
)

// panicsLogged counts the ERROR records of a contained panic in logs whose
// stack names where it happened.
func panicsLogged(t *testing.T, logs *lockedBuffer, site string) int {
	t.Helper()
	n := 0
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec struct{ Level, Msg, Panic, Stack string }
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Level == "ERROR" && strings.Contains(rec.Msg, "panicked") && rec.Panic != "" && strings.Contains(rec.Stack, site) {
			n++
		}
	}
	return n
}

// TestPanickingToolAnswersInternalError: a tool that panics answers -32603
// to its caller on every transport, fast paths and go-sdk's alike, the
// panic is logged at ERROR with its stack, and the same session goes on
// being served. Without containment the first call ends the test process.
func TestPanickingToolAnswersInternalError(t *testing.T) {
	f := newCrashFixture(t)
	for _, tr := range crashTransports() {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f, crashClient(t, tr.sampling))
			if err := cs.Ping(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			logged := panicsLogged(t, f.logs, "trapProvider")
			before := f.h.FastPathCalls()
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "trap__boom"})
			wantRPCError(t, "trap__boom", err, jsonrpc.CodeInternalError, "internal error")
			if fast := f.h.FastPathCalls() > before; fast != tr.fast {
				t.Errorf("the fast path took the call: %v, want %v", fast, tr.fast)
			}
			if n := panicsLogged(t, f.logs, "trapProvider"); n != logged+1 {
				t.Errorf("%d panics logged with their stack, want 1:\n%s", n-logged, f.logs.String())
			}
			stillServes(t, cs)
		})
	}
}

// TestPanickingToolElsewhere: the REST bridge answers 500 internal_error,
// an in-process caller (the executor) gets EINTERNAL, and the next call is
// served.
func TestPanickingToolElsewhere(t *testing.T) {
	f := newCrashFixture(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.base+router.RESTBridgePath, strings.NewReader(`{"tool":"trap__boom"}`))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out router.BridgeError
	_ = json.Unmarshal([]byte(readAll(t, resp)), &out)
	if resp.StatusCode != http.StatusInternalServerError || out.Error.Code != router.BridgeInternal {
		t.Errorf("REST bridge: %d %+v, want 500 %s", resp.StatusCode, out, router.BridgeInternal)
	}
	_, err = f.r.CallTool(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "trap__boom"}})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINTERNAL || strings.Contains(err.Error(), "a bug") {
		t.Errorf("in-process: %v, want EINTERNAL without the panic's text", err)
	}
	res, err := f.r.CallTool(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: mcptools.StoreInsightName, Arguments: json.RawMessage(`{"text":"still here"}`)}})
	if err != nil || res.IsError {
		t.Errorf("the next call: %v %+v", err, res)
	}
	if n := panicsLogged(t, f.logs, "trapProvider"); n != 2 {
		t.Errorf("%d panics logged, want 2", n)
	}
}

// TestPanicOutsideToolsAnswersInternalError: a panic under a method other
// than tools/call (a completion handler here), on go-sdk's goroutine, is
// answered -32603 by the middleware, logged with its stack, and the
// session goes on.
func TestPanicOutsideToolsAnswersInternalError(t *testing.T) {
	f := newCrashFixture(t)
	f.r.AddPromptCompletion("p", "a", func(_ context.Context, _ string, _ map[string]string) ([]string, error) {
		var values []string
		return values[:1], nil // out of range: a runtime panic
	})
	for _, tr := range crashTransports() {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f, crashClient(t, tr.sampling))
			_, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, Argument: mcp.CompleteParamsArgument{Name: "a", Value: "x"}})
			wantRPCError(t, "completion/complete", err, jsonrpc.CodeInternalError, "internal error")
			stillServes(t, cs)
			if n := panicsLogged(t, f.logs, "TestPanicOutsideToolsAnswersInternalError"); n == 0 {
				t.Errorf("the panic was not logged with its stack:\n%s", f.logs.String())
			}
		})
	}
}
