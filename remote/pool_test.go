package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

// forEachHTTPTransport runs f in parallel subtests, once per HTTP transport;
// serve serves an MCP server over that transport.
func forEachHTTPTransport(t *testing.T, f func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream)) {
	t.Run(TransportStreamable, func(t *testing.T) {
		t.Parallel()
		f(t, TransportStreamable, func(s *mcp.Server) *httpUpstream { return serveStreamable(t, s) })
	})
	t.Run(TransportSSE, func(t *testing.T) {
		t.Parallel()
		f(t, TransportSSE, func(s *mcp.Server) *httpUpstream { return serveSSE(t, s) })
	})
}

func httpConfig(name, transport, url string) agentsmcp.UpstreamConfig {
	cfg := streamableConfig(name, url)
	cfg.Transport = transport
	return cfg
}

func TestListingKeepsSchemasAndMetadata(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		hs := serve(fx.server)
		e.add(httpConfig("up", transport, hs.URL()))

		var direct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: hs.URL()}
		if transport == TransportSSE {
			direct = &mcp.SSEClientTransport{Endpoint: hs.URL()}
		}
		upstreamTools := map[string]*mcp.Tool{}
		for tool, err := range directClient(t, direct).Tools(testCtx(t, 5*time.Second), nil) {
			if err != nil {
				t.Fatal(err)
			}
			upstreamTools[tool.Name] = tool
		}

		cs := e.caller(nil, "")
		routed := map[string]*mcp.Tool{}
		for tool, err := range cs.Tools(testCtx(t, 5*time.Second), nil) {
			if err != nil {
				t.Fatal(err)
			}
			routed[tool.Name] = tool
		}

		var want []string
		for name := range upstreamTools {
			want = append(want, "up__"+name)
		}
		var got []string
		for name := range routed {
			got = append(got, name)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("router lists %v, want %v", got, want)
		}
		if st := e.status("up"); st.Tools != len(want) || len(st.Problems) != 0 {
			t.Errorf("status: %d tools, problems %v; want %d tools and no problems", st.Tools, st.Problems, len(want))
		}

		for name, up := range upstreamTools {
			r := routed["up__"+name]
			if !reflect.DeepEqual(asJSON(t, r.InputSchema), asJSON(t, up.InputSchema)) {
				t.Errorf("%s: input schema\n got %s\nwant %s", name, mustJSON(r.InputSchema), mustJSON(up.InputSchema))
			}
			if !reflect.DeepEqual(asJSON(t, r.OutputSchema), asJSON(t, up.OutputSchema)) {
				t.Errorf("%s: output schema\n got %s\nwant %s", name, mustJSON(r.OutputSchema), mustJSON(up.OutputSchema))
			}
			if r.Title != up.Title || r.Description != up.Description || !reflect.DeepEqual(r.Annotations, up.Annotations) {
				t.Errorf("%s: metadata got (%q, %q, %+v), want (%q, %q, %+v)", name, r.Title, r.Description, r.Annotations, up.Title, up.Description, up.Annotations)
			}
		}
		// And the direct listing is what the upstream declared: the
		// comparison above is not between two equally lossy copies.
		p := routed["up__person"]
		if !reflect.DeepEqual(asJSON(t, p.InputSchema), asJSON(t, personInputSchema)) {
			t.Errorf("person input schema differs from the declared one: %s", mustJSON(p.InputSchema))
		}
		if !reflect.DeepEqual(asJSON(t, p.OutputSchema), asJSON(t, personOutputSchema)) {
			t.Errorf("person output schema differs from the declared one: %s", mustJSON(p.OutputSchema))
		}
		in := asJSON(t, p.InputSchema).(map[string]any)
		for _, k := range []string{"$schema", "$defs", "title", "additionalProperties"} {
			if _, ok := in[k]; !ok {
				t.Errorf("person input schema lost %q", k)
			}
		}
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

func TestToolFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	hs := serveStreamable(t, fx.server)
	cfg := streamableConfig("filtered", hs.URL())
	cfg.Tools = agentsmcp.UpstreamToolFilter{Allow: []string{"echo", "person", "fail", "missing"}, Deny: []string{"fail", "sample"}}
	e.add(cfg)

	got := e.routerToolNames("filtered__")
	want := []string{"filtered__echo", "filtered__person"}
	if !slices.Equal(got, want) {
		t.Fatalf("router lists %v, want %v", got, want)
	}
	st := e.status("filtered")
	if st.Tools != 2 {
		t.Errorf("Status.Tools = %d, want 2", st.Tools)
	}
	if !slices.ContainsFunc(st.Problems, func(p string) bool { return strings.Contains(p, `"missing"`) }) {
		t.Errorf("problems %q do not report the allowed tool the upstream lacks", st.Problems)
	}
	tools, err := e.pool.Tools(testCtx(t, time.Second), "filtered")
	if err != nil || len(tools) != 2 {
		t.Fatalf("Pool.Tools = %d tools, %v", len(tools), err)
	}

	// A denied tool cannot be called through the router either.
	cs := e.caller(nil, "")
	if _, err := call(testCtx(t, 5*time.Second), cs, "filtered__fail", `{}`); err == nil {
		t.Error("a denied tool was callable")
	}
	if got := mustText(t, cs, "filtered__echo", `{"text":"x"}`); !strings.Contains(got, `"x"`) {
		t.Errorf("allowed tool answered %q", got)
	}
}

func TestInvalidExposedNamesAreReportedNotListed(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	// A name that is only too long gets an alias: TestLongToolNamesAreAliased.
	longest := strings.Repeat("y", 60) // "up__" + 60 = 64 characters: still fine
	for _, name := range []string{"fine", longest, "dotted.name", "has space"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(anySchema)}, ok)
	}
	hs := serveStreamable(t, s)
	e := newEnv(t, fastOptions())
	e.add(streamableConfig("up", hs.URL()))

	got := e.routerToolNames("up__")
	want := []string{"up__fine", "up__" + longest}
	if !slices.Equal(got, want) {
		t.Fatalf("router lists %v, want %v", got, want)
	}
	st := e.status("up")
	for _, bad := range []string{"dotted.name", "has space"} {
		if !slices.ContainsFunc(st.Problems, func(p string) bool { return strings.Contains(p, fmt.Sprintf("%q", bad)) }) {
			t.Errorf("Status.Problems %q does not mention %q", st.Problems, bad)
		}
	}
	if st.Tools != 2 || st.State != StateReady {
		t.Errorf("status %s with %d tools, want ready with 2", st.State, st.Tools)
	}
	// The router itself saw no problem: nothing invalid reached it.
	if p := e.router.Problems()["up"]; len(p) != 0 {
		t.Errorf("router problems %q", p)
	}
	cs := e.caller(nil, "")
	if got := mustText(t, cs, "up__"+longest, `{}`); got != "ok" {
		t.Errorf("64-character tool answered %q", got)
	}
}

func TestValidateRemoteToolArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))
	ctx := testCtx(t, 5*time.Second)

	res, err := e.router.ValidateToolArguments(ctx, "up__person", []byte(`{"name":"Ann","age":30,"home":{"city":"Oslo","geo":{"lat":1,"lon":2}},"contact":{"email":"a@b"}}`))
	if err != nil || !res.Valid {
		t.Fatalf("valid arguments: %+v, %v", res, err)
	}
	res, err = e.router.ValidateToolArguments(ctx, "up__person", []byte(`{"age":-1,"home":{"geo":{"lat":1}},"extra":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid {
		t.Fatal("invalid arguments reported valid")
	}
	paths := map[string]bool{}
	for _, is := range res.Errors {
		paths[is.Path+" "+is.Keyword] = true
	}
	for _, want := range []string{"/age minimum", "/home/city required", "/home/geo/lon required", "/name required", " additionalProperties"} {
		if !paths[want] {
			t.Errorf("issues %v lack %q", res.Errors, want)
		}
	}
	if !slices.Equal(res.Missing, []string{"name"}) {
		t.Errorf("Missing = %v, want [name]", res.Missing)
	}

	// The same through the tools/validate method, as a client sends it.
	c := mcp.NewClient(&mcp.Implementation{Name: "validator", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*router.ValidateParams, *router.ValidateResult](c, router.MethodValidate); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.router.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	vr, err := mcp.CallCustomMethod[*router.ValidateParams, *router.ValidateResult](ctx, cs, router.MethodValidate,
		&router.ValidateParams{Name: "up__person", Arguments: json.RawMessage(`{"name":"Ann","age":"old","contact":{"fax":"1"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if vr.Valid || len(vr.Errors) == 0 {
		t.Fatalf("tools/validate: %+v", vr.ValidationResult)
	}

	// Invalid arguments never reach the upstream: the router answers.
	caller := e.caller(nil, "")
	msg := errorText(t, caller, "up__echo", `{"n":1}`)
	if !strings.Contains(msg, "text") {
		t.Errorf("invalid call answered %q", msg)
	}
}

func TestCallsRelayResultsAndErrors(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		cs := e.caller(nil, "")

		// Arguments reach the upstream unchanged.
		args := `{"text":"héllo \"quoted\"","n":42,"nested":{"list":[1,2.5,{"deep":null}],"flag":true}}`
		if got := mustText(t, cs, "up__echo", args); !reflect.DeepEqual(asJSON(t, got), asJSON(t, args)) {
			t.Errorf("echo got arguments %s, want %s", got, args)
		}

		// Text and structured content.
		res, err := call(testCtx(t, 5*time.Second), cs, "up__person", `{"name":"Ann","age":30}`)
		if err != nil || res.IsError {
			t.Fatalf("person: %v %s", err, resultText(res))
		}
		wantOut := map[string]any{"greeting": "Hello, Ann", "adult": true}
		if got := asJSON(t, res.StructuredContent); !reflect.DeepEqual(got, wantOut) {
			t.Errorf("structuredContent = %v, want %v", got, wantOut)
		}
		if !reflect.DeepEqual(asJSON(t, resultText(res)), wantOut) {
			t.Errorf("text content = %s", resultText(res))
		}

		// A tool error is a result with isError, text intact.
		res, err = call(testCtx(t, 5*time.Second), cs, "up__fail", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || resultText(res) != "the tool failed on purpose" {
			t.Errorf("fail: isError=%v text=%q", res.IsError, resultText(res))
		}

		// An upstream JSON-RPC error is relayed as one, code and message kept.
		_, err = call(testCtx(t, 5*time.Second), cs, "up__rpcerr", `{}`)
		if code, ok := errCode(err); !ok || code != -32042 || !strings.Contains(err.Error(), "upstream refuses") {
			t.Errorf("rpcerr: %v (code %d)", err, code)
		}

		// Unknown tools are protocol errors.
		_, err = call(testCtx(t, 5*time.Second), cs, "up__nope", `{}`)
		if code, ok := errCode(err); !ok || code != jsonrpc.CodeInvalidParams {
			t.Errorf("unknown tool: %v", err)
		}
		if st := e.status("up"); st.State != StateReady || st.Breaker != "closed" || st.InFlight != 0 {
			t.Errorf("after errors: state %s, breaker %s, in flight %d", st.State, st.Breaker, st.InFlight)
		}
	})
}

func TestUpstreamCallToolUnknownName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))
	u, _ := e.pool.get("up")
	// The provider itself refuses a name it does not expose, even when the
	// upstream has such a tool ("echo" without the prefix).
	for _, name := range []string{"echo", "up__missing", "other__echo"} {
		_, err := u.CallTool(testCtx(t, 5*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: json.RawMessage(`{"text":"x"}`)}})
		if code, ok := errCode(err); !ok || code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v", name, err)
		}
	}
	res, err := u.CallTool(testCtx(t, 5*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__echo", Arguments: json.RawMessage(`{"text":"x"}`)}})
	if err != nil || resultText(res) != `{"text":"x"}` {
		t.Errorf("in-process call: %v %q", err, resultText(res))
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	forEachHTTPTransport(t, func(t *testing.T, transport string, serve func(*mcp.Server) *httpUpstream) {
		e := newEnv(t, fastOptions())
		fx := newFixture("up")
		e.add(httpConfig("up", transport, serve(fx.server).URL()))
		cs := e.caller(nil, "")
		ctx := testCtx(t, 10*time.Second)
		prefix := ResourceURIPrefix("up")
		if prefix != "upstream://up/" {
			t.Fatalf("ResourceURIPrefix = %q", prefix)
		}

		st := e.status("up")
		if st.Resources != 1 || st.ResourceTemplates != 1 || st.Prompts != 1 {
			t.Errorf("status counts resources %d templates %d prompts %d, want 1 each", st.Resources, st.ResourceTemplates, st.Prompts)
		}

		lr, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lr.Resources) != 1 || lr.Resources[0].URI != prefix+"test://a" || lr.Resources[0].Title != "Resource A" || lr.Resources[0].MIMEType != "text/plain" {
			t.Fatalf("resources: %s", mustJSON(lr.Resources))
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: prefix + "test://a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rr.Contents) != 1 || rr.Contents[0].Text != "content of A" || rr.Contents[0].URI != prefix+"test://a" {
			t.Fatalf("read: %s", mustJSON(rr.Contents))
		}

		lt, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != prefix+"test://items/{id}" {
			t.Fatalf("templates: %s", mustJSON(lt.ResourceTemplates))
		}
		rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: prefix + "test://items/42"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rr.Contents) != 1 || rr.Contents[0].Text != "item at test://items/42" || rr.Contents[0].URI != prefix+"test://items/42" {
			t.Fatalf("read template: %s", mustJSON(rr.Contents))
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: prefix + "test://nothing"}); err == nil {
			t.Error("reading an unknown resource succeeded")
		}

		lp, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lp.Prompts) != 1 || lp.Prompts[0].Name != "up__p" || lp.Prompts[0].Description != "Greets" || len(lp.Prompts[0].Arguments) != 1 {
			t.Fatalf("prompts: %s", mustJSON(lp.Prompts))
		}
		gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up__p", Arguments: map[string]string{"who": "Bob"}})
		if err != nil {
			t.Fatal(err)
		}
		if gp.Description != "greeting for Bob" || len(gp.Messages) != 1 {
			t.Fatalf("prompt: %s", mustJSON(gp))
		}
		if txt, _ := gp.Messages[0].Content.(*mcp.TextContent); txt == nil || txt.Text != "Say hello to Bob" {
			t.Fatalf("prompt message: %s", mustJSON(gp.Messages[0]))
		}

		// Removing the upstream withdraws all of it.
		if err := e.pool.Remove(ctx, "up"); err != nil {
			t.Fatal(err)
		}
		if lr, err := cs.ListResources(ctx, nil); err != nil || len(lr.Resources) != 0 {
			t.Errorf("resources after remove: %v %v", lr, err)
		}
		if lt, err := cs.ListResourceTemplates(ctx, nil); err != nil || len(lt.ResourceTemplates) != 0 {
			t.Errorf("templates after remove: %v %v", lt, err)
		}
		if lp, err := cs.ListPrompts(ctx, nil); err != nil || len(lp.Prompts) != 0 {
			t.Errorf("prompts after remove: %v %v", lp, err)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: prefix + "test://a"}); err == nil {
			t.Error("resource still readable after remove")
		}
	})
}

func TestAddRemoveRefreshErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	hs := serveStreamable(t, fx.server)
	ctx := testCtx(t, 10*time.Second)

	// stdio is refused at run time: it would be remote code execution.
	err := e.pool.Add(ctx, agentsmcp.UpstreamConfig{Name: "evil", Transport: TransportStdio, Command: "/bin/sh", Args: []string{"-c", "touch /tmp/pwned"}})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(agentsmcp.ErrorMessage(err), "config file") {
		t.Errorf("Add(stdio) = %v, want EINVALID about the config file", err)
	}
	if _, ok := e.pool.Status("evil"); ok {
		t.Error("refused stdio upstream exists")
	}
	// Invalid configs are EINVALID with every problem named.
	err = e.pool.Add(ctx, agentsmcp.UpstreamConfig{Name: "Bad_Name", Transport: TransportStreamable, URL: "ftp://x"})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "name") || !strings.Contains(err.Error(), "url") {
		t.Errorf("Add(invalid) = %v", err)
	}

	if err := e.pool.Add(ctx, streamableConfig("up", hs.URL())); err != nil {
		t.Fatal(err)
	}
	st := e.waitState("up", StateReady, 5*time.Second)
	if st.Origin != OriginAPI {
		t.Errorf("Origin = %q, want %q", st.Origin, OriginAPI)
	}
	if err := e.pool.Add(ctx, streamableConfig("up", hs.URL())); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("duplicate Add = %v, want ECONFLICT", err)
	}
	if err := e.pool.AddFromConfig(ctx, streamableConfig("up", hs.URL())); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("duplicate AddFromConfig = %v, want ECONFLICT", err)
	}
	if err := e.pool.Remove(ctx, "nope"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Remove(unknown) = %v, want ENOTFOUND", err)
	}
	if _, err := e.pool.Refresh(ctx, "nope"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Refresh(unknown) = %v, want ENOTFOUND", err)
	}
	if _, err := e.pool.Tools(ctx, "nope"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Tools(unknown) = %v, want ENOTFOUND", err)
	}

	// Refresh re-lists now and returns the status.
	fx.server.AddTool(&mcp.Tool{Name: "added", InputSchema: json.RawMessage(anySchema)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	st, err = e.pool.Refresh(ctx, "up")
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "up" || st.State != StateReady || st.Tools != 10 {
		t.Errorf("Refresh = %s %s with %d tools, want up ready with 10", st.Name, st.State, st.Tools)
	}
	testutil.Eventually(t, 5*time.Second, "router lists up__added", func() bool { return slices.Contains(e.routerToolNames("up__"), "up__added") })

	sum := e.pool.Summary()
	if sum.Total != 1 || sum.Ready != 1 || len(sum.NotReady) != 0 {
		t.Errorf("Summary = %+v", sum)
	}

	// Remove withdraws everything and forgets the upstream; the name can
	// be used again.
	if err := e.pool.Remove(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	if n := e.routerToolNames("up__"); len(n) != 0 {
		t.Errorf("router still lists %v", n)
	}
	if _, ok := e.pool.Status("up"); ok || len(e.pool.Statuses()) != 0 {
		t.Error("removed upstream still has a status")
	}
	if err := e.pool.Add(ctx, streamableConfig("up", hs.URL())); err != nil {
		t.Fatalf("re-add after remove: %v", err)
	}
	e.waitState("up", StateReady, 5*time.Second)

	// After Close nothing can be added.
	if err := e.pool.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.routerToolNames("up__"); len(n) != 0 {
		t.Errorf("router still lists %v after Close", n)
	}
	if err := e.pool.Add(ctx, streamableConfig("late", hs.URL())); agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("Add after Close = %v, want EUNAVAILABLE", err)
	}
}

func TestHeadersAreSentAndNeverShown(t *testing.T) {
	t.Parallel()
	fx := newFixture("up")
	var mu sync.Mutex
	var seen []string
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer sekrit-token" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	})
	e := newEnv(t, fastOptions())
	cfg := streamableConfig("auth", strings.Replace(hs.URL(), "http://", "http://user:pw@", 1)+"?key=sekrit-query")
	cfg.Headers = map[string]string{"Authorization": "Bearer sekrit-token"}
	e.add(cfg)
	cs := e.caller(nil, "")
	mustText(t, cs, "auth__echo", `{"text":"x"}`)

	mu.Lock()
	n := len(seen)
	mu.Unlock()
	if n == 0 {
		t.Fatal("upstream saw no requests")
	}
	st := e.status("auth")
	shown := mustJSON(st) + fmt.Sprint(cfg) + fmt.Sprintf("%#v", cfg) + e.logs.String()
	for _, secret := range []string{"sekrit", ":pw@"} {
		if strings.Contains(shown, secret) {
			t.Errorf("%q shown in status, config string or logs: %s", secret, shown)
		}
	}
}

func TestAddListsToolsBeforeReturning(t *testing.T) {
	t.Parallel()
	fx := newFixture("up")
	hs := serveStreamable(t, fx.server)
	e := newEnv(t, fastOptions())
	if err := e.pool.Add(testCtx(t, 10*time.Second), streamableConfig("up", hs.URL())); err != nil {
		t.Fatal(err)
	}
	// No waiting: a server that reports ready after adding its upstreams
	// lists their tools.
	if n := len(e.routerToolNames("up__")); n != 9 {
		t.Errorf("router lists %d tools right after Add, want 9", n)
	}
}

func TestUpstreamNameTakenByAnotherProvider(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	local := localtools.New()
	if err := localtools.Add(local, &mcp.Tool{Name: "greet"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.router.AddProvider(context.Background(), local); err != nil {
		t.Fatal(err)
	}
	fx := newFixture("local")
	err := e.pool.Add(testCtx(t, 10*time.Second), streamableConfig(localtools.ProviderName, serveStreamable(t, fx.server).URL()))
	if agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Fatalf("Add(%q) = %v, want ECONFLICT", localtools.ProviderName, err)
	}
	if _, ok := e.pool.Status(localtools.ProviderName); ok {
		t.Error("the refused upstream is in the pool")
	}
	// Removing it must not be possible, and so cannot take the local tools away.
	if err := e.pool.Remove(testCtx(t, 5*time.Second), localtools.ProviderName); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Remove = %v, want ENOTFOUND", err)
	}
	if !slices.Contains(e.routerToolNames(""), "greet") {
		t.Error("the local tools are gone")
	}
	lr, err := e.caller(nil, "").ListPrompts(testCtx(t, 5*time.Second), nil)
	if err != nil || len(lr.Prompts) != 0 {
		t.Errorf("the refused upstream's prompts are registered: %v %v", lr, err)
	}
}

func TestRemoveWhileAddIsConnecting(t *testing.T) {
	t.Parallel()
	fx := newFixture("slowstart")
	posted := make(chan struct{}, 100)
	gate := make(chan struct{})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				posted <- struct{}{}
				<-gate
			}
			inner.ServeHTTP(w, r)
		})
	})
	e := newEnv(t, fastOptions())
	added := make(chan error, 1)
	go func() { added <- e.pool.Add(testCtx(t, 20*time.Second), streamableConfig("x", hs.URL())) }()
	<-posted // the first connect attempt is under way
	removed := make(chan error, 1)
	go func() { removed <- e.pool.Remove(testCtx(t, 20*time.Second), "x") }()
	testutil.Eventually(t, 5*time.Second, "Remove took x out of the pool", func() bool {
		_, ok := e.pool.Status("x")
		return !ok
	})
	close(gate)
	if err := <-removed; err != nil {
		t.Errorf("Remove: %v", err)
	}
	if err := <-added; err != nil {
		t.Errorf("Add: %v", err)
	}
	// Nothing of x is left in the router.
	if err := e.router.Refresh(testCtx(t, 5*time.Second), "x"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("router still has provider x: Refresh = %v", err)
	}
	// And the name can be used again.
	if err := e.pool.Add(testCtx(t, 10*time.Second), streamableConfig("x", hs.URL())); err != nil {
		t.Fatal(err)
	}
	e.waitState("x", StateReady, 10*time.Second)
}
