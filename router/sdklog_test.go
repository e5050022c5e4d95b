package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A ping from a 2026-07-28 client (a method that revision removed) is the
// client's mistake: it gets -32601, and the server logs a warning, not an
// error.
func TestRemovedMethodIsAWarning(t *testing.T) {
	var logs lockedBuffer
	r := router.New(router.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	h := r.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	defer func() {
		h.Close()
		r.CloseSessions(context.Background())
		srv.Close()
	}()
	resp, data := routertest.Post(t, srv.URL+"/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{`+sessionlessMeta+`}}`),
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"})
	if reply := routertest.DecodeReply(t, resp, data); reply.Error == nil || reply.Error.Code != -32601 {
		t.Fatalf("ping on 2026-07-28: %d %s", resp.StatusCode, data)
	}
	found := false
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec struct {
			Level, Msg, Method string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Level == "ERROR" {
			t.Errorf("logged at ERROR: %s", line)
		}
		if rec.Msg == "method removed in the new protocol" && rec.Method == "ping" {
			found = rec.Level == "WARN"
		}
	}
	if !found {
		t.Errorf("no warning about the removed method; logs:\n%s", logs.String())
	}
}
