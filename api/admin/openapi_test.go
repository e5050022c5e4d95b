package admin

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// TestRoutesMatchOpenAPIDocument holds the router and the document to each
// other: every route is documented, and every documented operation is a
// route.
func TestRoutesMatchOpenAPIDocument(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	routed := map[string]bool{}
	h := New(Options{})
	err := chi.Walk(h.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		path, ok := strings.CutPrefix(route, Prefix)
		if !ok {
			t.Errorf("route %s %s is outside %s", method, route, Prefix)
		}
		routed[method+" "+path] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routed) < 20 {
		t.Fatalf("walked only %d routes: %v", len(routed), routed)
	}
	for r := range routed {
		if !documented[r] {
			t.Errorf("route %s is not in the OpenAPI document", r)
		}
	}
	for d := range documented {
		if !routed[d] {
			t.Errorf("documented operation %s is not a route", d)
		}
	}
}

// TestOpenAPIDocumentIsValid checks the document against the OpenAPI 3.1
// specification's schema.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := libopenapi.NewDocument(OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("OpenAPI version %q, want 3.1", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build model: %v", err)
	}
	if n := model.Model.Paths.PathItems.Len(); n < 15 {
		t.Fatalf("only %d paths in the model", n)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Error(e.Error())
			for _, se := range e.SchemaValidationErrors {
				t.Logf("  %s at %s (%s)", se.Reason, se.FieldPath, se.KeywordLocation)
			}
		}
	}
}

// TestOpenAPIDocumentRefsResolve catches a $ref to a component that does
// not exist, which some validators only notice when the ref is used.
func TestOpenAPIDocumentRefsResolve(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	components := doc["components"].(map[string]any)
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				refs = append(refs, r)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	if len(refs) == 0 {
		t.Fatal("no $ref found")
	}
	for _, r := range slices.Compact(slices.Sorted(slices.Values(refs))) {
		parts := strings.Split(strings.TrimPrefix(r, "#/components/"), "/")
		if len(parts) != 2 {
			t.Errorf("unexpected $ref %q", r)
			continue
		}
		section, _ := components[parts[0]].(map[string]any)
		if _, ok := section[parts[1]]; !ok {
			t.Errorf("$ref %q names no component", r)
		}
	}
}
