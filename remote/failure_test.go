package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

func TestListChangedReachesRouterAndCallers(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		toolsChanged := make(chan struct{}, 100)
		cs := e.caller(&mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { toolsChanged <- struct{}{} },
		}, callerVersion)
		// The caller is connected and idle: nothing has changed yet.
		if _, err := cs.ListTools(testCtx(t, 5*time.Second), nil); err != nil {
			t.Fatal(err)
		}

		fx.server.AddTool(&mcp.Tool{Name: "newtool", Description: "added at run time", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}}}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new!"}}}, nil
			})
		testutil.Eventually(t, 2*time.Second, "the router lists up__newtool", func() bool {
			return slices.Contains(e.routerToolNames("up__"), "up__newtool")
		})
		select {
		case <-toolsChanged:
		case <-time.After(2 * time.Second):
			t.Fatal("the caller got no notifications/tools/list_changed")
		}
		var listed bool
		for tool, err := range cs.Tools(testCtx(t, 5*time.Second), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == "up__newtool" && tool.Description == "added at run time" {
				listed = true
			}
		}
		if !listed {
			t.Error("the caller's tools/list lacks up__newtool")
		}
		if got := mustText(t, cs, "up__newtool", `{"x":1}`); got != "new!" {
			t.Errorf("new tool answered %q", got)
		}
		if st := e.status("up"); st.Tools != 10 {
			t.Errorf("Status.Tools = %d, want 10", st.Tools)
		}

		fx.server.RemoveTools("newtool")
		testutil.Eventually(t, 2*time.Second, "the router drops up__newtool", func() bool {
			return !slices.Contains(e.routerToolNames("up__"), "up__newtool")
		})

		// Resources and prompts follow their list_changed too.
		fx.server.AddResource(&mcp.Resource{URI: "test://b", Name: "b"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "B"}}}, nil
		})
		fx.server.AddPrompt(&mcp.Prompt{Name: "q"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Q"}}}}, nil
		})
		testutil.Eventually(t, 2*time.Second, "resource b and prompt q are exposed", func() bool {
			st := e.status("up")
			return st.Resources == 2 && st.Prompts == 2
		})
		rr, err := cs.ReadResource(testCtx(t, 5*time.Second), &mcp.ReadResourceParams{URI: ResourceURIPrefix("up") + "test://b"})
		if err != nil || rr.Contents[0].Text != "B" {
			t.Fatalf("read b: %v", err)
		}
		if _, err := cs.GetPrompt(testCtx(t, 5*time.Second), &mcp.GetPromptParams{Name: "up__q"}); err != nil {
			t.Fatalf("get prompt q: %v", err)
		}
	})
}

