package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/api/admin"
)

// TestVirtualServersAdmin: a virtual server added through the API is
// stored, served at once by this replica's router, listed with its source
// and exposed tools, refused twice, and removed.
func TestVirtualServersAdmin(t *testing.T) {
	e := newEnv(t)
	path := admin.Prefix + "/virtual-servers"
	body := map[string]any{"name": "dev", "tools": []map[string]any{{"upstream": "local", "names": []string{"search_tools"}}},
		"rename": map[string]string{"search_tools": "find"}}
	e.expect(http.StatusCreated, request{method: "POST", path: path, as: writeOnly, body: body})
	e.expectError(http.StatusConflict, admin.CodeConflict, request{method: "POST", path: path, as: writeOnly, body: body})
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "POST", path: path, as: writeOnly,
		body: map[string]any{"name": "bad", "catalog_mode": "lazy"}})
	if r := e.expect(http.StatusOK, request{method: "GET", path: path, as: readOnly}); !strings.Contains(string(r.body), `"source":"store"`) {
		t.Errorf("list: %s", r.body)
	}
	if r := e.expect(http.StatusOK, request{method: "GET", path: path + "/dev", as: readOnly}); !strings.Contains(string(r.body), `"rename":{"search_tools":"find"}`) {
		t.Errorf("GET one: %s", r.body)
	}
	e.expect(http.StatusNoContent, request{method: "DELETE", path: path + "/dev", as: writeOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: path + "/dev", as: readOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "DELETE", path: path + "/dev", as: writeOnly})
}
