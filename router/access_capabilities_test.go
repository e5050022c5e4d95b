package router_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// The names the upstream "up" of capabilityFixture exposes through the
// router.
const (
	upResource = "upstream://up/test://a"
	upTemplate = "upstream://up/test://items/{id}"
	upItem     = "upstream://up/test://items/42"
	upPrompt   = "up__greet"
)

// capabilityFixture is a router with a real upstream "up" (a go-sdk server
// over streamable HTTP, joined through the remote pool) that has a tool, a
// resource, a resource template and a prompt, and callers with different
// allowlists reaching the router over HTTP with bearer tokens.
type capabilityFixture struct {
	router *router.Router
	url    string

	mu    sync.Mutex
	calls []router.ToolCallRecord
}

func newCapabilityFixture(t *testing.T, principals map[string]*agentsmcp.Principal) *capabilityFixture {
	t.Helper()
	f := &capabilityFixture{}
	f.router = router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
	}})
	local := localtools.New()
	if err := toolsearch.AddSearchTools(local, toolsearch.NewIndex(f.router, toolsearch.Options{})); err != nil {
		t.Fatal(err)
	}
	if err := f.router.AddProvider(context.Background(), local); err != nil {
		t.Fatal(err)
	}
	// Completions of the upstream's prompt and template, as an operator
	// would register them on the router.
	values := func(context.Context, string, map[string]string) ([]string, error) {
		return []string{"alice", "albert"}, nil
	}
	f.router.AddPromptCompletion(upPrompt, "name", values)
	f.router.AddResourceCompletion(upTemplate, "id", values)

	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil, nil
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "secret of " + req.Params.URI}}}, nil
	}
	up.AddResource(&mcp.Resource{Name: "a", URI: "test://a", MIMEType: "text/plain"}, read)
	up.AddResourceTemplate(&mcp.ResourceTemplate{Name: "items", URITemplate: "test://items/{id}"}, read)
	up.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["name"]}}}}, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)

	pool := remote.NewPool(remote.Options{Registry: f.router})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = pool.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "up", Transport: remote.TransportStreamable, URL: upSrv.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for {
		if st, _ := pool.Status("up"); st.State == remote.StateReady && st.Prompts == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("upstream up never became ready")
		}
		time.Sleep(10 * time.Millisecond)
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
	f.url = srv.URL + "/mcp"
	return f
}

// dial connects a client with token over a stateful protocol version, so
// that it subscribes with resources/subscribe; updated counts the resource
// updates it receives.
func (f *capabilityFixture) dial(t *testing.T, token string, updated *atomic.Int32) *mcp.ClientSession {
	return f.dialVersion(t, token, updated, "2025-11-25")
}

// dialVersion is dial at a protocol version; "" negotiates the newest,
// whose clients subscribe with subscriptions/listen.
func (f *capabilityFixture) dialVersion(t *testing.T, token string, updated *atomic.Int32, version string) *mcp.ClientSession {
	t.Helper()
	client := &http.Client{Transport: routertest.Bearer{Token: token, Base: http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "capability-test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updated.Add(1) },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: client}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// denied lists the requests of principal refused by its allowlist, as
// "method target".
func (f *capabilityFixture) denied(principal string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c.Principal == principal && c.Method != "" && c.Refused == "not allowed" {
			out = append(out, c.Method+" "+c.Tool)
		}
	}
	return out
}

// capabilities is what one caller sees of the upstream's resources,
// templates and prompts, and what its reads of them answer.
type capabilities struct {
	resources, templates, prompts []string
	read, readItem, prompt        string // the text, or the error
	promptCompletion, uriCompl    []string
}

func see(t *testing.T, cs *mcp.ClientSession) capabilities {
	t.Helper()
	ctx := context.Background()
	var c capabilities
	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr.Resources {
		c.resources = append(c.resources, r.URI)
	}
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lt.ResourceTemplates {
		c.templates = append(c.templates, r.URITemplate)
	}
	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lp.Prompts {
		c.prompts = append(c.prompts, p.Name)
	}
	readText := func(uri string) string {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return errorShape(err, uri)
		}
		return rr.Contents[0].Text
	}
	c.read, c.readItem = readText(upResource), readText(upItem)
	if gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: upPrompt, Arguments: map[string]string{"name": "bob"}}); err != nil {
		c.prompt = errorShape(err, upPrompt)
	} else {
		c.prompt = gp.Messages[0].Content.(*mcp.TextContent).Text
	}
	complete := func(ref *mcp.CompleteReference, arg string) []string {
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: "al"}})
		if err != nil {
			t.Fatalf("complete %+v: %v", ref, err)
		}
		return res.Completion.Values
	}
	c.promptCompletion = complete(&mcp.CompleteReference{Type: "ref/prompt", Name: upPrompt}, "name")
	c.uriCompl = complete(&mcp.CompleteReference{Type: "ref/resource", URI: upTemplate}, "id")
	return c
}

// errorShape is a JSON-RPC error with the name asked for replaced by "X",
// to compare the error of a refused read with that of a missing thing.
func errorShape(err error, name string) string {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return "not a JSON-RPC error: " + err.Error()
	}
	return "error " + strings.ReplaceAll(rpcErr.Error()+" "+string(rpcErr.Data), name, "X")
}

