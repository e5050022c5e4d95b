package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/api/console"
)

// TestServeConsoleAndToolCatalog: the served binary has the console at
// /admin/ (with its policy, and /admin sent there), and the admin API's
// GET /tools lists the catalog and ranks a query exactly as the
// search_tools tool does.
func TestServeConsoleAndToolCatalog(t *testing.T) {
	base, _, _, logs := startServe(t, nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		res, err := noRedirect.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, page := get("/admin/")
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), `<script type="module" src="app.js">`) ||
		res.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy {
		t.Fatalf("GET /admin/: %d %v\n%s", res.StatusCode, res.Header, page)
	}
	if res, _ := get("/admin"); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/admin/" {
		t.Errorf("GET /admin: %d to %q, want a redirect to /admin/", res.StatusCode, res.Header.Get("Location"))
	}
	// The console is behind the same DNS-rebinding check as every route: a
	// page rebound to a name, or a foreign Origin, is refused.
	for name, set := range map[string]func(*http.Request){
		"Host":   func(r *http.Request) { r.Host = "evil.example" },
		"Origin": func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") },
	} {
		req, _ := http.NewRequest(http.MethodGet, base+"/admin/", nil)
		set(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("GET /admin/ with a foreign %s: %d, want 403", name, res.StatusCode)
		}
	}
	// The API's routes are still the API's, not the console's.
	if res, body := get("/admin/v1/whoami"); res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"anonymous"`) {
		t.Errorf("GET /admin/v1/whoami: %d %s", res.StatusCode, body)
	}

	type page2 struct {
		Items []struct{ Name, Source string } `json:"items"`
		Mode  string                          `json:"mode"`
	}
	var all page2
	res, body := get("/admin/v1/tools")
	if err := json.Unmarshal(body, &all); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/v1/tools: %d %s", res.StatusCode, body)
	}
	i := slices.IndexFunc(all.Items, func(x struct{ Name, Source string }) bool { return x.Name == "search_tools" })
	if i < 0 || all.Items[i].Source != "local" || len(all.Items) < 10 {
		t.Errorf("catalog: %+v, want search_tools (local) among the local tools", all.Items)
	}

	const query = "remember what worked for a similar request"
	var ranked page2
	res, body = get("/admin/v1/tools?limit=5&q=" + strings.ReplaceAll(query, " ", "+"))
	if err := json.Unmarshal(body, &ranked); err != nil || res.StatusCode != http.StatusOK || len(ranked.Items) == 0 {
		t.Fatalf("GET /admin/v1/tools?q=: %d %s", res.StatusCode, body)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "console-test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs.String())
	}
	defer cs.Close()
	out := callTool(t, cs, "search_tools", map[string]any{"query": query, "limit": 5})
	var viaTool []string
	for _, m := range out["tools"].([]any) {
		viaTool = append(viaTool, m.(map[string]any)["name"].(string))
	}
	var viaAPI []string
	for _, m := range ranked.Items {
		viaAPI = append(viaAPI, m.Name)
	}
	if !slices.Equal(viaAPI, viaTool) || ranked.Mode != out["mode"] {
		t.Errorf("GET /tools?q= ranks %v (%s), search_tools %v (%v)", viaAPI, ranked.Mode, viaTool, out["mode"])
	}
}
