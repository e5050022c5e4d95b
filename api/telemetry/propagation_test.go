package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
)

// waitingCaller is the agents.Caller of a request that waits for its
// task: what matters here is Request, the request's values, which carry
// its span.
type waitingCaller struct{ values context.Context }

func (waitingCaller) Progress(context.Context, int, int, string) {}
func (waitingCaller) Elicit(context.Context, string, json.RawMessage) (json.RawMessage, bool, error) {
	return nil, false, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "this caller cannot be asked")
}
func (waitingCaller) Session() *mcp.ServerSession { return nil }
func (c waitingCaller) Request() context.Context  { return c.values }

// TestTracePropagation runs a task whose steps call a tool of a real
// upstream MCP server over streamable HTTP, through the router and the
// remote pool, and checks that every span lands in the trace of the
// request waiting for the task, each below the one before:
//
//	request → executor step → upstream call → upstream's POST /mcp → upstream's tool
//
// The last two are in the upstream's process as far as tracing goes: they
// join through the traceparent header (PropagatingTransport, then
// HTTPMiddleware and, in the tool, the extraction the router does).
func TestTracePropagation(t *testing.T) {
	exp := useTestTracing(t)
	ctx := t.Context()

	upstream := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	type textArgs struct {
		Text string `json:"text"`
	}
	var flakyCalls atomic.Int32
	toolSpan := func(ctx context.Context, req *mcp.CallToolRequest) {
		if req.Extra != nil && req.Extra.Header != nil {
			// As router/access.go does: this request's trace context is in
			// its headers, not in the session's context.
			ctx = otel.GetTextMapPropagator().Extract(trace.ContextWithSpanContext(ctx, trace.SpanContext{}), propagation.HeaderCarrier(req.Extra.Header))
		}
		_, span := otel.Tracer("upstream").Start(ctx, "upstream tool")
		span.End()
	}
	mcp.AddTool(upstream, &mcp.Tool{Name: "echo", Description: "Says it back"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			toolSpan(ctx, req)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(upstream, &mcp.Tool{Name: "flaky", Description: "Fails once"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			toolSpan(ctx, req)
			if flakyCalls.Add(1) == 1 {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "temporarily unavailable"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	srv := httptest.NewServer(HTTPMiddleware(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil)))
	defer srv.Close()

	r := router.New(router.Options{})
	pool := remote.NewPool(remote.Options{Registry: r, HTTPTransport: PropagatingTransport(remote.NewHTTPTransport(nil))})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = pool.Close(cctx)
	}()
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "up", Transport: remote.TransportStreamable, URL: srv.URL + "/mcp"}); err != nil {
		t.Fatalf("add upstream: %v", err)
	}
	if st, _ := pool.Status("up"); st.State != remote.StateReady {
		t.Fatalf("upstream is %s (%s)", st.State, st.Reason)
	}

	db := openStore(t)
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: r})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ex.Close(cctx)
	}()
	plan := &agentsmcp.Plan{Request: "say hi twice", Steps: []agentsmcp.PlanStep{
		{ID: "say", Tool: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)},
		{ID: "retry", Tool: "up__flaky", Arguments: json.RawMessage(`{"text":"hi again"}`),
			Retry: &agentsmcp.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}},
	}}
	if err := db.CreatePlan(ctx, plan); err != nil {
		t.Fatalf("CreatePlan: %v", err)
	}
	exp.Reset() // only the spans of the task from here on

	reqCtx, request := otel.Tracer("test").Start(ctx, "tools/call run_task")
	task, err := ex.Start(reqCtx, plan, nil, nil, waitingCaller{values: context.WithoutCancel(reqCtx)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	final, err := ex.Wait(ctx, task.ID)
	request.End()
	if err != nil || final.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task: %v, %+v", err, final)
	}

	// The upstream's server span ends when its handler returns, which may
	// be after the client read the answer off the stream: wait until every
	// upstream call has its server span (or give up and let the checks say
	// what is missing).
	spans := exp.GetSpans()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); spans = exp.GetSpans() {
		count := func(name string) int {
			return len(slices.DeleteFunc(slices.Clone(spans), func(s tracetest.SpanStub) bool { return s.Name != name }))
		}
		if count("POST /mcp") >= count("upstream call") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	byParent := map[trace.SpanID][]tracetest.SpanStub{}
	for _, s := range spans {
		if s.SpanContext.TraceID() != request.SpanContext().TraceID() {
			t.Errorf("span %q is in trace %s, not the request's", s.Name, s.SpanContext.TraceID())
		}
		byParent[s.Parent.SpanID()] = append(byParent[s.Parent.SpanID()], s)
	}
	// children are the spans named name below parent: its children, or
	// theirs when spans of other names come in between (such as a span of
	// the router between a step and its upstream call).
	var children func(parent trace.SpanID, name string) []tracetest.SpanStub
	children = func(parent trace.SpanID, name string) []tracetest.SpanStub {
		var out []tracetest.SpanStub
		for _, s := range byParent[parent] {
			if s.Name == name {
				out = append(out, s)
			} else {
				out = append(out, children(s.SpanContext.SpanID(), name)...)
			}
		}
		return out
	}
	steps := children(request.SpanContext().SpanID(), "executor step")
	if len(steps) != 2 {
		t.Fatalf("%d executor step spans under the request, want 2; spans: %v", len(steps), names(spans))
	}
	for _, step := range steps {
		stepID := attr(step.Attributes, "agents_mcp.step.id").AsString()
		wantAttempts := map[string]int{"say": 1, "retry": 2}[stepID]
		if got := attr(step.Attributes, "agents_mcp.task.id").AsString(); got != task.ID {
			t.Errorf("step %s: task id %q, want %q", stepID, got, task.ID)
		}
		if got := attr(step.Attributes, "agents_mcp.attempts").AsInt64(); got != int64(wantAttempts) {
			t.Errorf("step %s: attempts %d, want %d", stepID, got, wantAttempts)
		}
		events := slices.DeleteFunc(slices.Clone(step.Events), func(e sdktrace.Event) bool { return e.Name != "attempt" })
		if len(events) != wantAttempts {
			t.Errorf("step %s: %d attempt events, want %d", stepID, len(events), wantAttempts)
		}
		calls := children(step.SpanContext.SpanID(), "upstream call")
		if len(calls) != wantAttempts {
			t.Fatalf("step %s: %d upstream call spans, want %d; spans: %v", stepID, len(calls), wantAttempts, names(spans))
		}
		var outcomes []string
		for _, call := range calls {
			outcomes = append(outcomes, attr(call.Attributes, "agents_mcp.outcome").AsString())
			if up := attr(call.Attributes, "agents_mcp.upstream").AsString(); up != "up" || call.SpanKind != trace.SpanKindClient {
				t.Errorf("upstream call span: upstream %q kind %v", up, call.SpanKind)
			}
			posts := children(call.SpanContext.SpanID(), "POST /mcp")
			if len(posts) != 1 {
				t.Fatalf("%d upstream server spans under an upstream call, want 1; spans: %v", len(posts), names(spans))
			}
			if n := len(children(posts[0].SpanContext.SpanID(), "upstream tool")); n != 1 {
				t.Errorf("%d upstream tool spans under the upstream's server span, want 1", n)
			}
		}
		slices.Sort(outcomes)
		want := map[string][]string{"say": {"ok"}, "retry": {"ok", "tool_error"}}[stepID]
		if !slices.Equal(outcomes, want) {
			t.Errorf("step %s: call outcomes %v, want %v", stepID, outcomes, want)
		}
	}
}

func attr(attrs []attribute.KeyValue, key string) attribute.Value {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// The metrics' upstream states are the pool's.
func TestUpstreamStatesMatchRemote(t *testing.T) {
	for _, s := range []remote.State{remote.StateConnecting, remote.StateReady, remote.StateDegraded, remote.StateDown} {
		if !slices.Contains(UpstreamStates, string(s)) {
			t.Errorf("remote state %q is not in UpstreamStates", s)
		}
	}
	if len(UpstreamStates) != 4 {
		t.Errorf("UpstreamStates = %v, want the 4 states of remote", UpstreamStates)
	}
}
