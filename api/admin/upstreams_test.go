package admin_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/remote"
)

func TestUpstreams(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	path := admin.Prefix + "/upstreams"
	const customSecret = "plain-custom-header-value"

	t.Run("stdio is refused: remote code execution", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"name": "files", "transport": "stdio", "command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem", "/"}},
			{"name": "files", "transport": "STDIO"},
			{"name": "sneaky", "transport": "streamable", "url": e.fx.url, "command": "rm", "args": []string{"-rf", "/"}},
			{"name": "sneaky", "transport": "sse", "url": e.fx.url, "env": map[string]string{"LD_PRELOAD": "/tmp/x.so"}},
		} {
			eb := e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "POST", path: path, as: writeOnly, body: body})
			if !strings.Contains(eb.Message, "remote code execution") || !strings.Contains(eb.Message, "config file") {
				t.Errorf("%v: message %q does not say why", body, eb.Message)
			}
		}
		if _, ok := e.pool.Status("files"); ok {
			t.Fatal("a stdio upstream was added")
		}
	})

	t.Run("bad configs", func(t *testing.T) {
		for _, c := range []struct {
			body map[string]any
			says string
		}{
			{map[string]any{"name": "x", "transport": "streamable", "url": "ftp://example.com/mcp"}, "http or https"},
			{map[string]any{"name": "x", "transport": "streamable", "url": "file:///etc/passwd"}, "http or https"},
			{map[string]any{"name": "x", "transport": "streamable"}, "url"},
			{map[string]any{"name": "x", "transport": "streamable", "url": "example.com/mcp"}, "url"},
			{map[string]any{"name": "x", "transport": "sse", "url": "http://"}, "url"},
			{map[string]any{"name": "x", "url": e.fx.url}, "transport is required"},
			{map[string]any{"name": "x", "transport": "websocket", "url": e.fx.url}, "websocket"},
			{map[string]any{"name": "Bad_Name", "transport": "streamable", "url": e.fx.url}, "name"},
			{map[string]any{"name": "x", "transport": "streamable", "url": e.fx.url, "timeout": "soon"}, "timeout"},
			{map[string]any{"name": "x", "transport": "streamable", "url": e.fx.url, "protocolVersion": "latest"}, "protocolVersion"},
			{map[string]any{"name": "x", "transport": "streamable", "url": e.fx.url, "maxConcurrency": -1}, "maxConcurrency"},
			{map[string]any{"name": "x", "transport": "streamable", "url": e.fx.url, "protocol_version": "2025-11-25"}, `unknown field "protocol_version"`},
			{map[string]any{"name": "x", "transport": "streamable", "url": e.fx.url, "headers": map[string]string{"Bad Header": "v"}}, "header name"},
		} {
			eb := e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "POST", path: path, as: writeOnly, body: c.body})
			if !strings.Contains(eb.Message, c.says) {
				t.Errorf("%v: message %q does not mention %q", c.body, eb.Message, c.says)
			}
		}
	})

	var added remote.Status
	r := e.expect(http.StatusCreated, request{method: "POST", path: path, as: writeOnly, header: map[string]string{"X-Request-Id": "add-fx2"}, body: map[string]any{
		"name": "fx2", "transport": "streamable", "url": e.fx.url, "timeout": "5s",
		"headers": map[string]string{"Authorization": "Bearer " + upstreamToken, "X-Custom": customSecret},
		"tools":   map[string]any{"deny": []string{"block"}},
	}})
	r.decode(t, &added)
	if added.Name != "fx2" || added.Origin != remote.OriginAPI || added.State != remote.StateReady || added.Tools != 1 {
		t.Fatalf("added %+v", added)
	}
	if r.header.Get("Location") != path+"/fx2" {
		t.Fatalf("Location %q", r.header.Get("Location"))
	}
	e.expectError(http.StatusConflict, admin.CodeConflict, request{method: "POST", path: path, as: writeOnly,
		body: map[string]any{"name": "fx2", "transport": "sse", "url": e.fx.url}})

	var list struct {
		Items []remote.Status `json:"items"`
		Next  string          `json:"next"`
	}
	e.expect(http.StatusOK, request{method: "GET", path: path, as: readOnly}).decode(t, &list)
	if len(list.Items) != 2 || list.Items[0].Name != "fx" || list.Items[1].Name != "fx2" || list.Next != "" {
		t.Fatalf("list %+v", list)
	}
	e.expect(http.StatusOK, request{method: "GET", path: path + "?limit=1", as: readOnly}).decode(t, &list)
	if len(list.Items) != 1 || list.Next == "" {
		t.Fatalf("first page %+v", list)
	}

	dr := e.expect(http.StatusOK, request{method: "GET", path: path + "/fx2", as: readOnly})
	var detail admin.UpstreamDetail
	dr.decode(t, &detail)
	var names []string
	for _, tool := range detail.ExposedTools {
		names = append(names, tool.Name)
	}
	if detail.State != remote.StateReady || detail.Tools != 1 || !slices.Equal(names, []string{"fx2__echo"}) {
		t.Fatalf("detail %+v, tools %v", detail.UpstreamStatus, names)
	}
	// The state history is served (and documented: e.expect checks the
	// body against the OpenAPI document, which refuses undeclared fields).
	if h := detail.History; len(h) != 2 || h[0].State != remote.StateConnecting || h[1].State != remote.StateReady ||
		!h[1].At.Equal(detail.Since) || h[1].Reason != detail.Reason {
		t.Fatalf("history %+v of %s since %v", h, detail.State, detail.Since)
	}
	for _, secret := range []string{upstreamToken, customSecret} {
		if strings.Contains(string(dr.body)+string(r.body), secret) {
			t.Fatalf("a header value was returned: %s", dr.body)
		}
	}

	rr := e.expect(http.StatusAccepted, request{method: "POST", path: path + "/fx2/refresh", as: writeOnly})
	var accepted struct {
		Operation admin.Operation `json:"operation"`
	}
	rr.decode(t, &accepted)
	loc := rr.header.Get("Location")
	if loc != admin.Prefix+"/operations/"+accepted.Operation.ID || accepted.Operation.Kind != admin.OperationRefresh || accepted.Operation.Target != "fx2" {
		t.Fatalf("202 %+v, Location %q", accepted, loc)
	}
	op := e.waitOperation(loc)
	if op.Status != admin.OperationSucceeded || op.Progress != 1 || op.Total != 1 || op.EndedAt.IsZero() || op.Error != nil {
		t.Fatalf("refresh %+v", op)
	}
	if st, ok := op.Result.(map[string]any); !ok || st["state"] != "ready" || st["name"] != "fx2" {
		t.Fatalf("refresh result %#v", op.Result)
	}
	e.expectError(http.StatusConflict, admin.CodeConflict, request{method: "POST", path: admin.Prefix + "/operations/" + op.ID + "/cancel", as: writeOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "POST", path: path + "/nothere/refresh", as: writeOnly})

	// An upstream that refuses the server's credentials is added (the pool
	// keeps retrying, and says why), and refreshing it fails visibly.
	e.expect(http.StatusCreated, request{method: "POST", path: path, as: writeOnly, body: map[string]any{
		"name": "nocreds", "transport": "streamable", "url": e.fx.url, "timeout": "2s"}})
	failed := e.waitOperation(e.expect(http.StatusAccepted, request{method: "POST", path: path + "/nocreds/refresh", as: writeOnly}).header.Get("Location"))
	if failed.Status != admin.OperationFailed || failed.Error == nil || failed.Error.Code != admin.CodeUnavailable || !strings.Contains(failed.Error.Message, "down") {
		t.Fatalf("refresh of a refusing upstream %+v", failed)
	}

	e.expect(http.StatusNoContent, request{method: "DELETE", path: path + "/fx2", as: writeOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: path + "/fx2", as: readOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "DELETE", path: path + "/fx2", as: writeOnly})
	if _, ok := e.pool.Status("fx2"); ok {
		t.Fatal("fx2 is still in the pool")
	}
	for _, tool := range e.router.Tools() {
		if strings.HasPrefix(tool.Name, "fx2__") {
			t.Fatalf("tool %s of the removed upstream is still listed", tool.Name)
		}
	}

	// The audit trail has every write, and never a header value.
	var sawAdd bool
	for _, a := range e.audit.all() {
		s := string(a.Arguments) + a.Error + a.Target
		for _, secret := range []string{upstreamToken, customSecret, "s3cr3t"} {
			if strings.Contains(s, secret) {
				t.Errorf("audit entry holds a secret: %+v (arguments %s)", a, a.Arguments)
			}
		}
		if a.RequestID == "add-fx2" {
			sawAdd = true
			if a.Target != "POST /admin/v1/upstreams" || a.Outcome != agentsmcp.AuditOK || !strings.Contains(string(a.Arguments), `"fx2"`) ||
				!strings.Contains(string(a.Arguments), "X-Custom") {
				t.Errorf("add audited as %+v (arguments %s)", a, a.Arguments)
			}
		}
	}
	if !sawAdd {
		t.Fatal("adding fx2 was not audited")
	}
}