func TestUpstreamGoesDownAndComesBack(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fxA, fxB := newFixture("a"), newFixture("b")
		t.Cleanup(fxA.releaseAll)
		hsA := serve(fxA.server)
		cfgA := httpConfig("a", transport, hsA.URL())
		cfgA.Timeout = 2 * time.Second
		e.add(cfgA)
		e.add(httpConfig("b", transport, serve(fxB.server).URL()))
		cs := e.caller(nil, callerVersion)
		if n := len(e.routerToolNames("a__")); n != 9 {
			t.Fatalf("a has %d tools listed", n)
		}

		// A call is in flight when the upstream dies.
		type outcome struct {
			msg string
			d   time.Duration
		}
		done := make(chan outcome, 1)
		go func() {
			start := time.Now()
			res, err := call(context.Background(), cs, "a__block", `{"id":"inflight"}`)
			msg := resultText(res)
			if err != nil {
				msg = err.Error()
			} else if !res.IsError {
				msg = "unexpected success: " + msg
			}
			done <- outcome{msg, time.Since(start)}
		}()
		fxA.waitStarted(t, 1, 5*time.Second)
		hsA.stop()
		select {
		case o := <-done:
			if strings.HasPrefix(o.msg, "unexpected success") || !strings.Contains(o.msg, `"a"`) {
				t.Errorf("in-flight call: %q", o.msg)
			}
			if o.d > cfgA.Timeout+time.Second {
				t.Errorf("in-flight call took %s with a timeout of %s", o.d, cfgA.Timeout)
			}
		case <-time.After(cfgA.Timeout + 3*time.Second):
			t.Fatal("the in-flight call hangs after the upstream died")
		}

		st := e.waitState("a", StateDown, 10*time.Second)
		if !strings.Contains(st.Reason, "cannot connect") || st.LastError == "" || st.LastErrorAt.IsZero() || st.FailedAttempts < 1 {
			t.Errorf("down status: reason %q, last error %q at %v, %d failed attempts", st.Reason, st.LastError, st.LastErrorAt, st.FailedAttempts)
		}
		testutil.Eventually(t, 5*time.Second, "a's tools are withdrawn", func() bool { return len(e.routerToolNames("a__")) == 0 })
		if st := e.status("a"); st.Resources != 0 || st.Prompts != 0 {
			t.Errorf("a still exposes %d resources and %d prompts", st.Resources, st.Prompts)
		}
		sum := e.pool.Summary()
		if sum.Down != 1 || sum.Ready != 1 || !strings.HasPrefix(sum.NotReady["a"], "down: ") {
			t.Errorf("Summary = %+v", sum)
		}
		// The other upstream is unaffected.
		if got := mustText(t, cs, "b__echo", `{"text":"still here"}`); !strings.Contains(got, "still here") {
			t.Errorf("b answered %q", got)
		}
		// An in-process call to the down upstream fails at once and says why.
		u, _ := e.pool.get("a")
		start := time.Now()
		_, err := u.CallTool(testCtx(t, 5*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "a__echo", Arguments: json.RawMessage(`{"text":"x"}`)}})
		if err == nil || !strings.Contains(err.Error(), "is down") || time.Since(start) > time.Second {
			t.Errorf("call to a down upstream: %v after %s", err, time.Since(start))
		}

		// Back on the same address: ready again, tools listed again.
		hsA.start()
		e.waitState("a", StateReady, 10*time.Second)
		testutil.Eventually(t, 5*time.Second, "a's tools are listed again", func() bool { return len(e.routerToolNames("a__")) == 9 })
		if got := mustText(t, cs, "a__echo", `{"text":"back"}`); !strings.Contains(got, "back") {
			t.Errorf("a answered %q", got)
		}
		if st := e.status("a"); st.FailedAttempts != 0 || st.Resources != 1 || st.Prompts != 1 {
			t.Errorf("after recovery: %d failed attempts, %d resources, %d prompts", st.FailedAttempts, st.Resources, st.Prompts)
		}
	})
}

func TestFirstConnectFailsThenRefreshConnectsNow(t *testing.T) {
	t.Parallel()
	fx := newFixture("late")
	hs := serveStreamable(t, fx.server)
	hs.stop()
	opts := fastOptions()
	opts.MinBackoff = time.Minute // the next attempt is far away unless Refresh asks
	e := newEnv(t, opts)
	cfg := streamableConfig("late", hs.URL())
	cfg.MaxBackoff = time.Minute
	start := time.Now()
	if err := e.pool.Add(testCtx(t, 10*time.Second), cfg); err != nil {
		t.Fatalf("Add of an unreachable upstream = %v, want nil (it keeps retrying)", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Add took %s", d)
	}
	st := e.status("late")
	if st.State != StateDown || st.LastError == "" || st.FailedAttempts != 1 || time.Until(st.NextAttemptAt) < 20*time.Second {
		t.Fatalf("status after a failed first attempt: %+v", st)
	}
	if n := e.routerToolNames("late__"); len(n) != 0 {
		t.Errorf("down upstream lists %v", n)
	}

	hs.start()
	st, err := e.pool.Refresh(testCtx(t, 10*time.Second), "late")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StateReady || st.Tools != 9 || time.Since(start) > 10*time.Second {
		t.Fatalf("Refresh = %s with %d tools", st.State, st.Tools)
	}
	// The router learns of the tools right after (OnToolsChanged).
	testutil.Eventually(t, 5*time.Second, "the router lists late's tools", func() bool { return len(e.routerToolNames("late__")) == 9 })
}

func TestUnresponsiveUpstreamIsDetectedByPings(t *testing.T) {
	t.Parallel()
	fx := newFixture("hang")
	var hang sync.Mutex // held: requests hang until their context ends
	var hanging bool
	normal := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hang.Lock()
			h := hanging
			hang.Unlock()
			if h && r.Method == http.MethodPost {
				<-r.Context().Done()
				return
			}
			normal.ServeHTTP(w, r)
		})
	})
	e := newEnv(t, fastOptions())
	cfg := streamableConfig("hang", hs.URL())
	cfg.Timeout = 500 * time.Millisecond
	e.add(cfg)

	hang.Lock()
	hanging = true
	hang.Unlock()
	// One missed ping degrades; two end the session, and reconnecting
	// times out: down. (A failed go-sdk Connect to a hung upstream returns
	// only after its cancellation notification timed out, 5 s later.)
	st := e.waitState("hang", StateDegraded, 5*time.Second)
	if !strings.Contains(st.Reason, "ping") {
		t.Errorf("degraded reason %q", st.Reason)
	}
	st = e.waitState("hang", StateDown, 20*time.Second)
	if st.LastError == "" {
		t.Error("down without LastError")
	}
	testutil.Eventually(t, 5*time.Second, "tools withdrawn", func() bool { return len(e.routerToolNames("hang__")) == 0 })

	hang.Lock()
	hanging = false
	hang.Unlock()
	e.waitState("hang", StateReady, 10*time.Second)
	testutil.Eventually(t, 5*time.Second, "tools listed again", func() bool { return len(e.routerToolNames("hang__")) == 9 })
}

