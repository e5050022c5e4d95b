package agents_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
)

// requestCaller is the Caller of a request that waits for the task: its
// values (the caller and its delegated token) reach the steps' calls; it
// cannot be asked anything, so a step that needs a person pauses.
type requestCaller struct{ values context.Context }

func (c requestCaller) Progress(context.Context, int, int, string) {}
func (c requestCaller) Elicit(context.Context, string, json.RawMessage) (json.RawMessage, bool, error) {
	return nil, false, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "no elicitation")
}
func (c requestCaller) Session() *mcp.ServerSession { return nil }
func (c requestCaller) Request() context.Context    { return c.values }

// A step of an HTTP source that acts as its caller (delegation forward)
// has the caller's token only while a request of that caller waits for
// it (ADR 0012 D7b). A stored task run without one (started in the
// background, resumed on another replica) pauses the step for
// authorization, as a missing credential does; resumed by its creator
// from a JWT-authenticated request, the step runs with the creator's
// token. Resumed by someone else, it does not run with theirs.
func TestDelegatedStepNeedsItsCallersRequest(t *testing.T) {
	h := newHarness(t, nil)
	const aliceJWT, bobJWT = "alice.jwt.token", "bob.jwt.token"
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+aliceJWT {
			http.Error(w, "not alice", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"mail":"alice's"}`)
	}))
	t.Cleanup(api.Close)
	ctx := context.Background()
	src := httptools.Source{Name: "mail", BaseURL: api.URL, Delegation: httptools.DelegationForward,
		Endpoints: []httptools.Endpoint{{Name: "inbox", Method: "GET", Path: "/inbox"}}}
	if err := httptools.NewSources(h.router, httptools.Options{}).Add(ctx, src.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	as := func(id, token string) context.Context {
		c := agentsmcp.WithPrincipal(ctx, &agentsmcp.Principal{ID: id})
		return delegation.WithDelegatedToken(c, delegation.NewDelegatedToken(id, token, time.Now().Add(time.Hour)))
	}

	// Created by alice, run with no request of hers waiting.
	task, err := h.exec.Start(as("jwt:alice", aliceJWT), h.plan("", step("read", "mail__inbox", `{}`)), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	task = h.wait(task.ID)
	s := stateOf(task, "read")
	if task.Status != agentsmcp.TaskPaused || s.Status != agentsmcp.StepWaitingConfirmation ||
		!strings.Contains(s.Error, "no delegable token") || calls.Load() != 0 {
		t.Fatalf("without the caller's request: %s, read %+v, %d API calls", task.Status, s, calls.Load())
	}

	// Bob resumes it: the step runs as alice, and bob's token is not hers.
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Confirm: []string{"read"}}, requestCaller{as("jwt:bob", bobJWT)}); err != nil {
		t.Fatal(err)
	}
	task = h.wait(task.ID)
	if s := stateOf(task, "read"); task.Status != agentsmcp.TaskPaused || !strings.Contains(s.Error, "no delegable token") || calls.Load() != 0 {
		t.Fatalf("resumed by bob: %s, read %+v, %d API calls", task.Status, s, calls.Load())
	}

	// Alice resumes it from her own request: the step acts as her.
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Confirm: []string{"read"}}, requestCaller{as("jwt:alice", aliceJWT)}); err != nil {
		t.Fatal(err)
	}
	if done := h.wait(task.ID); done.Status != agentsmcp.TaskSucceeded || calls.Load() != 1 {
		t.Fatalf("resumed by alice: %s %+v, %d API calls", done.Status, stateOf(done, "read"), calls.Load())
	}
}
