package httptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/netnstest"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
	"github.com/agents-mcp/agents-mcp/router"
)

// oasExamples is @readme/oas-examples, installed by scripts/e2e (npm ci):
// 130 real-world documents, OpenAPI 3.0, 3.1 and Swagger 2.0, in JSON and
// YAML. OAS_EXAMPLES overrides it.
const oasExamples = "../scripts/e2e/node_modules/@readme/oas-examples"

// compileSchema compiles a schema as the router compiles tool input
// schemas: draft 2020-12 by default, nothing loaded from outside.
func compileSchema(raw json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://test/schema.json", doc); err != nil {
		return err
	}
	_, err = c.Compile("mem://test/schema.json")
	return err
}

// operations counts the operations of a document as a plain reading of
// its paths sees them, following local path item $refs.
func operations(t *testing.T, raw []byte) (n int, swagger bool) {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("read the document: %v", err)
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, it := range paths {
		item, _ := it.(map[string]any)
		if ref, ok := item["$ref"].(string); ok {
			// A local path item $ref: follow its JSON pointer.
			var target any = doc
			for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				m, _ := target.(map[string]any)
				target = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
			}
			item, _ = target.(map[string]any)
		}
		for m := range item {
			if slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch"}, m) {
				n++
			}
		}
	}
	return n, doc["swagger"] != nil
}

