package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// accessFixture is a router with an upstream-like provider "up" (up__a,
// up__b) and search_tools, recording every tools/call it is told about.
type accessFixture struct {
	router *router.Router
	mu     sync.Mutex
	calls  []router.ToolCallRecord
}

func newAccessFixture(t *testing.T, access router.AccessOptions) *accessFixture {
	t.Helper()
	f := &accessFixture{}
	f.router = router.New(router.Options{Version: "test", Access: access, OnToolCall: func(c router.ToolCallRecord) {
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
	}})
	up := &staticProvider{name: "up", tools: []*mcp.Tool{
		rawTool("up__a", `{"type":"object","properties":{"q":{"type":"string"}}}`),
		rawTool("up__b", `{"type":"object"}`),
	}}
	local := localtools.New()
	if err := toolsearch.AddSearchTools(local, toolsearch.NewIndex(f.router, toolsearch.Options{})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []agentsmcp.ToolProvider{up, local} {
		if err := f.router.AddProvider(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *accessFixture) records() []router.ToolCallRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// checkAllowlist runs the same checks for a caller whose principal may use
// up__a and search_tools only.
func checkAllowlist(t *testing.T, f *accessFixture, cs *mcp.ClientSession, principalID string) {
	ctx := context.Background()
	if got := toolNames(t, cs); !slices.Equal(got, []string{"search_tools", "up__a"}) {
		t.Errorf("tools/list shows %v; want only the allowed tools", got)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__a", Arguments: map[string]any{"q": "token=hunter2"}}); err != nil {
		t.Errorf("allowed call: %v", err)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__b", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "not allowed") {
		t.Errorf("call outside the allowlist: %v; want -32602 saying it is not allowed", err)
	}
	if _, err := validate(ctx, cs, "up__b", `{}`); err == nil {
		t.Error("tools/validate answered for a tool outside the allowlist")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "tool up b a"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := textOf(res); strings.Contains(text, "up__b") || !strings.Contains(text, "up__a") {
		t.Errorf("search_tools shows hidden tools or misses allowed ones:\n%s", text)
	}

	var allowed, denied *router.ToolCallRecord
	for _, rec := range f.records() {
		switch {
		case rec.Tool == "up__a" && rec.Refused == "":
			allowed = &rec
		case rec.Tool == "up__b":
			denied = &rec
		}
	}
	if allowed == nil || allowed.Principal != principalID || !strings.Contains(string(allowed.Arguments), "hunter2") || allowed.Source != "up" {
		t.Errorf("record of the allowed call: %+v", allowed)
	}
	if denied == nil || denied.Refused != "not allowed" || denied.Principal != principalID || denied.Source != "" {
		t.Errorf("record of the refused call: %+v", denied)
	}
}

func TestAllowlistOfTheDefaultPrincipal(t *testing.T) {
	p := &agentsmcp.Principal{ID: "key:stdio", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"up__a", "search_*"}}
	f := newAccessFixture(t, router.AccessOptions{Default: p})
	checkAllowlist(t, f, connect(t, f.router, nil), "key:stdio")
}

func TestAllowlistOfTheRequestsPrincipalOverHTTP(t *testing.T) {
	f := newAccessFixture(t, router.AccessOptions{})
	principals := map[string]*agentsmcp.Principal{
		"narrow": {ID: "key:narrow", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"up__a", "search_tools"}},
		"wide":   {ID: "key:wide", Scopes: []string{agentsmcp.ScopeMCP}},
	}
	// The authentication layer's part: verify the token, hand the
	// principal down in the TokenInfo.
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := principals[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Scopes: p.Scopes, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: p}}, nil
	}
	h := f.router.HTTPHandler(router.HTTPOptions{Authenticate: auth.RequireBearerToken(verify, nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.CloseClientConnections(); srv.Close() })
	dial := func(token string) *mcp.ClientSession {
		client := &http.Client{Transport: routertest.Bearer{Token: token, Base: http.DefaultTransport}}
		c := mcp.NewClient(&mcp.Implementation{Name: "access-test", Version: "1"}, nil)
		if err := mcp.AddSendingCustomMethod[*validateParams, *validateResult](c, router.MethodValidate); err != nil {
			t.Fatal(err)
		}
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	checkAllowlist(t, f, dial("narrow"), "key:narrow")
	if got := toolNames(t, dial("wide")); len(got) != 3 {
		t.Errorf("a principal without an allowlist sees %v; want every tool", got)
	}
}

func TestAdmitRefusesWithAnActionableError(t *testing.T) {
	p := &agentsmcp.Principal{ID: "key:stdio", Scopes: []string{agentsmcp.ScopeMCP}}
	var mu sync.Mutex
	left := 3 // the initialize handshake and two requests
	f := newAccessFixture(t, router.AccessOptions{Default: p, Admit: func(got *agentsmcp.Principal) (bool, time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if got != p {
			t.Errorf("Admit asked about %+v", got)
		}
		left--
		return left >= 0, 1500 * time.Millisecond
	}})
	cs := connect(t, f.router, nil)
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__a", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__b", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("second call: %v", err)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__b", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("call over the limit answered")
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != router.CodeRateLimited {
		t.Fatalf("over the limit: %v; want code %d", err, router.CodeRateLimited)
	}
	var data struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	if err := json.Unmarshal(rpcErr.Data, &data); err != nil || data.RetryAfterMs != 1500 {
		t.Errorf("error data %s: want retryAfterMs 1500", rpcErr.Data)
	}
	recs := f.records()
	if last := recs[len(recs)-1]; last.Refused != "rate limited" || last.Tool != "up__b" {
		t.Errorf("the refused call is recorded as %+v", last)
	}
}

func TestToolCallsAreTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	f := newAccessFixture(t, router.AccessOptions{})
	cs := connect(t, f.router, nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__a", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range rec.Ended() {
		if s.Name() != "tools/call up__a" {
			continue
		}
		found = true
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if attrs["agents_mcp.source"] != "up" || attrs["agents_mcp.outcome"] != "ok" {
			t.Errorf("span attributes %v", attrs)
		}
	}
	if !found {
		t.Errorf("no tools/call span among %d ended spans", len(rec.Ended()))
	}
}
