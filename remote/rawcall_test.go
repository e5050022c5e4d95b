package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router"
)

// postLog records the bodies of the POSTs an upstream receives, so that a
// test can tell the raw path (string ids "agents-mcp-<n>") from go-sdk's
// (numeric ids), and see what was sent.
type postLog struct {
	mu     sync.Mutex
	bodies []string
}

func (l *postLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			l.mu.Lock()
			l.bodies = append(l.bodies, string(body))
			l.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
}

// count is the number of POSTs whose body contains all of parts.
func (l *postLog) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
outer:
	for _, b := range l.bodies {
		for _, p := range parts {
			if !strings.Contains(b, p) {
				continue outer
			}
		}
		n++
	}
	return n
}

// rawEnv is an env with one streamable upstream (the fixture) whose POSTs
// are logged, and the router's options as given; set changes the pool's.
func rawEnv(t *testing.T, ropts router.Options, set ...func(*Options)) (*env, *fixture, *postLog) {
	t.Helper()
	logs := &syncBuffer{}
	ropts.Version = "test"
	r := router.New(ropts)
	opts := fastOptions()
	for _, f := range set {
		f(&opts)
	}
	opts.Registry = r
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := NewPool(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool close: %v", err)
		}
	})
	e := &env{t: t, router: r, pool: p, logs: logs}
	fx := newFixture("up")
	pl := &postLog{}
	hs := serveHTTP(t, func() http.Handler {
		return pl.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil))
	})
	e.add(streamableConfig("up", hs.URL()))
	return e, fx, pl
}

const rawCallMarker = `"method":"tools/call","params":`

