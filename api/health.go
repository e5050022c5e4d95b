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
type Health struct {
	Checks       map[string]ReadinessCheck
	Draining     func() bool
	CheckTimeout time.Duration // per check; zero means 2s
}

// checkResult is one entry of the /readyz body.
type checkResult struct {
	Status string `json:"status"` // "ok" or "error"
	Detail any    `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Register mounts the endpoints on mux.
func (h *Health) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.serveLive)
	mux.HandleFunc("GET /readyz", h.serveReady)
}

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
	writeJSON(w, code, map[string]any{"status": status, "checks": results})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
