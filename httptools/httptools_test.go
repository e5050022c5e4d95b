package httptools_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// api is a small REST API on 127.0.0.1 that records each request.
type api struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
	body []string
}

func newAPI(t *testing.T, h http.HandlerFunc) *api {
	t.Helper()
	a := &api{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.seen = append(a.seen, r.Clone(context.Background()))
		a.body = append(a.body, string(b))
		a.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *api) last(t *testing.T) (*http.Request, string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) == 0 {
		t.Fatal("the API got no request")
	}
	return a.seen[len(a.seen)-1], a.body[len(a.body)-1]
}

// stack is a real router with the source's provider added, and a client
// session on it, so that calls go through the router's validation.
type stack struct {
	router  *router.Router
	sources *httptools.Sources
	client  *mcp.ClientSession
}

func newStack(t *testing.T, srcs ...httptools.Source) *stack {
	t.Helper()
	return newStackWith(t, httptools.Options{}, srcs...)
}

// newStackWith is newStack with the sources' options.
func newStackWith(t *testing.T, opts httptools.Options, srcs ...httptools.Source) *stack {
	t.Helper()
	ctx := context.Background()
	r := router.New(router.Options{})
	s := httptools.NewSources(r, opts)
	for _, src := range srcs {
		if err := s.Add(ctx, src); err != nil {
			t.Fatalf("add %s: %v", src.Name, err)
		}
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "httptools-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &stack{router: r, sources: s, client: cs}
}

func (s *stack) call(t *testing.T, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.client.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func blogSource(base string) httptools.Source {
	return httptools.Source{
		Name:    "blog",
		BaseURL: base,
		Headers: map[string]string{"X-Api-Key": "s3cret-key"},
		Endpoints: []httptools.Endpoint{
			{Name: "list_posts", Description: "List blog posts", Method: "GET", Path: "/posts",
				Query: map[string]string{"author": "author name", "title": "exact title"}},
			{Name: "get_post", Description: "One post by id", Method: "get", Path: "/posts/{id}"},
			{Name: "create_post", Description: "Publish a post", Method: "POST", Path: "/posts",
				Body:     map[string]any{"title": map[string]any{"type": "string"}, "author": map[string]any{"type": "string"}},
				Required: []string{"title"}, Response: &httptools.Shape{Select: "title"}},
			{Name: "delete_post", Method: "DELETE", Path: "/posts/{id}"},
		},
	}
}

func TestDeclarativeEndpoints(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "POST":
			w.WriteHeader(201)
			_, _ = io.WriteString(w, `{"id": 7, "title": "hello"}`)
		case r.URL.Path == "/posts":
			_, _ = io.WriteString(w, `[{"id": 1, "author": "ann"}]`)
		default:
			_, _ = io.WriteString(w, `{"id": 1, "title": "one"}`)
		}
	})
	s := newStack(t, blogSource(a.URL))

	tools := map[string]*mcp.Tool{}
	for _, tl := range s.router.Tools() {
		tools[tl.Name] = tl
	}
	for _, name := range []string{"blog__list_posts", "blog__get_post", "blog__create_post", "blog__delete_post"} {
		if tools[name] == nil {
			t.Fatalf("tool %s is not listed; have %v", name, tools)
		}
	}
	if a := tools["blog__list_posts"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("GET tool is not readOnlyHint: %+v", a)
	}
	if a := tools["blog__delete_post"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint || a.ReadOnlyHint {
		t.Errorf("DELETE tool is not destructiveHint: %+v", a)
	}
	if a := tools["blog__create_post"].Annotations; a == nil || a.ReadOnlyHint {
		t.Errorf("POST tool is readOnlyHint: %+v", a)
	}

	// The agents read the hints through the catalog (router/toolsearch): a plan step
	// calling a DELETE tool waits for a confirmation.
	catalog := toolsearch.NewCatalog(s.router, nil, nil)
	for name, want := range map[string][2]bool{"blog__delete_post": {false, true}, "blog__get_post": {true, false}, "blog__create_post": {false, false}} {
		info, err := catalog.Tool(context.Background(), name)
		if err != nil || info.ReadOnly != want[0] || info.Destructive != want[1] {
			t.Errorf("catalog %s: %+v, %v; want readOnly %v, destructive %v", name, info, err, want[0], want[1])
		}
	}

	// A list answer is wrapped so that structuredContent is an object.
	res := s.call(t, "blog__list_posts", map[string]any{"author": "ann & bob"})
	if res.IsError {
		t.Fatalf("list_posts: %s", text(res))
	}
	req, _ := a.last(t)
	if got := req.URL.Query().Get("author"); got != "ann & bob" {
		t.Errorf("query author = %q", got)
	}
	if got := req.Header.Get("X-Api-Key"); got != "s3cret-key" {
		t.Errorf("the source's header was not sent: %q", got)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if string(sc) != `{"result":[{"author":"ann","id":1}]}` {
		t.Errorf("structuredContent = %s", sc)
	}
	if text(res) != `[{"author":"ann","id":1}]` {
		t.Errorf("text = %s", text(res))
	}

	// The body is built from the body fields; the answer is shaped.
	res = s.call(t, "blog__create_post", map[string]any{"title": "hello", "author": "ann"})
	if res.IsError {
		t.Fatalf("create_post: %s", text(res))
	}
	req, body := a.last(t)
	if req.Header.Get("Content-Type") != "application/json" || body != `{"author":"ann","title":"hello"}` {
		t.Errorf("create_post sent %s %q", req.Header.Get("Content-Type"), body)
	}
	if text(res) != `"hello"` {
		t.Errorf("shaped answer = %s", text(res))
	}

	// The router validates against the exact schema: a required path
	// parameter, and no unknown arguments.
	for _, bad := range []map[string]any{{}, {"id": ""}, {"id": "1", "extra": "x"}} {
		res, err := s.client.CallTool(context.Background(), &mcp.CallToolParams{Name: "blog__get_post", Arguments: bad})
		if err == nil && !res.IsError {
			t.Errorf("get_post(%v) was accepted", bad)
		}
	}
}

func TestPathParametersStayOneSegment(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	s := newStack(t, blogSource(a.URL+"/api/"))
	for _, tc := range []struct{ id, raw string }{
		{"../x", "/api/posts/..%2Fx"},
		{"...", "/api/posts/..."},
		{".x", "/api/posts/.x"},
		{"%2e%2ex", "/api/posts/%252e%252ex"},
		{"a/b?c#d", "/api/posts/a%2Fb%3Fc%23d"},
		{"{id}", "/api/posts/%7Bid%7D"},
		{"é 1", "/api/posts/%C3%A9%201"},
	} {
		res := s.call(t, "blog__get_post", map[string]any{"id": tc.id})
		if res.IsError {
			t.Fatalf("get_post(%q): %s", tc.id, text(res))
		}
		req, _ := a.last(t)
		if req.RequestURI != tc.raw {
			t.Errorf("get_post(%q) requested %s, want %s", tc.id, req.RequestURI, tc.raw)
		}
		if text(res) != "ok" || res.StructuredContent != nil {
			t.Errorf("a text answer came back as %q, %v", text(res), res.StructuredContent)
		}
	}
}

func TestErrorsLimitsAndTimeouts(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":"no such post"}`+strings.Repeat(" pad", 500))
		case "/big":
			_, _ = io.WriteString(w, strings.Repeat("x", 2000))
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	src := httptools.Source{
		Name: "api", BaseURL: a.URL, Timeout: 300 * time.Millisecond, MaxResponseBytes: 1000,
		Endpoints: []httptools.Endpoint{
			{Name: "missing", Method: "GET", Path: "/missing"},
			{Name: "big", Method: "GET", Path: "/big"},
			{Name: "slow", Method: "GET", Path: "/slow"},
		},
	}
	s := newStack(t, src)

	res := s.call(t, "api__missing", nil)
	if !res.IsError || !strings.HasPrefix(text(res), `HTTP 404 Not Found: {"error":"no such post"}`) || len(text(res)) > 600 {
		t.Errorf("404: isError=%v %q", res.IsError, text(res))
	}
	res = s.call(t, "api__big", nil)
	if !res.IsError || !strings.Contains(text(res), "larger than the limit of 1000 bytes") {
		t.Errorf("too big: isError=%v %q", res.IsError, text(res))
	}
	start := time.Now()
	res = s.call(t, "api__slow", nil)
	if !res.IsError || !strings.Contains(text(res), "no answer within 300ms") {
		t.Errorf("slow: isError=%v %q", res.IsError, text(res))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	// A closed port is a tool error, not a protocol error.
	a.Close()
	res = s.call(t, "api__big", nil)
	if !res.IsError {
		t.Errorf("a refused connection is not a tool error: %q", text(res))
	}
}

func TestShaping(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/table" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "| node | status |\n|------|--------|\n| a1 | up |\n| b2 | down |\n")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"data":{"items":[{"tag":"x","n":1},{"tag":"y","n":2},{"tag":"x","n":3}]}}`)
	})
	src := httptools.Source{Name: "shape", BaseURL: a.URL, Endpoints: []httptools.Endpoint{
		{Name: "select", Method: "GET", Path: "/j", Response: &httptools.Shape{Select: "$.data.items[1]"}},
		{Name: "pluck_unique", Method: "GET", Path: "/j", Response: &httptools.Shape{Select: "data.items", Pluck: "tag", Unique: true}},
		{Name: "wildcard", Method: "GET", Path: "/j", Response: &httptools.Shape{Select: "data.items[*].n"}},
		{Name: "last", Method: "GET", Path: "/j", Response: &httptools.Shape{Select: "data.items[-1].n"}},
		{Name: "table", Method: "GET", Path: "/table", Response: &httptools.Shape{Table: &httptools.Table{Separator: "|"}, Pluck: "node"}},
		{Name: "table_rows", Method: "GET", Path: "/table", Response: &httptools.Shape{Table: &httptools.Table{Separator: "|"}}},
	}}
	s := newStack(t, src)
	for tool, want := range map[string]string{
		"shape__select":       `{"n":2,"tag":"y"}`,
		"shape__pluck_unique": `{"result":["x","y"]}`,
		"shape__wildcard":     `{"result":[1,2,3]}`,
		"shape__last":         `{"result":3}`,
		"shape__table":        `{"result":["a1","b2"]}`,
		"shape__table_rows":   `{"result":[{"node":"a1","status":"up"},{"node":"b2","status":"down"}]}`,
	} {
		res := s.call(t, tool, nil)
		got, _ := json.Marshal(res.StructuredContent)
		if res.IsError || string(got) != want {
			t.Errorf("%s: isError=%v structuredContent %s, want %s (%s)", tool, res.IsError, got, want, text(res))
		}
	}
}