// TestOpenAPIExamplesAllLoad loads every document of @readme/oas-examples
// at once into one router, each with a loopback base_url. Every document
// that has operations (OpenAPI 3.0, 3.1, and Swagger 2.0, upgraded to 3.0
// on load) must load, every operation must become a tool or a named
// problem, and every tool's input and output schema must compile with the
// router's validator. The test runs in a network namespace with only
// loopback, so that no document's servers or $refs can be reached even if
// the code under test tried.
func TestOpenAPIExamplesAllLoad(t *testing.T) {
	if !netnstest.Isolate(t) {
		return
	}
	dir := cmpOr(os.Getenv("OAS_EXAMPLES"), oasExamples)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("%s is missing: run npm ci in scripts/e2e (%v)", dir, err)
	}
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".yaml")) &&
			!strings.HasSuffix(path, "package.json") && !strings.Contains(path, "/test/") && !strings.Contains(path, "/.") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) < 100 {
		t.Fatalf("found only %d documents under %s", len(files), dir)
	}
	var requests atomic.Int64
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.WriteString(w, "{}")
	})
	ctx := context.Background()
	r := router.New(router.Options{})
	s := httptools.NewSources(r, httptools.Options{})
	names := map[string]string{}
	for i, f := range files {
		name := fmt.Sprintf("d%03d", i)
		names[name] = f
		if err := s.Add(ctx, httptools.Source{Name: name, OpenAPI: f, BaseURL: a.URL}); err != nil {
			t.Errorf("%s: Add: %v", f, err)
		}
	}
	tools := map[string][]*mcp.Tool{}
	for _, tl := range r.Tools() {
		src, _ := r.ToolSource(tl.Name)
		tools[src] = append(tools[src], tl)
	}
	var ready, failed, total, swaggerDocs int
	for _, st := range s.Statuses() {
		f := names[st.Name]
		rel, _ := filepath.Rel(dir, f)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ops, swagger := operations(t, raw)
		if swagger {
			swaggerDocs++
		}
		switch {
		case ops == 0:
			if st.State != "failed" || st.Reason == "" {
				t.Errorf("%s (no operations): state %s, %q; want failed with a reason", rel, st.State, st.Reason)
			}
		default:
			if st.State != "ready" {
				t.Errorf("%s: state %s: %s (problems %v)", rel, st.State, st.Reason, st.Problems)
			}
			opProblems := 0
			for _, p := range st.Problems {
				if !strings.HasPrefix(p, "the document has problems") {
					opProblems++
				}
			}
			if st.Tools+opProblems != ops {
				t.Errorf("%s: %d operations, but %d tools and %d problems: %v", rel, ops, st.Tools, opProblems, st.Problems)
			}
			if st.Tools != len(tools[st.Name]) {
				t.Errorf("%s: %d tools, but the router lists %d: %v", rel, st.Tools, len(tools[st.Name]), r.Problems()[st.Name])
			}
		}
		if st.State == "ready" {
			ready++
		} else {
			failed++
		}
		total += st.Tools
		t.Logf("%-50s %-6s tools=%-3d %s %v", rel, st.State, st.Tools, st.Reason, st.Problems)
	}
	for src, list := range tools {
		for _, tl := range list {
			if _, err := r.ValidateToolArguments(ctx, tl.Name, []byte(`{}`)); err != nil {
				t.Errorf("%s (%s): the input schema does not compile: %v", tl.Name, names[src], err)
			}
			if tl.OutputSchema != nil {
				out := toolschema.JSON(tl.OutputSchema)
				if err := compileSchema(out); err != nil {
					t.Errorf("%s (%s): the output schema does not compile: %v", tl.Name, names[src], err)
				}
				var probe struct{ Type string }
				if json.Unmarshal(out, &probe) != nil || probe.Type != "object" {
					t.Errorf("%s: the output schema is not an object schema: %s", tl.Name, out)
				}
			}
		}
	}
	if problems := r.Problems(); len(problems) > 0 {
		t.Errorf("the router refused tools: %v", problems)
	}
	if requests.Load() != 0 {
		t.Errorf("loading made %d requests to the base URL", requests.Load())
	}
	t.Logf("%d documents: %d ready, %d failed; %d tools", len(files), ready, failed, total)
	if swaggerDocs < 14 {
		t.Errorf("only %d Swagger 2.0 documents", swaggerDocs)
	}
	if ready < 80 || total < 300 {
		t.Errorf("only %d documents ready with %d tools", ready, total)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A small document that uses what the example corpus must not need:
// circular schemas, every parameter location, a form body, a remote $ref.
const petsDoc = `{
  "openapi": "3.0.3",
  "info": {"title": "pets", "version": "1"},
  "servers": [{"url": "https://pets.example.com/v1"}],
  "paths": {
    "/pets/{petId}": {
      "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
      "get": {
        "operationId": "pets.get one",
        "tags": ["read"],
        "parameters": [
          {"name": "fields", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "filter", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
          {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
          {"name": "session", "in": "cookie", "schema": {"type": "string"}},
          {"name": "limit", "in": "query", "required": true, "schema": {"type": "integer", "minimum": 1}}
        ],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
      },
      "delete": {"responses": {"204": {"description": "gone"}}}
    },
    "/pets": {
      "get": {
        "operationId": "listPets",
        "tags": ["read"],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}}}
      },
      "post": {
        "operationId": "createPet",
        "requestBody": {"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
        "responses": {"201": {"description": "made"}}
      }
    },
    "/remote": {
      "get": {
        "operationId": "remote",
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "REMOTE/schema.json"}}}}}
      }
    }
  },
  "components": {"schemas": {
    "Pet": {"type": "object", "required": ["name"], "properties": {
      "name": {"type": "string", "nullable": true},
      "parent": {"$ref": "#/components/schemas/Pet"},
      "children": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}
    }}
  }}
}`

func TestOpenAPIOperations(t *testing.T) {
	var remoteFetches atomic.Int64
	refs := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		remoteFetches.Add(1)
		_, _ = io.WriteString(w, `{"type": "object", "properties": {"x": {"type": "string"}}}`)
	})
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/pets" && r.Method == "GET" {
			_, _ = io.WriteString(w, `[{"name": "rex"}]`)
			return
		}
		_, _ = io.WriteString(w, `{"name": "rex", "children": []}`)
	})
	docPath := filepath.Join(t.TempDir(), "pets.json")
	if err := os.WriteFile(docPath, []byte(strings.ReplaceAll(petsDoc, "REMOTE", refs.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, httptools.Source{Name: "pets", OpenAPI: docPath, BaseURL: a.URL + "/v1", Exclude: []string{"remote"}})
	if n := remoteFetches.Load(); n != 0 {
		t.Fatalf("the remote $ref was fetched %d times without allow_remote_refs", n)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range s.router.Tools() {
		tools[tl.Name] = tl
	}
	want := []string{"pets__createPet", "pets__delete_pets_petId", "pets__listPets", "pets__pets_get_one"}
	if got := slices.Sorted(mapsKeys(tools)); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	get := tools["pets__pets_get_one"]
	var in struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(toolschema.JSON(get.InputSchema), &in)
	slices.Sort(in.Required)
	if !slices.Equal(in.Required, []string{"limit", "petId"}) {
		t.Errorf("required = %v", in.Required)
	}
	out := string(toolschema.JSON(get.OutputSchema))
	if !strings.Contains(out, `"parent":{"description":"(recursive: the same shape as Pet)","type":"object"}`) || !strings.Contains(out, `"null"`) {
		t.Errorf("the output schema does not cut the cycle or lost nullable: %s", out)
	}
	if a := tools["pets__delete_pets_petId"].Annotations; a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete is not destructive")
	}

	res := s.call(t, "pets__pets_get_one", map[string]any{
		"petId": "a/b", "limit": 5, "fields": []string{"x", "y"}, "filter": map[string]any{"kind": "dog"},
		"X-Trace": "t1", "session": "abc",
	})
	if res.IsError {
		t.Fatalf("get one: %s", text(res))
	}
	req, _ := a.last(t)
	if req.URL.EscapedPath() != "/v1/pets/a%2Fb" {
		t.Errorf("path = %s", req.URL.EscapedPath())
	}
	q := req.URL.Query()
	if !slices.Equal(q["fields"], []string{"x", "y"}) || q.Get("filter[kind]") != "dog" || q.Get("limit") != "5" {
		t.Errorf("query = %s", req.URL.RawQuery)
	}
	if req.Header.Get("X-Trace") != "t1" || req.Header.Get("Cookie") != "session=abc" {
		t.Errorf("header %q cookie %q", req.Header.Get("X-Trace"), req.Header.Get("Cookie"))
	}
	if res.StructuredContent.(map[string]any)["name"] != "rex" {
		t.Errorf("structuredContent = %v", res.StructuredContent)
	}

	// An array answer whose output schema was wrapped comes back wrapped.
	res = s.call(t, "pets__listPets", nil)
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"result":[{"name":"rex"}]}` {
		t.Errorf("listPets structuredContent = %s", b)
	}
	res = s.call(t, "pets__createPet", map[string]any{"body": map[string]any{"name": "rex"}})
	req, body := a.last(t)
	if res.IsError || req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || body != "name=rex" {
		t.Errorf("createPet sent %q %q (%s)", req.Header.Get("Content-Type"), body, text(res))
	}

	// include by tag; remote refs fetched only when allowed.
	r := router.New(router.Options{})
	srcs := httptools.NewSources(r, httptools.Options{})
	if err := srcs.Add(context.Background(), httptools.Source{Name: "ro", OpenAPI: docPath, BaseURL: a.URL, Include: []string{"tag:read"}}); err != nil {
		t.Fatal(err)
	}
	if err := srcs.Add(context.Background(), httptools.Source{Name: "rr", OpenAPI: docPath, BaseURL: a.URL, Include: []string{"remote"}, AllowRemoteRefs: true}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"ro__listPets", "ro__pets_get_one", "rr__remote"}) {
		t.Errorf("tools = %v", names)
	}
	if remoteFetches.Load() == 0 {
		t.Errorf("the remote $ref was not fetched with allow_remote_refs")
	}

	// A header the operator configured wins over a header argument.
	p, err := httptools.Load(context.Background(), httptools.Source{Name: "hd", OpenAPI: docPath, BaseURL: a.URL,
		Headers: map[string]string{"X-Trace": "operator"}, Include: []string{"pets.get one"}}, httptools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = p.CallTool(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: "hd__pets_get_one", Arguments: json.RawMessage(`{"petId": "1", "limit": 1, "X-Trace": "caller"}`)}})
	if err != nil || res.IsError {
		t.Fatalf("hd__pets_get_one: %v %s", err, text(res))
	}
	if req, _ := a.last(t); req.Header.Get("X-Trace") != "operator" {
		t.Errorf("X-Trace = %q, want the configured value", req.Header.Get("X-Trace"))
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestUnusableDocumentsAreProblemsOfTheirSource(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r := router.New(router.Options{})
	s := httptools.NewSources(r, httptools.Options{})
	ctx := context.Background()
	good := write("good.json", petsDoc)
	for name, path := range map[string]string{
		"missing":   filepath.Join(dir, "nope.json"),
		"garbage":   write("garbage.json", "{not json"),
		"notoas":    write("notoas.json", `{"hello": "world"}`),
		"noserver":  write("noserver.json", `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`),
		"nopaths":   write("nopaths.json", `{"openapi":"3.1.0","info":{"title":"x","version":"1"}}`),
		"metadata":  write("metadata.json", `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"servers":[{"url":"http://169.254.169.254/"}],"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`),
		"swagger":   write("swagger.json", `{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{}}`),
		"undefined": write("undefined.json", `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],"paths":{"/a/{id}":{"get":{"responses":{"200":{"description":"ok"}}}}}}`),
	} {
		if err := s.Add(ctx, httptools.Source{Name: name, OpenAPI: path}); err != nil {
			t.Errorf("%s: Add = %v; an unusable document must not be an error", name, err)
		}
	}
	if err := s.Add(ctx, httptools.Source{Name: "good", OpenAPI: good, BaseURL: "http://127.0.0.1:1", Exclude: []string{"remote"}}); err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Statuses() {
		switch {
		case st.Name == "good":
			if st.State != "ready" || st.Tools != 4 {
				t.Errorf("good: %+v", st)
			}
		case st.State != "failed" || st.Reason == "" || st.Tools != 0:
			t.Errorf("%s: %+v, want failed with a reason", st.Name, st)
		default:
			t.Logf("%s: %s", st.Name, st.Reason)
		}
	}
	if len(r.Tools()) != 4 {
		t.Errorf("the router lists %d tools, want the good source's 4", len(r.Tools()))
	}
}

