package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/api/console"
)

func get(t *testing.T, srv *httptest.Server, method, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestServesFilesWithPolicy: the page and its modules, each with the
// Content-Security-Policy and the right type; nothing else.
func TestServesFilesWithPolicy(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, console.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for path, typ := range map[string]string{
		"/admin/":            "text/html",
		"/admin/app.js":      "text/javascript",
		"/admin/api.js":      "text/javascript",
		"/admin/dag.js":      "text/javascript",
		"/admin/console.css": "text/css",
	} {
		res, body := get(t, srv, "GET", path)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), typ) || body == "" {
			t.Errorf("GET %s: %d %q (%d bytes), want 200 %s", path, res.StatusCode, res.Header.Get("Content-Type"), len(body), typ)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != console.ContentSecurityPolicy {
			t.Errorf("GET %s: CSP %q", path, got)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", path, res.Header)
		}
	}
	for _, path := range []string{"/admin/nope.js", "/admin/../console.go", "/admin/index.html/", "/admin/static/app.js"} {
		if res, _ := get(t, srv, "GET", path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	if res, _ := get(t, srv, "POST", "/admin/"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /admin/: %d, want 405", res.StatusCode)
	}
}

// TestPolicyForbidsInline: the policy names no unsafe source, and the
// page has no inline script, no inline style and no event attributes, so
// that it works under the policy it is sent with.
func TestPolicyForbidsInline(t *testing.T) {
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*", "http:", "https:"} {
		for _, src := range strings.Split(console.ContentSecurityPolicy, ";") {
			for _, f := range strings.Fields(src)[1:] {
				if strings.Trim(f, "'") == strings.Trim(bad, "'") {
					t.Errorf("policy %q allows %s", src, bad)
				}
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, console.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, page := get(t, srv, "GET", "/admin/")
	for _, m := range regexp.MustCompile(`<script[^>]*>[^<]*`).FindAllString(page, -1) {
		if !strings.Contains(m, " src=") || !strings.HasSuffix(m, ">") {
			t.Errorf("index.html has an inline script: %q", m)
		}
	}
	for _, re := range []string{`\sstyle=`, `<style`, `\son[a-z]+=`, `https?://`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("index.html has %q (pattern %s)", m, re)
		}
	}
	for _, f := range []string{"/admin/app.js", "/admin/dag.js", "/admin/api.js"} {
		_, js := get(t, srv, "GET", f)
		for _, bad := range []string{"innerHTML", "eval(", "new Function", "setAttribute('style'", ".style."} {
			if strings.Contains(js, bad) {
				t.Errorf("%s uses %s", f, bad)
			}
		}
	}
}