func TestInvalidSourcesAreRefused(t *testing.T) {
	r := router.New(router.Options{})
	s := httptools.NewSources(r, httptools.Options{})
	for name, src := range map[string]httptools.Source{
		"no base":        {Name: "a", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x"}}},
		"bad method":     {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "FETCH", Path: "/x"}}},
		"clash":          {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x/{q}", Query: map[string]string{"q": ""}}}},
		"bad path":       {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x/{q"}}},
		"bad select":     {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x", Response: &httptools.Shape{Select: "a[x]"}}}},
		"metadata":       {Name: "a", BaseURL: "http://169.254.169.254/", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x"}}},
		"bad name":       {Name: "a__b", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x"}}},
		"body on GET":    {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x", Body: map[string]any{"a": map[string]any{}}}}},
		"both":           {Name: "a", BaseURL: "http://127.0.0.1:1", OpenAPI: "x.json", Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x"}}},
		"bad body type":  {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "POST", Path: "/x", Body: map[string]any{"a": map[string]any{"type": "strnig"}}}}},
		"header CRLF":    {Name: "a", BaseURL: "http://127.0.0.1:1", Headers: map[string]string{"K": "v\r\nX: y"}, Endpoints: []httptools.Endpoint{{Name: "x", Method: "GET", Path: "/x"}}},
		"required field": {Name: "a", BaseURL: "http://127.0.0.1:1", Endpoints: []httptools.Endpoint{{Name: "x", Method: "POST", Path: "/x", Required: []string{"t"}}}},
	} {
		err := s.Add(context.Background(), src)
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("%s: Add = %v, want EINVALID", name, err)
		}
	}
	if len(r.Tools()) != 0 {
		t.Errorf("refused sources registered tools: %v", r.Tools())
	}
}

func TestSecretsStayOutOfStatusAndErrors(t *testing.T) {
	src := blogSource("http://user:pw@127.0.0.1:1")
	red := src.Redacted()
	b, _ := json.Marshal(red)
	if strings.Contains(string(b), "s3cret-key") || strings.Contains(string(b), "pw@") {
		t.Errorf("Redacted leaks a secret: %s", b)
	}
	s := newStack(t, src)
	res := s.call(t, "blog__get_post", map[string]any{"id": "1"})
	if !res.IsError || strings.Contains(text(res), "pw") || strings.Contains(text(res), "s3cret") {
		t.Errorf("a failed call leaks a secret or is not an error: %q", text(res))
	}
}

// authorizer is an [httptools.Authorizer] that hands out one header.
type authorizer struct{ token string }

func (a authorizer) Authorize(_ context.Context, source string) (*agentsmcp.AppliedCredential, error) {
	if a.token == "" {
		return nil, &agentsmcp.Error{Code: agentsmcp.EUNAUTHORIZED, Message: "no credential for " + source}
	}
	return &agentsmcp.AppliedCredential{Header: http.Header{"Authorization": {"Bearer " + a.token}}}, nil
}

func (a authorizer) Refused(context.Context, string, int) error { return nil }

func TestAuthorizerHeaders(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	ctx := context.Background()
	for _, tc := range []struct {
		token   string
		isError bool
	}{{"tok", false}, {"", true}} {
		r := router.New(router.Options{})
		s := httptools.NewSources(r, httptools.Options{Auth: authorizer{tc.token}})
		if err := s.Add(ctx, blogSource(a.URL)); err != nil {
			t.Fatal(err)
		}
		p, err := httptools.Load(ctx, blogSource(a.URL), httptools.Options{Auth: authorizer{tc.token}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "blog__get_post", Arguments: json.RawMessage(`{"id":"1"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != tc.isError {
			t.Errorf("token %q: isError = %v (%s)", tc.token, res.IsError, text(res))
		}
		if !tc.isError {
			req, _ := a.last(t)
			if req.Header.Get("Authorization") != "Bearer tok" {
				t.Errorf("Authorization = %q", req.Header.Get("Authorization"))
			}
		}
	}
}

// linkAuthorizer is an [httptools.Authorizer] whose source needs a person
// to authorize at link until authorized is set.
type linkAuthorizer struct {
	link       string
	authorized *atomic.Bool
}

func (a linkAuthorizer) Authorize(_ context.Context, source string) (*agentsmcp.AppliedCredential, error) {
	if a.authorized != nil && a.authorized.Load() {
		return &agentsmcp.AppliedCredential{Header: http.Header{"Authorization": {"Bearer granted"}}}, nil
	}
	return nil, &agentsmcp.AuthorizationRequired{Integration: source, AuthorizeURL: a.link, Reason: "no credential"}
}

func (a linkAuthorizer) Refused(context.Context, string, int) error { return nil }

// A client that declared URL-mode elicitation is offered the authorization
// link as one, whichever protocol revision it speaks (2026-07-28 through
// inputRequests, 2025-11-25 through elicitation/create), then gets the
// actionable result, since opening a link is not authorizing; a client
// that did not declare it gets only the result.
func TestMissingAuthorizationIsOfferedAsURLElicitation(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	const link = "http://127.0.0.1:1/oauth/authorize?state=abc"
	ctx := context.Background()
	for _, tc := range []struct {
		version    string
		urlCapable bool
	}{{"2026-07-28", true}, {"2025-11-25", true}, {"2026-07-28", false}, {"2025-11-25", false}} {
		r := router.New(router.Options{})
		s := httptools.NewSources(r, httptools.Options{Auth: linkAuthorizer{link: link}})
		if err := s.Add(ctx, blogSource(a.URL)); err != nil {
			t.Fatal(err)
		}
		st, ct := mcp.NewInMemoryTransports()
		ss, err := r.Server().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var asked []*mcp.ElicitParams
		opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}
		if tc.urlCapable {
			opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
				Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "url-elicitation-test", Version: "1"}, opts).Connect(ctx, ct,
			&mcp.ClientSessionOptions{ProtocolVersion: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "blog__get_post", Arguments: map[string]any{"id": "1"}})
		cs.Close()
		ss.Close()
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || ar.AuthorizeURL != link || !strings.Contains(text(res), link) {
			t.Errorf("%+v: the result is not the actionable authorization request: %s", tc, text(res))
		}
		mu.Lock()
		switch {
		case tc.urlCapable && (len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != link || asked[0].ElicitationID == ""):
			t.Errorf("%+v: a client with elicitation.url was not offered the link once: %+v", tc, asked)
		case !tc.urlCapable && len(asked) != 0:
			t.Errorf("%+v: a client without elicitation.url was sent an elicitation: %+v", tc, asked)
		}
		mu.Unlock()
		a.mu.Lock()
		if len(a.seen) != 0 {
			t.Errorf("%+v: the API was called without authorization: %d requests", tc, len(a.seen))
		}
		a.mu.Unlock()
	}
}

// When the person authorizes while the client shows the link, the retry
// that answers the offer is the call itself, made with the new credential.
// An in-process call (the agents) is never offered the link, whatever its
// session: it gets the actionable result and pauses on it.
func TestAuthorizedDuringTheOfferTheRetryCallsTheAPI(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"id":"1"}`) })
	ctx := context.Background()
	authorized := &atomic.Bool{}
	r := router.New(router.Options{})
	s := httptools.NewSources(r, httptools.Options{Auth: linkAuthorizer{"http://127.0.0.1:1/oauth/authorize", authorized}})
	if err := s.Add(ctx, blogSource(a.URL)); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			authorized.Store(true) // the person completed the flow in the browser
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "url-elicitation-test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "blog__get_post", Arguments: map[string]any{"id": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(res), `"id"`) {
		t.Fatalf("the retry after authorizing did not call the API: %s", text(res))
	}
	if req, _ := a.last(t); req.Header.Get("Authorization") != "Bearer granted" {
		t.Errorf("the API got Authorization %q", req.Header.Get("Authorization"))
	}

	authorized.Store(false)
	var server *mcp.ServerSession
	for sess := range r.Server().Sessions() {
		server = sess
	}
	res, err = r.CallTool(ctx, &mcp.CallToolRequest{Session: server,
		Params: &mcp.CallToolParamsRaw{Name: "blog__get_post", Arguments: json.RawMessage(`{"id":"1"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || len(res.InputRequests) != 0 {
		t.Errorf("an in-process call got %+v, want the actionable result", res)
	}
}

// queryAuthorizer is an [httptools.Authorizer] that sends a key in a query
// parameter whose name says nothing ("k").
type queryAuthorizer struct{ key string }

func (a queryAuthorizer) Authorize(context.Context, string) (*agentsmcp.AppliedCredential, error) {
	return &agentsmcp.AppliedCredential{Query: url.Values{"k": {a.key}}}, nil
}

func (queryAuthorizer) Refused(context.Context, string, int) error { return nil }

// A failed call's error named the full URL: the caller's path and query
// values, and the shared key sent in the query parameter "k", which URL
// redaction did not know. The text reached every other principal through
// tool performance. Errors now name the operation
// (method and path template), and what they quote from a transport error
// or the API's answer is cleaned of the credentials by value and by name.
func TestCallErrorsNameNoURLNorCredential(t *testing.T) {
	const key, private = "plainsharedkey", "aliceprivate"
	ctx := context.Background()
	closing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := closing.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = closing.Close(); <-done })
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String()
	_ = refused.Close()
	// An API that quotes the request in its error answers.
	echo := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad request "+r.URL.String()+" X-Api-Key: "+r.Header.Get("X-Api-Key")+" key "+r.URL.Query().Get("k"), http.StatusBadRequest)
	})
	for _, tc := range []struct{ base, want string }{
		{"http://" + closing.Addr().String(), "GET /posts/{id}: "},
		{refusedURL, "GET /posts/{id}: dial tcp"},
		{echo.URL, "HTTP 400 Bad Request: bad request /posts/" + private + "?k=[redacted] X-Api-Key: [redacted] key [redacted]"},
	} {
		p, err := httptools.Load(ctx, blogSource(tc.base), httptools.Options{Auth: queryAuthorizer{key}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "blog__get_post", Arguments: json.RawMessage(`{"id":"` + private + `"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		got := text(res)
		if !res.IsError || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q; want an error starting %q", tc.base, got, tc.want)
		}
		for _, leak := range []string{key, "s3cret-key", "k=" + key} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: the error %q holds %q", tc.base, got, leak)
			}
		}
		if tc.base != echo.URL && (strings.Contains(got, private) || strings.Contains(got, "://")) {
			t.Errorf("%s: the error %q names the request's URL", tc.base, got)
		}
	}
}

// TestDotSegmentPathValuesAreRefused performs the dot-segment attack on a real
// loopback API: a path argument of "." or "..", also percent-encoded,
// would be sent as /tenants/%2E%2E/users, which URL parsers and
// normalising proxies resolve to /users. Each is refused as an invalid
// argument naming the parameter (by the router's validation, from the
// input schema, and again when the request is built), and the API sees no
// request; values that merely hold dots still go through.
func TestDotSegmentPathValuesAreRefused(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	const doc = `{
  "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
  "paths": {
    "/orgs/{org}/repos": {"get": {"operationId": "repos",
      "parameters": [{"name": "org", "in": "path", "required": true, "schema": {"type": "string", "not": {"const": "x"}}}],
      "responses": {"200": {"description": "ok"}}}},
    "/ids/{ids}/x": {"get": {"operationId": "ids",
      "parameters": [{"name": "ids", "in": "path", "required": true, "schema": {"type": "array", "items": {"type": "string"}}}],
      "responses": {"200": {"description": "ok"}}}},
    "/files/{stem}{ext}/meta": {"get": {"operationId": "file",
      "parameters": [{"name": "stem", "in": "path", "required": true, "schema": {"type": "string"}},
                     {"name": "ext", "in": "path", "required": true, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "ok"}}}}
  }
}`
	s := newStack(t,
		httptools.Source{Name: "t", BaseURL: a.URL + "/api/", Endpoints: []httptools.Endpoint{
			{Name: "users", Method: "GET", Path: "/tenants/{tenant}/users"},
		}},
		httptools.Source{Name: "o", BaseURL: a.URL, OpenAPIDocument: doc},
	)
	ctx := context.Background()
	dots := []string{".", "..", "%2e", "%2E", "%2e%2e", "%2E%2e", ".%2E", "%2e.", "%252e", "%252E%252e", "%25252e."}
	for _, v := range dots {
		for _, tc := range []struct {
			tool, arg string
			args      map[string]any
		}{
			{"t__users", "tenant", map[string]any{"tenant": v}},
			{"o__repos", "org", map[string]any{"org": v}},
		} {
			// tools/validate: the schema refuses it, at the argument.
			res, err := s.router.ValidateToolArguments(ctx, tc.tool, mustJSON(t, tc.args))
			if err != nil {
				t.Fatalf("validate %s(%q): %v", tc.tool, v, err)
			}
			if res.Valid || len(res.Errors) == 0 || res.Errors[0].Path != "/"+tc.arg {
				t.Errorf("validate %s(%q): %+v, want invalid at /%s", tc.tool, v, res, tc.arg)
			}
			// tools/call over MCP: an error result naming the argument.
			call := s.call(t, tc.tool, tc.args)
			if !call.IsError || !strings.Contains(text(call), "/"+tc.arg) {
				t.Errorf("call %s(%q): %q, want an invalid-arguments error at /%s", tc.tool, v, text(call), tc.arg)
			}
			// In-process: EINVALID.
			_, err = s.router.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tc.tool, Arguments: mustJSON(t, tc.args)}})
			if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
				t.Errorf("in-process call %s(%q): %v, want EINVALID", tc.tool, v, err)
			}
		}
	}
	// What the schema cannot see is refused when the request is built: an
	// array of one dot-segment, and two parameters that make one together.
	for _, tc := range []struct {
		tool string
		args map[string]any
		name string
	}{
		{"o__ids", map[string]any{"ids": []any{".."}}, `"ids"`},
		{"o__ids", map[string]any{"ids": []any{"%2e%2E"}}, `"ids"`},
		{"o__file", map[string]any{"stem": "%2e%2", "ext": "e"}, `"ext", "stem"`},
		{"o__file", map[string]any{"stem": "%2", "ext": "e"}, `"ext", "stem"`},
	} {
		call := s.call(t, tc.tool, tc.args)
		if !call.IsError || !strings.Contains(text(call), tc.name) || !strings.Contains(text(call), "must not") {
			t.Errorf("call %s(%v): %q, want an error naming %s", tc.tool, tc.args, text(call), tc.name)
		}
	}
	a.mu.Lock()
	seen := len(a.seen)
	a.mu.Unlock()
	if seen != 0 {
		req, _ := a.last(t)
		t.Fatalf("the API got %d requests for dot-segment values, the last %s", seen, req.RequestURI)
	}
	// Dots that are no dot-segment pass, as one segment each.
	for _, tc := range []struct {
		tool string
		args map[string]any
		raw  string
	}{
		{"t__users", map[string]any{"tenant": "..."}, "/api/tenants/.../users"},
		{"t__users", map[string]any{"tenant": "a.b"}, "/api/tenants/a.b/users"},
		{"t__users", map[string]any{"tenant": "../users"}, "/api/tenants/..%2Fusers/users"},
		{"o__repos", map[string]any{"org": ".git"}, "/orgs/.git/repos"},
		{"o__ids", map[string]any{"ids": []any{".", "."}}, "/ids/.,./x"},
		{"o__file", map[string]any{"stem": "a", "ext": ".json"}, "/files/a.json/meta"},
	} {
		if call := s.call(t, tc.tool, tc.args); call.IsError {
			t.Errorf("call %s(%v): %s", tc.tool, tc.args, text(call))
			continue
		}
		if req, _ := a.last(t); req.RequestURI != tc.raw {
			t.Errorf("call %s(%v) requested %s, want %s", tc.tool, tc.args, req.RequestURI, tc.raw)
		}
	}
	// The document's own "not" is kept beside the refusal.
	if call := s.call(t, "o__repos", map[string]any{"org": "x"}); !call.IsError {
		t.Errorf("the document's not: {const: x} was lost: %s", text(call))
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
