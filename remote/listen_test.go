package remote

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
)

// ADR 0010, D6: an upstream's notifications/tools/list_changed reaches a
// 2026-07-28 client's subscriptions/listen stream as the router's own
// list_changed. The pool re-lists the upstream, Router.Refresh changes the
// router's tools, and go-sdk delivers the change to every listen stream
// that asked for it. Real parts throughout: a go-sdk upstream over
// streamable HTTP, the pool, the router's HTTP handler on loopback, and
// go-sdk's 2026 client, which opens its listen stream at connect.
func TestUpstreamListChangedReachesA2026ListenStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))

	h := e.router.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		e.router.CloseSessions(context.Background())
		srv.Close()
	})
	changed := make(chan *mcp.ToolListChangedRequest, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "listen-2026", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) { changed <- req },
	})
	cs, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28 (sessionless, listen stream)", v)
	}
	// Nothing changed yet. (go-sdk sends the listen request right after
	// server/discover; a tools/list makes sure the stream is served before
	// the upstream changes.)
	if _, err := cs.ListTools(testCtx(t, 5*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-changed:
		t.Fatalf("list_changed before any change: %+v", req.Params)
	case <-time.After(200 * time.Millisecond):
	}

	fx.server.AddTool(&mcp.Tool{Name: "late", Description: "added at run time", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late!"}}}, nil
		})
	select {
	case req := <-changed:
		// Sent on the listen stream: it carries the stream's subscription.
		if req.Params == nil || req.Params.GetMeta()[mcp.MetaKeySubscriptionID] == nil {
			t.Fatalf("list_changed without a subscription id: %+v", req.Params)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the 2026 client got no notifications/tools/list_changed")
	}
	found := false
	for tool, err := range cs.Tools(testCtx(t, 5*time.Second), nil) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || tool.Name == "up__late"
	}
	if !found {
		t.Error("tools/list after the notification lacks up__late")
	}
}
