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