func TestRawCallRelaysResultsOnTheRawPath(t *testing.T) {
	t.Parallel()
	e, _, pl := rawEnv(t, router.Options{})
	forEachCaller(t, e, nil, func(t *testing.T, cs *mcp.ClientSession) {
		before := pl.count(`"id":"agents-mcp-`, rawCallMarker)
		if got := mustText(t, cs, "up__echo", `{"text":"hi","n":2}`); got != `{"text":"hi","n":2}` {
			t.Errorf("echo = %q", got)
		}
		res, err := call(testCtx(t, 5*time.Second), cs, "up__person", `{"name":"Ada","age":36}`)
		if err != nil || res.IsError {
			t.Fatalf("person: %v %v", err, res)
		}
		if got := asJSON(t, res.StructuredContent); !equalJSON(got, map[string]any{"greeting": "Hello, Ada", "adult": true}) {
			t.Errorf("structured content = %v", got)
		}
		if n := pl.count(`"id":"agents-mcp-`, rawCallMarker) - before; n != 2 {
			t.Errorf("%d calls on the raw path, want 2", n)
		}
	})
	// In-process calls want a decoded result: go-sdk's path.
	before := pl.count(`"id":"agents-mcp-`)
	res, err := e.router.CallTool(testCtx(t, 5*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__echo", Arguments: json.RawMessage(`{"text":"in"}`)}})
	if err != nil || resultText(res) != `{"text":"in"}` {
		t.Fatalf("in-process call: %v %q", err, resultText(res))
	}
	if n := pl.count(`"id":"agents-mcp-`) - before; n != 0 {
		t.Errorf("in-process call went on the raw path (%d POSTs)", n)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestRawCallRefusalsNeverReachTheUpstream(t *testing.T) {
	t.Parallel()
	e, _, pl := rawEnv(t, router.Options{Access: router.AccessOptions{
		Default: &agentsmcp.Principal{ID: "limited", Tools: []string{"up__echo"}},
	}})
	forEachCaller(t, e, nil, func(t *testing.T, cs *mcp.ClientSession) {
		before := pl.count(rawCallMarker)
		// Validation: "text" is required by the upstream's schema.
		if msg := errorText(t, cs, "up__echo", `{"n":1}`); !strings.Contains(msg, "text") {
			t.Errorf("validation error = %q", msg)
		}
		// Allowlist: the principal may call up__echo only.
		res, err := call(testCtx(t, 5*time.Second), cs, "up__person", `{"name":"Ada","age":36}`)
		if err == nil && !res.IsError {
			t.Errorf("a tool outside the allowlist was called: %v", resultText(res))
		}
		if n := pl.count(rawCallMarker) - before; n != 0 {
			t.Errorf("%d refused calls reached the upstream", n)
		}
		if got := mustText(t, cs, "up__echo", `{"text":"ok"}`); got != `{"text":"ok"}` {
			t.Errorf("allowed call = %q", got)
		}
	})
}

func TestRawCallCancellationReachesTheUpstream(t *testing.T) {
	t.Parallel()
	e, fx, pl := rawEnv(t, router.Options{})
	cs := e.httpCaller(nil, callerVersion)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, cs, "up__block", `{"id":"r1"}`)
		done <- err
	}()
	fx.waitStarted(t, 1, 5*time.Second)
	if pl.count(`"id":"agents-mcp-`, `"name":"block"`) != 1 {
		t.Fatal("the blocked call is not on the raw path")
	}
	cancel()
	select {
	case id := <-fx.cancelled:
		if id != "r1" {
			t.Errorf("cancelled %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream handler never saw the cancellation")
	}
	if err := <-done; err == nil {
		t.Error("the cancelled call succeeded")
	}
	if pl.count(`"notifications/cancelled"`, `"requestId":"agents-mcp-`) != 1 {
		t.Error("no notifications/cancelled for the raw call's id")
	}
	testutil.Eventually(t, 5*time.Second, "no call in flight", func() bool { return e.status("up").InFlight == 0 })
	if st := e.status("up"); st.Breaker != "closed" || st.State != StateReady {
		t.Errorf("after cancel: breaker %s, state %s", st.Breaker, st.State)
	}
}

func TestRawCallForwardsProgressAndLogsBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	e, _, pl := rawEnv(t, router.Options{})
	var progress progressLog
	logged := make(chan string, 10)
	cs := e.httpCaller(&mcp.ClientOptions{
		ProgressNotificationHandler: progress.handler,
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logged <- req.Params.Logger + ": " + req.Params.Data.(string)
		},
	}, callerVersion)
	if err := cs.SetLoggingLevel(testCtx(t, 5*time.Second), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "up__progress", Arguments: map[string]any{}}
	p.SetProgressToken("mine")
	res, err := cs.CallTool(testCtx(t, 5*time.Second), p)
	if err != nil || resultText(res) != "progressed" {
		t.Fatalf("progress call: %v %q", err, resultText(res))
	}
	// go-sdk's client hands notifications to their handler on a goroutine
	// of its own, so they may be seen just after the answer.
	testutil.Eventually(t, 5*time.Second, "three progress notifications with the caller's token", func() bool {
		return len(progress.forToken("mine")) == 3
	})
	if _, err := call(testCtx(t, 5*time.Second), cs, "up__log", `{"id":"L"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-logged:
		if got != "up/fx: hello from upstream L" {
			t.Errorf("log = %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the upstream's log message never reached the caller")
	}
	if pl.count(`"id":"agents-mcp-`, `"name":"progress"`) != 1 || pl.count(`"id":"agents-mcp-`, `"name":"log"`) != 1 {
		t.Error("the calls were not on the raw path")
	}
}

func TestRawCallMapsUpstreamErrors(t *testing.T) {
	t.Parallel()
	e, _, pl := rawEnv(t, router.Options{})
	cs := e.httpCaller(nil, callerVersion)
	// A JSON-RPC error of the upstream is relayed as a protocol error with
	// its code and message.
	_, err := call(testCtx(t, 5*time.Second), cs, "up__rpcerr", `{}`)
	if code, ok := errCode(err); !ok || code != -32042 || !strings.Contains(err.Error(), "upstream refuses") {
		t.Errorf("rpcerr: %v", err)
	}
	// A tool error is an error result (decoded, so that the recording sees it).
	if msg := errorText(t, cs, "up__fail", `{}`); msg != "the tool failed on purpose" {
		t.Errorf("fail = %q", msg)
	}
	if pl.count(`"id":"agents-mcp-`, `"name":"rpcerr"`) != 1 || pl.count(`"id":"agents-mcp-`, `"name":"fail"`) != 1 {
		t.Error("the calls were not on the raw path")
	}
	if st := e.status("up"); st.Breaker != "closed" || st.State != StateReady {
		t.Errorf("after tool errors: breaker %s, state %s", st.Breaker, st.State)
	}
}

// TestRawCallOversizedResult: an answer over the bound (Options.
// MaxResultBytes) fails the call with a message that says so, and the next
// call works. The test lowers the bound.
func TestRawCallOversizedResult(t *testing.T) {
	e, _, _ := rawEnv(t, router.Options{}, func(o *Options) { o.MaxResultBytes = 4096 })
	cs := e.httpCaller(nil, callerVersion)
	big := strings.Repeat("x", 8192)
	if msg := errorText(t, cs, "up__echo", `{"text":"`+big+`"}`); !strings.Contains(msg, "larger than 4096 bytes") {
		t.Errorf("oversized answer: %q", msg)
	}
	if got := mustText(t, cs, "up__echo", `{"text":"small"}`); got != `{"text":"small"}` {
		t.Errorf("after an oversized answer: %q", got)
	}
}
