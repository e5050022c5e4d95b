package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

// A virtual server added through the admin API of one serve process is
// served by another on the same database (FerretDB), within its sync
// interval, and removed from both by a DELETE on either.
func TestVirtualServerAddedOnOneReplicaServesOnAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	env := []string{
		"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("virtual_%d", time.Now().UnixNano()),
		"AGENTS_MCP_UPSTREAM_SYNC_INTERVAL=200ms",
	}
	a := startServerProcess(t, t.TempDir(), env...)
	b := startServerProcess(t, t.TempDir(), env...)

	body := `{"name":"dev","title":"Developer tools","catalog_mode":"full",
		"tools":[{"upstream":"local","names":["search_tools"]}],"rename":{"search_tools":"find_tool"},
		"descriptions":{"search_tools":"Find a tool (dev)"}}`
	if code, got := adminDo(t, a, http.MethodPost, "/virtual-servers", body); code != http.StatusCreated {
		t.Fatalf("POST /virtual-servers on a: %d %s", code, got)
	}
	testutil.Eventually(t, 10*time.Second, "b serves the virtual server added on a", func() bool {
		code, _ := adminDo(t, b, http.MethodGet, "/virtual-servers/dev", "")
		return code == http.StatusOK
	})

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "virtual-replicas", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: b.base + "/mcp/dev"}, nil)
	if err != nil {
		t.Fatalf("connect to b's /mcp/dev: %v\n%s", err, b.logs.String())
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description != "Find a tool (dev)" {
			t.Errorf("description %q, want the override", tool.Description)
		}
	}
	if !slices.Equal(names, []string{"find_tool"}) {
		t.Fatalf("b's /mcp/dev lists %v, want [find_tool]", names)
	}
	if got := callTool(t, cs, "find_tool", map[string]any{"query": "remember an insight"}); len(got) == 0 {
		t.Error("find_tool answered nothing")
	}

	if code, got := adminDo(t, b, http.MethodDelete, "/virtual-servers/dev", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE on b: %d %s", code, got)
	}
	testutil.Eventually(t, 10*time.Second, "a stops serving the virtual server removed on b", func() bool {
		resp, err := http.Post(a.base+"/mcp/dev", "application/json", nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNotFound
	})
}
