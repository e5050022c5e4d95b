package remote

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router"
)

// httpCaller connects a go-sdk client to the router's HTTP face (streamable
// HTTP on /mcp), the way a remote agent client does.
func (e *env) httpCaller(opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	e.t.Helper()
	h := e.router.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	e.t.Cleanup(func() {
		h.Close()
		srv.CloseClientConnections()
		srv.Close()
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "http-caller", Version: "1"}, opts)
	cs, err := c.Connect(testCtx(e.t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// forEachCaller runs f with a caller connected in memory and one connected over
// the router's streamable HTTP endpoint.
func forEachCaller(t *testing.T, e *env, opts *mcp.ClientOptions, f func(t *testing.T, cs *mcp.ClientSession)) {
	t.Run("in-memory", func(t *testing.T) { f(t, e.caller(opts, callerVersion)) })
	t.Run("http", func(t *testing.T) { f(t, e.httpCaller(opts, callerVersion)) })
}

type progressLog struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cp := *req.Params
	p.notes = append(p.notes, &cp)
}

func (p *progressLog) forToken(tok any) []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*mcp.ProgressNotificationParams
	for _, n := range p.notes {
		if n.ProgressToken == tok {
			out = append(out, n)
		}
	}
	return out
}

func (p *progressLog) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notes)
}

func TestProgressReachesCallerWithItsToken(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		progress := &progressLog{}
		opts := &mcp.ClientOptions{ProgressNotificationHandler: progress.handler}

		forEachCaller(t, e, opts, func(t *testing.T, cs *mcp.ClientSession) {
			tok := "caller-token-" + t.Name()
			p := &mcp.CallToolParams{Name: "up__progress", Arguments: json.RawMessage(`{}`)}
			p.SetProgressToken(tok)
			res, err := cs.CallTool(testCtx(t, 10*time.Second), p)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %s", err, resultText(res))
			}
			upstreamTok := <-fx.progTok
			if upstreamTok == tok || !strings.HasPrefix(upstreamTok.(string), "agents-mcp-") {
				t.Errorf("upstream saw progress token %v; want the pool's own, not the caller's", upstreamTok)
			}
			testutil.Eventually(t, 5*time.Second, "3 progress notifications with the caller's token", func() bool {
				return len(progress.forToken(tok)) == 3
			})
			for i, n := range progress.forToken(tok) {
				if n.Progress != float64(i+1) || n.Total != 3 || n.Message != "step "+string(rune('1'+i)) {
					t.Errorf("notification %d = %+v", i, n)
				}
			}
			// The pool's own tokens never reach callers.
			for _, n := range progress.all() {
				if s, _ := n.ProgressToken.(string); strings.HasPrefix(s, "agents-mcp-") {
					t.Errorf("caller got the upstream token %q", s)
				}
			}

			// Without a token the upstream gets none either.
			if got := mustText(t, cs, "up__progress", `{}`); got != "no progress token" {
				t.Errorf("call without token: %q", got)
			}
			if got := <-fx.progTok; got != nil {
				t.Errorf("upstream saw token %v for a call without one", got)
			}
		})
	})
}

func TestCancellationReachesUpstream(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		forEachCaller(t, e, nil, func(t *testing.T, cs *mcp.ClientSession) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := call(ctx, cs, "up__block", `{"id":"c1"}`)
				done <- err
			}()
			fx.waitStarted(t, 1, 5*time.Second)
			if st := e.status("up"); st.InFlight != 1 {
				t.Errorf("InFlight = %d during the call, want 1", st.InFlight)
			}
			cancel()
			select {
			case id := <-fx.cancelled:
				if id != "c1" {
					t.Errorf("cancelled %q", id)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream handler never saw the cancellation")
			}
			select {
			case err := <-done:
				if err == nil {
					t.Error("cancelled call succeeded")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("cancelled call did not return")
			}
			testutil.Eventually(t, 5*time.Second, "no call in flight", func() bool { return e.status("up").InFlight == 0 })
			// Cancellations are not failures of the upstream.
			if st := e.status("up"); st.Breaker != "closed" || st.State != StateReady {
				t.Errorf("after cancel: breaker %s, state %s", st.Breaker, st.State)
			}
		})
	})
}

func TestSamplingIsForwardedToCaller(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		var mu sync.Mutex
		var asked []string
		opts := &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range req.Params.Messages {
					if t, ok := m.Content.(*mcp.TextContent); ok {
						asked = append(asked, t.Text)
					}
				}
				return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "4"}}, nil
			},
		}
		forEachCaller(t, e, opts, func(t *testing.T, cs *mcp.ClientSession) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			if got := mustText(t, cs, "up__sample", `{}`); got != "model test-model said 4" {
				t.Errorf("sample tool answered %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0] != "what is 2+2?" {
				t.Errorf("caller was asked %q", asked)
			}
		})
	})
}

