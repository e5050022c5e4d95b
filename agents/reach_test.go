package agents

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// pingCountingClient connects a real go-sdk client, which answers
// sampling requests (calling onSample first, if not nil), to a new server
// session, and counts the pings the client receives.
func pingCountingClient(t *testing.T, onSample func()) (*mcp.ServerSession, *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "server", Version: "1"}, nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if onSample != nil {
				onSample()
			}
			return &mcp.CreateMessageResult{Model: "fake", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
	})
	pings := new(atomic.Int64)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" {
				pings.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // sampling as a session request, not MRTR
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ss, pings
}

// TestClientAnswersPingsOncePerWindow counts the pings a real go-sdk
// client receives: one for several questions in a row, none after the
// client answered a sampling request, one per session, and one again
// once the last answer is older than AnsweredRecently.
func TestClientAnswersPingsOncePerWindow(t *testing.T) {
	var clock atomic.Int64 // the fake clock, in nanoseconds; the client's handler moves it
	clock.Store(time.Now().UnixNano())
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	saved := answered
	answered = &answeredSessions{now: func() time.Time { return time.Unix(0, clock.Load()) }}
	t.Cleanup(func() { answered = saved })
	ctx := context.Background()

	a, pingsA := pingCountingClient(t, nil)
	for range 3 {
		if !ClientAnswers(ctx, a) {
			t.Fatal("the client did not answer")
		}
	}
	if n := pingsA.Load(); n != 1 {
		t.Errorf("three checks in a row pinged %d times, want 1", n)
	}

	advance(AnsweredRecently)
	if !ClientAnswers(ctx, a) {
		t.Fatal("the client did not answer")
	}
	if n := pingsA.Load(); n != 2 {
		t.Errorf("a check after the window: %d pings in all, want 2", n)
	}

	// The model takes a while to answer: its answer comes well after the
	// ping before it.
	b, pingsB := pingCountingClient(t, func() { advance(AnsweredRecently - time.Second) })
	advance(AnsweredRecently)
	llm := &SamplingLLM{Session: b}
	if _, err := llm.Complete(ctx, &agentsmcp.LLMRequest{Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if n := pingsB.Load(); n != 1 {
		t.Errorf("the first sampling request pinged %d times, want 1", n)
	}
	advance(time.Second) // the ping is older than the window now; the sampling answer is not
	if _, err := llm.Complete(ctx, &agentsmcp.LLMRequest{Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: "again"}}}); err != nil {
		t.Fatal(err)
	}
	if n := pingsB.Load(); n != 1 {
		t.Errorf("a sampling request right after an answered one pinged: %d pings in all, want 1", n)
	}
	if n := pingsA.Load(); n != 2 {
		t.Errorf("session b's checks pinged session a: %d pings, want 2", n)
	}
}

// TestClientAnswersForgetsAClosedSession: a session that stops answering
// is pinged (and found not to answer) once its last answer is old, and
// the memory of sessions stays within its bound.
func TestClientAnswersForgetsAClosedSession(t *testing.T) {
	now := time.Now()
	saved := answered
	answered = &answeredSessions{now: func() time.Time { return now }}
	t.Cleanup(func() { answered = saved })
	ctx := context.Background()

	ss, _ := pingCountingClient(t, nil)
	if !ClientAnswers(ctx, ss) {
		t.Fatal("the client did not answer")
	}
	ss.Close()
	now = now.Add(AnsweredRecently)
	if ClientAnswers(ctx, ss) {
		t.Error("a closed session counts as answering after the window")
	}

	for range maxAnsweredSessions + 10 {
		answered.note(new(mcp.ServerSession))
	}
	if n := answered.size(); n > maxAnsweredSessions {
		t.Errorf("%d sessions remembered, want at most %d", n, maxAnsweredSessions)
	}
}