func TestCircuitBreakerOpensAndRecovers(t *testing.T) {
	t.Parallel()
	opts := fastOptions()
	opts.BreakerFailures = 3
	opts.BreakerCooldown = 2 * time.Second
	e := newEnv(t, opts)
	fx := newFixture("slow")
	t.Cleanup(fx.releaseAll)
	cfg := streamableConfig("slow", serveStreamable(t, fx.server).URL())
	cfg.Timeout = 400 * time.Millisecond
	e.add(cfg)
	cs := e.caller(nil, callerVersion)

	for i := range 3 {
		start := time.Now()
		msg := errorText(t, cs, "slow__block", `{"id":"t"}`)
		d := time.Since(start)
		if !strings.Contains(msg, "did not answer within its timeout of 400ms") {
			t.Errorf("timed-out call %d: %q", i, msg)
		}
		if d < 350*time.Millisecond || d > 3*time.Second {
			t.Errorf("timed-out call %d took %s", i, d)
		}
	}
	st := e.status("slow")
	if st.Breaker != "open" || st.State != StateDegraded || !strings.Contains(st.Reason, "circuit open") {
		t.Fatalf("after 3 timeouts: breaker %s, state %s (%s)", st.Breaker, st.State, st.Reason)
	}
	// Open: calls fail fast, whatever the tool, and say why.
	start := time.Now()
	msg := errorText(t, cs, "slow__echo", `{"text":"x"}`)
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("refused call took %s", d)
	}
	if !strings.Contains(msg, "calls are refused") || !strings.Contains(msg, "did not answer within its timeout") {
		t.Errorf("refused call: %q", msg)
	}
	if sum := e.pool.Summary(); sum.Degraded != 1 || !strings.Contains(sum.NotReady["slow"], "circuit") {
		t.Errorf("Summary = %+v", sum)
	}

	// After the cooldown one call probes; its success closes the circuit.
	time.Sleep(opts.BreakerCooldown) // the cooldown itself is what is tested
	if got := mustText(t, cs, "slow__echo", `{"text":"probe"}`); !strings.Contains(got, "probe") {
		t.Errorf("probe answered %q", got)
	}
	if st := e.status("slow"); st.Breaker != "closed" || st.State != StateReady {
		t.Errorf("after a good probe: breaker %s, state %s", st.Breaker, st.State)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("narrow")
	t.Cleanup(fx.releaseAll)
	cfg := streamableConfig("narrow", serveStreamable(t, fx.server).URL())
	cfg.MaxConcurrency = 2
	cfg.Timeout = 10 * time.Second
	e.add(cfg)
	cs := e.caller(nil, callerVersion)

	results := make(chan string, 3)
	for _, id := range []string{"1", "2", "3"} {
		go func() {
			res, err := call(context.Background(), cs, "narrow__block", `{"id":"`+id+`"}`)
			if err != nil {
				results <- err.Error()
				return
			}
			results <- resultText(res)
		}()
	}
	fx.waitStarted(t, 2, 5*time.Second)
	// The third waits for a slot: it does not reach the upstream.
	select {
	case id := <-fx.started:
		t.Fatalf("a third call (%s) reached the upstream", id)
	case <-time.After(300 * time.Millisecond):
	}
	if st := e.status("narrow"); st.InFlight != 2 {
		t.Errorf("InFlight = %d, want 2", st.InFlight)
	}
	fx.releaseAll()
	fx.waitStarted(t, 1, 5*time.Second)
	for range 3 {
		select {
		case r := <-results:
			if !strings.HasPrefix(r, "released ") {
				t.Errorf("call answered %q", r)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("calls did not finish")
		}
	}
	if m := fx.maxInBlock.Load(); m != 2 {
		t.Errorf("the upstream ran %d calls at once, want at most (and here exactly) 2", m)
	}
}

func TestCallWaitingForSlotTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("busy")
	cfg := streamableConfig("busy", serveStreamable(t, fx.server).URL())
	cfg.MaxConcurrency = 2
	cfg.Timeout = 500 * time.Millisecond
	e.add(cfg)
	cs := e.caller(nil, callerVersion)

	// Both slots are taken for longer than a call's timeout. (Calls that
	// hold a slot end within the same timeout, so only holders that
	// outlive it, as here, make a waiting call time out in the queue.)
	u, _ := e.pool.get("busy")
	u.slots <- struct{}{}
	u.slots <- struct{}{}
	start := time.Now()
	msg := errorText(t, cs, "busy__echo", `{"text":"x"}`)
	d := time.Since(start)
	if !strings.Contains(msg, "did not answer within its timeout of 500ms (waiting for one of its 2 call slots)") {
		t.Errorf("queued call: %q", msg)
	}
	if d < 450*time.Millisecond || d > 3*time.Second {
		t.Errorf("queued call failed after %s", d)
	}
	<-u.slots
	<-u.slots
	if got := mustText(t, cs, "busy__echo", `{"text":"free"}`); !strings.Contains(got, "free") {
		t.Errorf("after slots freed: %q", got)
	}
}

