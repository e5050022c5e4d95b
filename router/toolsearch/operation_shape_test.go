package toolsearch

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestOperationAction(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         actionKind
	}{
		{"GET", "/boards/{idBoard}", actionGet},
		{"GET", "/boards/{idBoard}/cards", actionList},
		{"GET", "/me", actionGet},
		{"GET", "/cards/{idCard}/board", actionGet},
		{"POST", "/cards", actionCreate},
		{"POST", "/folders/{folder_id}", actionUpdate},
		{"PUT", "/cards/{idCard}", actionUpdate},
		{"PATCH", "/pages/{page_id}", actionUpdate},
		{"DELETE", "/cards/{idCard}", actionDelete},
		// RPC-style paths: the verb in the path decides, not the method.
		{"POST", "/chat.delete", actionDelete},
		{"GET", "/conversations.list", actionList},
		{"POST", "/chat.postMessage", actionCreate},
		{"POST", "/chat.update", actionUpdate},
		{"GET", "/users.info", actionGet},
		{"OPTIONS", "/things", actionUnknown},
		{"GET", "/", actionUnknown},
	} {
		if got := operationAction(tc.method, tc.path); got != tc.want {
			t.Errorf("operationAction(%s %s) = %q, want %q", tc.method, tc.path, actionNames[got], actionNames[tc.want])
		}
	}
}

func TestRequestAction(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  actionKind
	}{
		{"show every board I am on", actionList},
		{"list the cards", actionList},
		{"my playlists", actionList},
		// A read of one thing's attributes is a get, plural or not.
		{"show the card's details", actionGet},
		{"show the project", actionGet},
		{"get the profile of this user", actionGet},
		{"rename the board to Q3", actionUpdate},
		{"remove bob from the team", actionDelete},
		{"add a comment to the card", actionCreate},
		// A verb that is not a read decides even with a plural.
		{"delete all archived cards", actionDelete},
		{"weather in Paris", actionUnknown},
	} {
		if got := requestAction(queryTokens(parseQuery(tc.query, 0.5))); got != tc.want {
			t.Errorf("requestAction(%q) = %q, want %q", tc.query, actionNames[got], actionNames[tc.want])
		}
	}
}

// Among the operations of one resource, equally worded, the request's
// action decides: the list for many, the get for one, the update for a
// change, the delete for a removal; and why says so.
func TestSiblingOperationsByRequestShape(t *testing.T) {
	op := func(name, method, path string) *agentsmcp.RegisteredTool {
		return &agentsmcp.RegisteredTool{
			Tool: &mcp.Tool{
				Name:        "tasks__" + name,
				Description: "Projects of the workspace.",
				Meta:        mcp.Meta{metaOperation: map[string]any{"method": method, "path": path}},
			},
			Source:      "tasks",
			InputSchema: []byte(`{"type":"object"}`),
		}
	}
	tools := []*agentsmcp.RegisteredTool{
		op("projects_a", "GET", "/projects"),
		op("projects_b", "GET", "/projects/{project_gid}"),
		op("projects_c", "PUT", "/projects/{project_gid}"),
		op("projects_d", "DELETE", "/projects/{project_gid}"),
		op("projects_e", "POST", "/projects"),
	}
	docs := make([]searchDoc, len(tools))
	for i, tl := range tools {
		docs[i] = docOf(tl)
	}
	ix := newLexicalIndex(docs)
	for _, tc := range []struct{ query, want, why string }{
		{"show all the projects", "tasks__projects_a", "action: list"},
		{"show the project", "tasks__projects_b", "action: get"},
		{"rename the project", "tasks__projects_c", "action: update"},
		{"remove the project", "tasks__projects_d", "action: delete"},
		{"start a project", "tasks__projects_e", "action: create"},
	} {
		for _, p := range []rankParams{defaultRankParams, semanticRankParams} {
			got := rankMatches(ix, parseQuery(tc.query, p.synonymWeight), p, "all", 3, nil, nil, nil)
			if len(got) == 0 || got[0].Name != tc.want {
				t.Errorf("%q: got %v, want %s first", tc.query, matchNames(got), tc.want)
				continue
			}
			if !strings.Contains(got[0].Why, tc.why) {
				t.Errorf("%q: why %q lacks %q", tc.query, got[0].Why, tc.why)
			}
		}
	}
}
