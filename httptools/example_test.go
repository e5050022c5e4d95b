package httptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/httptools"
)

// Load turns a declarative source into tools; a path value stays one
// segment of the request's path.
func ExampleLoad() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.EscapedPath()})
	}))
	defer api.Close()

	ctx := context.Background()
	p, err := httptools.Load(ctx, httptools.Source{
		Name:    "blog",
		BaseURL: api.URL,
		Endpoints: []httptools.Endpoint{
			{Name: "get_post", Description: "One post by id", Method: "GET", Path: "/posts/{id}"},
			{Name: "delete_post", Description: "Delete a post", Method: "DELETE", Path: "/posts/{id}"},
		},
	}, httptools.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, _ := p.Tools(ctx)
	for _, t := range tools {
		fmt.Printf("%s readOnly=%v destructive=%v\n", t.Name, t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint)
	}
	res, _ := p.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: "blog__get_post", Arguments: json.RawMessage(`{"id": "../x"}`),
	}})
	fmt.Println(res.StructuredContent)
	// Output:
	// blog__delete_post readOnly=false destructive=true
	// blog__get_post readOnly=true destructive=false
	// map[path:/posts/..%2Fx]
}
