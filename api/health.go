package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"time"
)

// ReadinessCheck reports whether one dependency can serve traffic. It
// returns a detail shown in /readyz (counts, states; never secrets) and an
// error when the dependency is not ready.
type ReadinessCheck func(ctx context.Context) (detail any, err error)

// Health serves /healthz and /readyz.
//
// /healthz is liveness: 200 while the process can answer HTTP at all, so an
// orchestrator restarts only a wedged process. /readyz is readiness: 200 when
// every check passes within CheckTimeout, 503 otherwise and while Draining
// reports true, so a load balancer stops sending new work during shutdown.
//
// The body of /readyz is {"status": "ready"|"not_ready"|"draining"}, with,
// for a caller Detailed admits, "checks": each check's status, detail and
// error. Those name internals (a database path, every upstream and its
// failure reason), so a server with credentials shows them only to callers
// that may read the admin API; the status code and status, all a probe
// needs, are the same for everyone.
type Health struct {
	Checks       map[string]ReadinessCheck
	Draining     func() bool
	CheckTimeout time.Duration // per check; zero means 2s
	// Detailed reports whether the caller of r may see the checks; nil
	// shows them to every caller.
	Detailed func(r *http.Request) bool
}

// checkResult is one entry of the /readyz body.
type checkResult struct {
	Status string `json:"status"` // "ok" or "error"
	Detail any    `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Register mounts the endpoints on mux.
func (h *Health) Register(mux *http.ServeMux) {
	mux.Handle("GET /healthz", h.LiveHandler())
	mux.Handle("GET /readyz", h.ReadyHandler())
}

// LiveHandler serves /healthz.
func (h *Health) LiveHandler() http.Handler { return http.HandlerFunc(h.serveLive) }

// ReadyHandler serves /readyz. Whatever authenticates its callers goes in
// front of it, so that Detailed finds the caller in the request.
func (h *Health) ReadyHandler() http.Handler { return http.HandlerFunc(h.serveReady) }

func (h *Health) serveLive(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Health) serveReady(w http.ResponseWriter, r *http.Request) {
	if h.Draining != nil && h.Draining() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "draining"})
		return
	}
	timeout := h.CheckTimeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	names := make([]string, 0, len(h.Checks))
	for name := range h.Checks {
		names = append(names, name)
	}
	sort.Strings(names)
	results := make(map[string]checkResult, len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			detail, err := h.Checks[name](ctx)
			res := checkResult{Status: "ok", Detail: detail}
			if err != nil {
				res.Status, res.Error = "error", err.Error()
			}
			mu.Lock()
			results[name] = res
			mu.Unlock()
		})
	}
	wg.Wait()
	status, code := "ready", http.StatusOK
	for _, res := range results {
		if res.Status != "ok" {
			status, code = "not_ready", http.StatusServiceUnavailable
		}
	}
	if h.Detailed != nil && !h.Detailed(r) {
		writeJSON(w, code, map[string]any{"status": status})
		return
	}
	writeJSON(w, code, map[string]any{"status": status, "checks": results})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
