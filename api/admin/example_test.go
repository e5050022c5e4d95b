package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// Example mounts the admin API with its prefix kept, behind a stand-in for
// the authentication middleware (package api/auth), which puts the
// caller's principal in the request context, records an insight and lists
// insights.
func Example() {
	dir, err := os.MkdirTemp("", "admin-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "agents-mcp.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	h := admin.New(admin.Options{Insights: db, Learnings: db, AuditLog: db})
	defer h.Close(context.Background())
	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := &agentsmcp.Principal{ID: "key:0123456789ab", Scopes: []string{agentsmcp.ScopeAdminRead, agentsmcp.ScopeAdminWrite}}
			next.ServeHTTP(w, r.WithContext(agentsmcp.WithPrincipal(r.Context(), p)))
		})
	}
	mux := http.NewServeMux()
	mux.Handle(admin.Prefix+"/", authenticate(h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/admin/v1/insights", "application/json",
		strings.NewReader(`{"text": "list the directory before searching it", "type": "best_practice"}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("POST /admin/v1/insights:", resp.Status)

	resp, err = http.Get(srv.URL + "/admin/v1/insights?type=best_practice")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Items []agentsmcp.Insight `json:"items"`
		Next  string              `json:"next"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d insight from %s: %s\n", len(page.Items), page.Items[0].Source, page.Items[0].Text)

	resp, err = http.Get(srv.URL + "/admin/v1/insights?colour=blue")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var fail struct {
		Error admin.ErrorBody `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&fail); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, fail.Error.Code+":", fail.Error.Message)
	// Output:
	// POST /admin/v1/insights: 201 Created
	// 1 insight from key:0123456789ab: list the directory before searching it
	// 400 invalid: unknown query parameter "colour"; this route takes q, type, appliesTo, principal, limit, cursor
}