func TestAllowlistCoversResourcesTemplatesAndPrompts(t *testing.T) {
	principals := map[string]*agentsmcp.Principal{
		"narrow":   {ID: "key:narrow", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"search_tools"}},
		"one-tool": {ID: "key:one-tool", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"up__echo"}},
		"upstream": {ID: "key:upstream", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"up__*"}},
		"wide":     {ID: "key:wide", Scopes: []string{agentsmcp.ScopeMCP}},
	}
	f := newCapabilityFixture(t, principals)
	var updates = map[string]*atomic.Int32{}
	sessions := map[string]*mcp.ClientSession{}
	for token := range principals {
		updates[token] = &atomic.Int32{}
		sessions[token] = f.dial(t, token, updates[token])
	}

	everything := capabilities{
		resources: []string{upResource}, templates: []string{upTemplate}, prompts: []string{upPrompt},
		read: "secret of test://a", readItem: "secret of test://items/42", prompt: "hello bob",
		promptCompletion: []string{"alice", "albert"}, uriCompl: []string{"alice", "albert"},
	}
	// What a caller gets for a resource or prompt that does not exist.
	wide := sessions["wide"]
	_, err := wide.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "upstream://up/test://missing"})
	missingResource := errorShape(err, "upstream://up/test://missing")
	_, err = wide.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "up__missing"})
	missingPrompt := errorShape(err, "up__missing")
	if !strings.Contains(missingResource, "not found") || !strings.Contains(missingPrompt, "unknown prompt") {
		t.Fatalf("errors for missing things: %q, %q", missingResource, missingPrompt)
	}
	nothing := capabilities{
		read: missingResource, readItem: missingResource, prompt: missingPrompt,
		promptCompletion: []string{}, uriCompl: []string{},
	}

	for token, want := range map[string]capabilities{
		"narrow": nothing, "one-tool": nothing, "upstream": everything, "wide": everything,
	} {
		got := see(t, sessions[token])
		if !equalCapabilities(got, want) {
			t.Errorf("%s (allowlist %q) gets\n %+v\nwant\n %+v", token, principals[token].Tools, got, want)
		}
	}

	// Subscriptions: the refused one is accepted, as one to a URI that does
	// not exist would be, but no update about it reaches the caller.
	ctx := context.Background()
	for token, cs := range sessions {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upResource}); err != nil {
			t.Errorf("%s: subscribe: %v", token, err)
		}
	}
	if err := f.router.Server().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: upResource}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (updates["wide"].Load() == 0 || updates["upstream"].Load() == 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // time for a wrong update to arrive too
	for token, want := range map[string]int32{"narrow": 0, "one-tool": 0, "upstream": 1, "wide": 1} {
		if got := updates[token].Load(); got != want {
			t.Errorf("%s received %d resource updates, want %d", token, got, want)
		}
	}

	// The refusals are on the record, by method and target.
	wantDenied := []string{
		"completion/complete " + upPrompt,
		"completion/complete " + upTemplate,
		"prompts/get " + upPrompt,
		"resources/read " + upResource,
		"resources/read " + upItem,
		"resources/subscribe " + upResource,
	}
	for _, token := range []string{"narrow", "one-tool"} {
		got := f.denied(principals[token].ID)
		slices.Sort(got)
		if !slices.Equal(got, wantDenied) {
			t.Errorf("refusals recorded for %s:\n %q\nwant\n %q", token, got, wantDenied)
		}
	}
	for _, token := range []string{"upstream", "wide"} {
		if got := f.denied(principals[token].ID); len(got) != 0 {
			t.Errorf("refusals recorded for %s: %q", token, got)
		}
	}
}

func equalCapabilities(a, b capabilities) bool {
	return slices.Equal(a.resources, b.resources) && slices.Equal(a.templates, b.templates) &&
		slices.Equal(a.prompts, b.prompts) && a.read == b.read && a.readItem == b.readItem && a.prompt == b.prompt &&
		slices.Equal(a.promptCompletion, b.promptCompletion) && slices.Equal(a.uriCompl, b.uriCompl)
}

// With the protocol's newer subscriptions (subscriptions/listen, which the
// SDK serves without resources/subscribe), a caller is subscribed only to
// the URIs its allowlist admits.
func TestAllowlistCoversSubscriptionsListen(t *testing.T) {
	principals := map[string]*agentsmcp.Principal{
		"narrow": {ID: "key:narrow", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"search_tools"}},
		"wide":   {ID: "key:wide", Scopes: []string{agentsmcp.ScopeMCP}},
	}
	f := newCapabilityFixture(t, principals)
	ctx := context.Background()
	updates := map[string]*atomic.Int32{}
	for token := range principals {
		updates[token] = &atomic.Int32{}
		cs := f.dialVersion(t, token, updates[token], "")
		if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
			t.Fatalf("negotiated %s; the test needs subscriptions/listen", v)
		}
		// Subscribe holds the listen stream open until the session ends.
		go func() { _ = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: upResource}) }()
	}
	deadline := time.Now().Add(5 * time.Second)
	for updates["wide"].Load() == 0 && time.Now().Before(deadline) {
		if err := f.router.Server().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: upResource}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if updates["wide"].Load() == 0 {
		t.Fatal("the caller without an allowlist never received the update")
	}
	time.Sleep(100 * time.Millisecond) // time for a wrong update to arrive too
	if n := updates["narrow"].Load(); n != 0 {
		t.Errorf("the narrow caller received %d updates of a resource its allowlist does not admit", n)
	}
	if got, want := f.denied("key:narrow"), []string{"subscriptions/listen " + upResource}; !slices.Equal(got, want) {
		t.Errorf("refusals recorded: %q, want %q", got, want)
	}
}
