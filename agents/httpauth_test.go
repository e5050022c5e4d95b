package agents_test

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
)

// storeAuthorizer is the credential store as the HTTP tools take it, as
// cmd/agents-mcp adapts it.
type storeAuthorizer struct{ m *credentials.Manager }

func (a storeAuthorizer) Authorize(ctx context.Context, source string) (*agentsmcp.AppliedCredential, error) {
	return a.m.Credentials(ctx, source, agentsmcp.PrincipalIDFrom(ctx))
}

func (a storeAuthorizer) Refused(ctx context.Context, source string, status int) error {
	return a.m.Refused(ctx, source, agentsmcp.PrincipalIDFrom(ctx), status)
}

// A step whose HTTP tool is refused (401) with the stored credential
// pauses for authorization, not failed; once a working credential is
// stored and the step confirmed, it runs again and the task succeeds.
func TestRefusedHTTPCredentialPausesTheStep(t *testing.T) {
	h := newHarness(t, nil)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "good-k" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(api.Close)
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, _ := secrets.New(key)
	store := &secrets.Credentials{CredentialService: h.store, Sealer: sealer}
	ctx := context.Background()
	if err := store.CreateCredential(ctx, &agentsmcp.Credential{Integration: "crm", Kind: agentsmcp.CredentialAPIKey,
		Secret: &agentsmcp.CredentialSecret{Value: "wrong-k"}}); err != nil {
		t.Fatal(err)
	}
	auth := storeAuthorizer{credentials.New(credentials.Options{Store: store, BaseURL: "http://127.0.0.1:8080"})}
	src := httptools.Source{Name: "crm", BaseURL: api.URL, Endpoints: []httptools.Endpoint{{Name: "get", Method: "GET", Path: "/deals"}}}
	if err := httptools.NewSources(h.router, httptools.Options{Auth: auth}).Add(ctx, src); err != nil {
		t.Fatal(err)
	}

	task := h.run(h.plan("", step("fetch", "crm__get", `{}`), step("report", "echo", `{"value":"{{steps.fetch.output.ok}}"}`, "fetch")), "", nil)
	s := stateOf(task, "fetch")
	if task.Status != agentsmcp.TaskPaused || s.Status != agentsmcp.StepWaitingConfirmation ||
		!strings.Contains(s.Error, "Not authorized for crm") || s.Attempts != 1 {
		t.Fatalf("status %s, fetch %+v: want paused for authorization", task.Status, s)
	}
	old, err := store.FindCredential(ctx, "crm", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteCredential(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateCredential(ctx, &agentsmcp.Credential{Integration: "crm", Kind: agentsmcp.CredentialAPIKey,
		Secret: &agentsmcp.CredentialSecret{Value: "good-k"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Confirm: []string{"fetch"}}, nil); err != nil {
		t.Fatal(err)
	}
	if done := h.wait(task.ID); done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("after a working credential: %s %+v", done.Status, stateOf(done, "fetch"))
	}
}