func TestElicitationIsForwardedToCaller(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))
	var mu sync.Mutex
	var messages []string
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			messages = append(messages, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		},
	}
	forEachCaller(t, e, opts, func(t *testing.T, cs *mcp.ClientSession) {
		if got := mustText(t, cs, "up__elicit", `{}`); got != `accept {"name":"Ann"}` {
			t.Errorf("elicit tool answered %q", got)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if len(messages) != 2 || messages[0] != "What is your name?" {
		t.Errorf("caller was asked %q", messages)
	}
}

func TestRefusalsWithoutCapabilityDoNotHang(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))
	forEachCaller(t, e, nil, func(t *testing.T, cs *mcp.ClientSession) {
		for tool, word := range map[string]string{"up__sample": "sampling", "up__elicit": "elicitation"} {
			start := time.Now()
			msg := errorText(t, cs, tool, `{}`)
			if !strings.Contains(msg, word) || !strings.Contains(msg, "does not support") {
				t.Errorf("%s without the capability: %q", tool, msg)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("%s took %s to be refused", tool, d)
			}
		}
	})
	if st := e.status("up"); st.State != StateReady || st.Breaker != "closed" {
		t.Errorf("after refusals: %s, breaker %s", st.State, st.Breaker)
	}
}

// A caller on the sessionless protocol (2026-07-28) cannot receive
// server-initiated requests at all; the upstream must get a refusal rather
// than wait.
func TestSamplingForSessionlessCallerFailsCleanly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Content: &mcp.TextContent{Text: "x"}}, nil
		},
	}
	cs := e.caller(opts, "")
	start := time.Now()
	res, err := call(testCtx(t, 10*time.Second), cs, "up__sample", `{}`)
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	// go-sdk refuses to send the request on that protocol; the upstream
	// learns it at once and fails the tool.
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "sampling") {
		t.Errorf("sessionless caller, sampling: err=%v result=%q", err, resultText(res))
	}
}

func TestServerRequestsAreNotMisattributed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))
	var sampledBy sync.Map
	samplingCaller := func(name string) *mcp.ClientSession {
		return e.caller(&mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				sampledBy.Store(name, true)
				return &mcp.CreateMessageResult{Model: name, Content: &mcp.TextContent{Text: "ok"}}, nil
			},
		}, callerVersion)
	}
	a, b := samplingCaller("a"), samplingCaller("b")

	// While a's call is in flight, b's sampling request could be either's.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = call(testCtx(t, 10*time.Second), a, "up__block", `{"id":"a"}`)
	}()
	fx.waitStarted(t, 1, 5*time.Second)
	msg := errorText(t, b, "up__sample", `{}`)
	if !strings.Contains(msg, "cannot tell which of 2 calls") {
		t.Errorf("ambiguous sampling request: %q", msg)
	}
	if _, asked := sampledBy.Load("a"); asked {
		t.Error("caller a was asked to sample for b's call")
	}
	fx.releaseAll()
	<-done

	// Alone again, b's request is b's.
	if got := mustText(t, b, "up__sample", `{}`); got != "model b said ok" {
		t.Errorf("b alone: %q", got)
	}

	// A call made inside the process has no client to ask.
	u, _ := e.pool.get("up")
	res, err := u.CallTool(testCtx(t, 5*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__sample", Arguments: json.RawMessage(`{}`)}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "inside agents-mcp") {
		t.Errorf("in-process sampling: %v %q", err, resultText(res))
	}
}

func TestLoggingReachesCaller(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		var mu sync.Mutex
		var got []*mcp.LoggingMessageParams
		received := func() []*mcp.LoggingMessageParams {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(got)
		}
		cs := e.caller(&mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, req.Params)
			},
		}, callerVersion)
		setLevel := func(level mcp.LoggingLevel) {
			if err := cs.SetLoggingLevel(testCtx(t, 5*time.Second), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
				t.Fatal(err)
			}
		}
		setLevel("info")

		withData := func(data string) []*mcp.LoggingMessageParams {
			var out []*mcp.LoggingMessageParams
			for _, m := range received() {
				if m.Data == data {
					out = append(out, m)
				}
			}
			return out
		}
		if txt := mustText(t, cs, "up__log", `{"id":"1"}`); txt != "logged" {
			t.Fatalf("log tool answered %q", txt)
		}
		testutil.Eventually(t, 5*time.Second, "the caller receives the upstream's log message", func() bool {
			return len(withData("hello from upstream 1")) == 1
		})
		if m := withData("hello from upstream 1")[0]; m.Level != "warning" || m.Logger != "up/fx" {
			t.Errorf("log message %+v", m)
		}

		// Above the caller's level, nothing is sent to it: of a call at
		// level error and one at level info, the caller gets the second's
		// message only (messages arrive in order).
		setLevel("error")
		mustText(t, cs, "up__log", `{"id":"2"}`)
		setLevel("info")
		mustText(t, cs, "up__log", `{"id":"3"}`)
		testutil.Eventually(t, 5*time.Second, "the third message arrives", func() bool { return len(withData("hello from upstream 3")) == 1 })
		if n := len(withData("hello from upstream 2")); n != 0 {
			t.Errorf("caller at level error got the warning")
		}
		// No message was logged by the server instead of being sent.
		for _, id := range []string{"1", "3"} {
			if l := e.logs.lines("upstream log message", "hello from upstream "+id); len(l) != 0 {
				t.Errorf("message %s went to the server log: %q", id, l)
			}
		}
	})
}