func TestRoutesOfMissingServicesAreUnavailable(t *testing.T) {
	e := newEnv(t, envOptions{edit: func(o *admin.Options) {
		*o = admin.Options{Audit: o.Audit}
	}})
	for _, r := range []request{
		{method: "GET", path: "/upstreams"},
		{method: "GET", path: "/learnings"},
		{method: "GET", path: "/audit"},
		{method: "GET", path: "/tasks"},
		{method: "POST", path: "/reindex"},
		{method: "POST", path: "/insights", body: map[string]any{"text": "x"}},
	} {
		r.path, r.as = admin.Prefix+r.path, adminAll
		eb := e.expectError(http.StatusServiceUnavailable, admin.CodeUnavailable, r)
		if !strings.Contains(eb.Message, "not configured") {
			t.Errorf("%s %s: %q", r.method, r.path, eb.Message)
		}
	}
}

// TestUpstreamDetailListsAliases adds an upstream whose tool names are too
// long to prefix: its detail (and the list) say which alias stands for
// which tool, and the detail's tools carry the name in _meta.
func TestUpstreamDetailListsAliases(t *testing.T) {
	long := strings.Repeat("a_rather_long_tool_name_", 3)
	one, two := long+"one", long+"two"
	s := mcp.NewServer(&mcp.Implementation{Name: "long-names", Version: "1"}, nil)
	for _, name := range []string{one, two, "short"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close) // after the pool's session has ended: Close waits for its requests
	e := newEnv(t)
	path := admin.Prefix + "/upstreams"
	e.expect(http.StatusCreated, request{method: "POST", path: path, as: writeOnly, body: map[string]any{
		"name": "long", "transport": "streamable", "url": srv.URL + "/mcp", "timeout": "5s"}})

	want := map[string]string{remote.ToolAlias("long", one, 0): one, remote.ToolAlias("long", two, 0): two}
	var detail admin.UpstreamDetail
	e.expect(http.StatusOK, request{method: "GET", path: path + "/long", as: readOnly}).decode(t, &detail)
	if !maps.Equal(detail.Aliases, want) || detail.Tools != 3 || len(detail.Problems) != 0 {
		t.Fatalf("detail: %d tools, aliases %v, problems %q; want 3, %v and none", detail.Tools, detail.Aliases, detail.Problems, want)
	}
	for _, tool := range detail.ExposedTools {
		name, aliased := want[tool.Name]
		if got, _ := tool.Meta[remote.MetaUpstreamTool].(string); got != name {
			t.Errorf("tool %s (aliased %v) has _meta %v", tool.Name, aliased, tool.Meta)
		}
	}

	var list struct {
		Items []remote.Status `json:"items"`
	}
	e.expect(http.StatusOK, request{method: "GET", path: path, as: readOnly}).decode(t, &list)
	if len(list.Items) != 1 || !maps.Equal(list.Items[0].Aliases, want) {
		t.Fatalf("list %+v", list.Items)
	}
}