const swaggerDoc = `
swagger: "2.0"
info: {title: pets, version: "1"}
host: HOST
basePath: /v2
schemes: [http]
consumes: [application/json]
produces: [application/json]
parameters:
  shared_body:
    in: body
    name: body
    required: true
    schema: {$ref: "#/definitions/Pet"}
paths:
  /pets:
    get:
      operationId: findPets
      parameters:
        - {name: status, in: query, type: array, items: {type: string, enum: [a, b]}}
        - {name: tags, in: query, type: array, items: {type: string}, collectionFormat: multi}
      responses:
        "200": {description: ok, schema: {type: array, items: {$ref: "#/definitions/Pet"}}}
    post:
      operationId: addPet
      parameters: [{$ref: "#/parameters/shared_body"}]
      responses: {"201": {description: made, schema: {$ref: "#/definitions/Pet"}}}
  /pets/{id}/photo:
    post:
      operationId: upload
      consumes: [multipart/form-data]
      parameters:
        - {name: id, in: path, required: true, type: integer}
        - {name: note, in: formData, type: string}
        - {name: file, in: formData, type: file, required: true}
      responses: {"200": {description: ok}}
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      name: {type: string}
      friend: {$ref: "#/definitions/Pet"}
`

func TestSwagger2DocumentsAreUpgraded(t *testing.T) {
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "GET" {
			_, _ = io.WriteString(w, `[{"name": "rex"}]`)
			return
		}
		_, _ = io.WriteString(w, `{"name": "rex"}`)
	})
	docPath := filepath.Join(t.TempDir(), "swagger.yaml")
	host := strings.TrimPrefix(a.URL, "http://")
	if err := os.WriteFile(docPath, []byte(strings.Replace(swaggerDoc, "HOST", host, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	// No base_url: the server is http://HOST/v2, from host, basePath and
	// schemes.
	s := newStack(t, httptools.Source{Name: "sw", OpenAPI: docPath})
	st := s.sources.Statuses()[0]
	if st.State != "ready" || st.Tools != 3 {
		t.Fatalf("status = %+v", st)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range s.router.Tools() {
		tools[tl.Name] = tl
	}
	in := string(toolschema.JSON(tools["sw__addPet"].InputSchema))
	if !strings.Contains(in, `"required":["body"]`) || !strings.Contains(in, `"name":{"type":"string"}`) {
		t.Errorf("addPet input schema = %s", in)
	}

	res := s.call(t, "sw__findPets", map[string]any{"status": []string{"a", "b"}, "tags": []string{"x", "y"}})
	req, _ := a.last(t)
	if res.IsError || req.URL.Path != "/v2/pets" || req.URL.RawQuery != "status=a%2Cb&tags=x&tags=y" {
		t.Errorf("findPets sent %s?%s (%s)", req.URL.Path, req.URL.RawQuery, text(res))
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"result":[{"name":"rex"}]}` {
		t.Errorf("findPets structuredContent = %s", b)
	}
	res = s.call(t, "sw__addPet", map[string]any{"body": map[string]any{"name": "rex"}})
	req, body := a.last(t)
	if res.IsError || req.Header.Get("Content-Type") != "application/json" || body != `{"name":"rex"}` {
		t.Errorf("addPet sent %q %q (%s)", req.Header.Get("Content-Type"), body, text(res))
	}
	res = s.call(t, "sw__upload", map[string]any{"id": 7, "body": map[string]any{"note": "hi", "file": "data"}})
	req, body = a.last(t)
	if res.IsError || req.URL.Path != "/v2/pets/7/photo" || !strings.HasPrefix(req.Header.Get("Content-Type"), "multipart/form-data; boundary=") ||
		!strings.Contains(body, `name="note"`) || !strings.Contains(body, "data") {
		t.Errorf("upload sent %s %q %q (%s)", req.URL.Path, req.Header.Get("Content-Type"), body, text(res))
	}
}
