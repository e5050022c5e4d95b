package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
)

func TestReadiness(t *testing.T) {
	draining := false
	failing := false
	h := &Health{
		CheckTimeout: 50 * time.Millisecond,
		Draining:     func() bool { return draining },
		Checks: map[string]ReadinessCheck{
			"router": func(context.Context) (any, error) { return map[string]int{"tools": 3}, nil },
			"store": func(ctx context.Context) (any, error) {
				if failing {
					<-ctx.Done() // a hung dependency must not hang /readyz
					return nil, errors.New("store unreachable")
				}
				return nil, nil
			},
		},
	}
	mux := http.NewServeMux()
	h.Register(mux)
	get := func(path string) (int, map[string]any) {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
		return rec.Code, body
	}
	if code, body := get("/readyz"); code != 200 || body["status"] != "ready" {
		t.Errorf("ready: %d %v", code, body)
	}
	failing = true
	code, body := get("/readyz")
	if code != 503 || body["status"] != "not_ready" || !strings.Contains(jsonString(body), "store unreachable") {
		t.Errorf("failing check: %d %v", code, body)
	}
	draining = true
	if code, body := get("/readyz"); code != 503 || body["status"] != "draining" {
		t.Errorf("draining: %d %v", code, body)
	}
	if code, body := get("/healthz"); code != 200 || body["status"] != "ok" {
		t.Errorf("liveness while draining: %d %v", code, body)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReadinessDetailsNeedAdminRead puts the real authenticator in front of
// /readyz, as serve does: with keys configured, a probe without a
// credential gets the status alone, never the checks (names, paths,
// reasons); a key with admin:read gets them; a key without gets the status
// alone; a bad key is refused. Without keys every caller sees everything.
func TestReadinessDetailsNeedAdminRead(t *testing.T) {
	const secretPath = "/var/lib/agents-mcp/secret-store.db"
	failing := false
	h := &Health{
		Checks: map[string]ReadinessCheck{
			"database": func(context.Context) (any, error) { return map[string]string{"path": secretPath}, nil },
			"upstreams": func(context.Context) (any, error) {
				if failing {
					return nil, errors.New("upstream internal-billing: dial tcp 10.1.2.3:443: refused")
				}
				return map[string]int{"internal-billing": 1}, nil
			},
		},
		Detailed: func(r *http.Request) bool {
			return agentsmcp.PrincipalFrom(r.Context()).HasScope(agentsmcp.ScopeAdminRead)
		},
	}
	withKeys, err := auth.New(auth.Config{Keys: []auth.Key{
		{Name: "ops", Secret: "ops-secret-0123456789", Scopes: []string{agentsmcp.ScopeAdminRead}},
		{Name: "bot", Secret: "bot-secret-0123456789", Scopes: []string{agentsmcp.ScopeMCP}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	noKeys, err := auth.New(auth.Config{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(a *auth.Authenticator, key string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		a.AuthenticateIfPresented(h.ReadyHandler()).ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	internals := []string{secretPath, "internal-billing", "10.1.2.3", `"checks"`}
	bare := func(what string, code int, body string, wantCode int, wantStatus string) {
		t.Helper()
		if code != wantCode || strings.TrimSpace(body) != `{"status":"`+wantStatus+`"}` {
			t.Errorf("%s: %d %s, want %d with the status %q alone", what, code, body, wantCode, wantStatus)
		}
	}
	detailed := func(what string, code int, body string, wantCode int) {
		t.Helper()
		if code != wantCode || !strings.Contains(body, secretPath) || !strings.Contains(body, "internal-billing") {
			t.Errorf("%s: %d %s, want %d with every check", what, code, body, wantCode)
		}
	}
	for _, state := range []struct {
		name    string
		failing bool
		code    int
		status  string
	}{{"ready", false, http.StatusOK, "ready"}, {"not ready", true, http.StatusServiceUnavailable, "not_ready"}} {
		failing = state.failing
		code, body := get(withKeys, "")
		bare(state.name+", keys, no credential", code, body, state.code, state.status)
		for _, s := range internals {
			if strings.Contains(body, s) {
				t.Errorf("%s, keys, no credential: %q in %s", state.name, s, body)
			}
		}
		code, body = get(withKeys, "bot-secret-0123456789")
		bare(state.name+", keys, scope mcp", code, body, state.code, state.status)
		code, body = get(withKeys, "ops-secret-0123456789")
		detailed(state.name+", keys, admin:read", code, body, state.code)
		code, body = get(noKeys, "")
		detailed(state.name+", no keys", code, body, state.code)
	}
	if code, body := get(withKeys, "wrong-secret-0123456789"); code != http.StatusUnauthorized || strings.Contains(body, "internal-billing") {
		t.Errorf("a wrong key: %d %s, want 401", code, body)
	}
}
