package httptools_test

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/router"
)

// operationDoc has an operation with a summary and tags, one whose summary
// only repeats its operationId (as Trello's document has them) and one
// with neither summary nor description.
const operationDoc = `{
  "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
  "paths": {
    "/chat.update": {"post": {"operationId": "chat_update", "summary": "Update a message", "description": "Updates a message.",
      "tags": ["chat", " "], "responses": {"200": {"description": "ok"}}}},
    "/cards/{idCard}/stickers": {"post": {"operationId": "addCardsStickersByIdCard", "summary": "addCardsStickersByIdCard()",
      "parameters": [{"name": "idCard", "in": "path", "required": true, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "ok"}}}},
    "/boards/{id}": {"delete": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "ok"}}}}
  }
}`

// TestOpenAPIToolsListTheirOperation checks what an HTTP tool lists of its
// operation besides its name: _meta holds its method and path and its
// OpenAPI tags, the summary is the annotations' title, the description is
// the document's, and only when the document has none (or a summary that
// repeats the operationId) one made of the method's verb and the path.
func TestOpenAPIToolsListTheirOperation(t *testing.T) {
	r := router.New(router.Options{})
	src := httptools.NewSources(r, httptools.Options{})
	if err := src.Add(t.Context(), httptools.Source{Name: "o", BaseURL: "http://127.0.0.1:1", OpenAPIDocument: operationDoc}); err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range r.Tools() {
		tools[tl.Name] = tl
	}
	for _, tc := range []struct {
		name, method, path, title, desc string
		tags                            []any
	}{
		{"o__chat_update", "POST", "/chat.update", "Update a message", "Update a message\n\nUpdates a message.", []any{"chat"}},
		{"o__addCardsStickersByIdCard", "POST", "/cards/{idCard}/stickers", "", "Create cards stickers: POST /cards/{idCard}/stickers", nil},
		{"o__delete_boards_id", "DELETE", "/boards/{id}", "", "Delete boards: DELETE /boards/{id}", nil},
	} {
		tl, ok := tools[tc.name]
		if !ok {
			t.Fatalf("no tool %s among %v", tc.name, slices.Sorted(mapsKeys(tools)))
		}
		op, _ := tl.Meta[httptools.MetaOperation].(map[string]any)
		if op["method"] != tc.method || op["path"] != tc.path {
			t.Errorf("%s: _meta[%q] = %v, want method %s path %s", tc.name, httptools.MetaOperation, tl.Meta[httptools.MetaOperation], tc.method, tc.path)
		}
		tags, _ := tl.Meta["tags"].([]any)
		if !slices.Equal(tags, tc.tags) {
			t.Errorf("%s: _meta tags = %v, want %v", tc.name, tl.Meta["tags"], tc.tags)
		}
		if tl.Annotations == nil || tl.Annotations.Title != tc.title {
			t.Errorf("%s: annotations %+v, want title %q", tc.name, tl.Annotations, tc.title)
		}
		if tl.Description != tc.desc {
			t.Errorf("%s: description %q, want %q", tc.name, tl.Description, tc.desc)
		}
	}
}