func TestExpiredSessionIsReinitializedTransparently(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("exp")
	hs := serveStreamable(t, fx.server)
	e.add(streamableConfig("exp", hs.URL()))
	cs := e.caller(nil, callerVersion)
	mustText(t, cs, "exp__echo", `{"text":"before"}`)
	connected := e.status("exp").ConnectedAt

	hs.forgetSessions() // the upstream restarted: it answers 404 to the old session
	if got := mustText(t, cs, "exp__echo", `{"text":"after"}`); !strings.Contains(got, "after") {
		t.Errorf("call after expiry answered %q", got)
	}
	st := e.waitState("exp", StateReady, 5*time.Second)
	if !st.ConnectedAt.After(connected) {
		t.Error("no new session was established")
	}
	if st.Breaker != "closed" {
		t.Errorf("breaker %s after a transparent retry", st.Breaker)
	}
	if n := len(e.routerToolNames("exp__")); n != 9 {
		t.Errorf("%d tools listed after re-initializing", n)
	}
	// And again: each expiry is handled.
	hs.forgetSessions()
	mustText(t, cs, "exp__echo", `{"text":"again"}`)
}

func TestRemoveOfHungUpstreamIsBounded(t *testing.T) {
	t.Parallel()
	fx := newFixture("hung")
	var hanging atomic.Bool
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hanging.Load() && r.Method == http.MethodPost {
				<-r.Context().Done()
				return
			}
			inner.ServeHTTP(w, r)
		})
	})
	e := newEnv(t, fastOptions())
	cfg := streamableConfig("hung", hs.URL())
	cfg.Timeout = 500 * time.Millisecond
	e.add(cfg)
	cs := e.caller(nil, callerVersion)

	hanging.Store(true)
	// A call times out; go-sdk then tries for 5 s to tell the hung
	// upstream that the call is cancelled.
	if msg := errorText(t, cs, "hung__echo", `{"text":"x"}`); !strings.Contains(msg, "did not answer within its timeout") {
		t.Errorf("call to the hung upstream: %q", msg)
	}
	start := time.Now()
	if err := e.pool.Remove(testCtx(t, 20*time.Second), "hung"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > closeWait+time.Second {
		t.Errorf("Remove of a hung upstream took %s; closing a session may hold it up for %s at most", d, closeWait)
	}
}

func TestStateGoesConnectingThenReady(t *testing.T) {
	t.Parallel()
	fx := newFixture("gated")
	gate := make(chan struct{})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-gate
			inner.ServeHTTP(w, r)
		})
	})
	e := newEnv(t, fastOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := e.pool.Add(ctx, streamableConfig("gated", hs.URL())); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Add waited %s past its context", d)
	}
	st := e.status("gated")
	if st.State != StateConnecting || st.Reason == "" || st.Tools != 0 {
		t.Fatalf("while the first connect is under way: %s (%s) with %d tools", st.State, st.Reason, st.Tools)
	}
	if sum := e.pool.Summary(); sum.Connecting != 1 || sum.NotReady["gated"] == "" {
		t.Errorf("Summary = %+v", sum)
	}
	if n := len(e.routerToolNames("gated__")); n != 0 {
		t.Errorf("%d tools listed before the upstream is ready", n)
	}
	close(gate)
	st = e.waitState("gated", StateReady, 10*time.Second)
	if st.ConnectedAt.IsZero() || st.ServerName != "fixture-gated" || st.ServerVersion != "1.2.3" || st.ProtocolVersion == "" {
		t.Errorf("ready status %+v", st)
	}
	testutil.Eventually(t, 5*time.Second, "tools listed once ready", func() bool { return len(e.routerToolNames("gated__")) == 9 })
}
