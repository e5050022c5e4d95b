package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agents-mcp/agents-mcp/api/telemetry"
)

// The wiring of a server: tracing from the OTEL_* environment (here none,
// so nothing is exported), JSON logs that carry request and trace ids,
// metrics fed by the router's tool-call hook and read from the pool and
// the store when scraped, and the middlewares in front of every endpoint.
func Example() {
	ctx := context.Background()
	var logs bytes.Buffer
	logger := slog.New(telemetry.NewLogHandler(slog.NewJSONHandler(&logs, nil)))

	shutdown, err := telemetry.SetupTracing(ctx, telemetry.TracingConfig{Version: "1.0.0", Logger: logger})
	if err != nil {
		panic(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = shutdown(sctx)
	}()

	metrics := telemetry.NewMetrics(telemetry.MetricsOptions{Version: "1.0.0", Logger: logger})
	// In the server: router.Options{OnToolCall: func(c router.ToolCallRecord) {
	//	metrics.ObserveToolCall(telemetry.ToolCall{Tool: c.Tool, Source: c.Provider, Duration: c.Duration, Failed: c.Error != ""})
	// }}
	metrics.ObserveToolCall(telemetry.ToolCall{Tool: "search_tools", Source: "local", Duration: 3 * time.Millisecond})
	// Once the pool and the store exist (Tasks: the store; Upstreams: from
	// pool.Statuses()).
	metrics.SetSources(telemetry.Sources{Upstreams: func() []telemetry.UpstreamState {
		return []telemetry.UpstreamState{{Name: "files", State: "ready", Tools: 11}}
	}})

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler())
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		logger.InfoContext(r.Context(), "handled")
	})
	srv := httptest.NewServer(telemetry.HTTPMiddleware(telemetry.RequestIDMiddleware(mux)))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
	req.Header.Set(telemetry.RequestIDHeader, "example-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	fmt.Println("answer's X-Request-Id:", res.Header.Get(telemetry.RequestIDHeader))
	var line struct {
		Msg       string `json:"msg"`
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal(logs.Bytes(), &line)
	fmt.Printf("log: msg=%s request_id=%s\n", line.Msg, line.RequestID)

	res, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "agents_mcp_tool_calls_total{") || strings.HasPrefix(l, `agents_mcp_upstream_state{state="ready"`) {
			fmt.Println(l)
		}
	}
	// Output:
	// answer's X-Request-Id: example-1
	// log: msg=handled request_id=example-1
	// agents_mcp_tool_calls_total{outcome="ok",source="local",tool="search_tools"} 1
	// agents_mcp_upstream_state{state="ready",upstream="files"} 1
}
