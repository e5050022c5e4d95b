package quota_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/quota"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/router"
)

// storeTrips is the store's call counter service with a count of the
// round trips made to it.
type storeTrips struct {
	agentsmcp.CallCounterService
	adds atomic.Int64
}

func (s *storeTrips) AddCallCount(ctx context.Context, key string, expiresAt time.Time, n int64) (int64, error) {
	s.adds.Add(1)
	return s.CallCounterService.AddCallCount(ctx, key, expiresAt, n)
}

// A metered tools/call over HTTP makes one round trip to the call
// counters (the guard's charge, which the call then finds made), not a
// read by the guard and a charge by the call. A call refused after the
// guard (invalid arguments) gets its count back; the call past the quota
// is answered 429 before it runs. A charge ticket sent by the client
// counts for nothing.
func TestMeteredHTTPCallCountsOnce(t *testing.T) {
	db := openStore(t)
	trips := &storeTrips{CallCounterService: db}
	limit := agentsmcp.CallLimit{CallQuota: agentsmcp.CallQuota{Tool: "store_insight", Limit: 2, Window: agentsmcp.Duration(time.Hour)},
		Setting: "auth.api_keys[name=metered].call_quotas"}
	metered := &agentsmcp.Principal{ID: "key:metered", Scopes: agentsmcp.Scopes, CallLimits: []agentsmcp.CallLimit{limit}}
	tools := &mcptools.MemoryTools{
		Recall:          &recall.Searcher{Index: vectors.NewFlat(embed.HashDimensions), Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db},
		ToolPerformance: db,
	}
	r := router.New(router.Options{Version: "test", Access: router.AccessOptions{Default: metered}, CallQuotas: &quota.Calls{Counters: trips}})
	local := localtools.New()
	if err := tools.Register(local); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	h := r.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	call := func(args string) (int, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_insight","arguments":` + args + `,` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"metered","version":"1"}}}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "store_insight")
		// A client that names a charge ticket of its own is not believed.
		req.Header.Set("X-Agents-Mcp-Precharged", "AAAAAAAAAAAAAAAAAAAAAAAAAA")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	count := func() int64 {
		t.Helper()
		end := time.Now().Truncate(time.Hour).Add(time.Hour)
		key := strings.Join([]string{"key:metered", limit.Setting, "", "store_insight", "3600000", strconv.FormatInt(end.UnixMilli(), 10)}, "\x00")
		n, err := db.AddCallCount(t.Context(), key, end, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	before := trips.adds.Load()
	if status, body := call(`{"text":"metered insight one"}`); status != http.StatusOK || !strings.Contains(body, `"result"`) || strings.Contains(body, `"isError":true`) {
		t.Fatalf("first call: HTTP %d %s", status, body)
	}
	if n := trips.adds.Load() - before; n != 1 {
		t.Errorf("one metered call made %d round trips to the call counters, want 1", n)
	}
	if n := count(); n != 1 {
		t.Errorf("after one call the counter is %d, want 1", n)
	}

	// Refused for its arguments after the guard charged it: the count is
	// given back when its request ends.
	if status, body := call(`{"text":5}`); status != http.StatusOK || !strings.Contains(body, `"isError":true`) {
		t.Fatalf("call with invalid arguments: HTTP %d %s", status, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 1 {
		t.Errorf("after a call refused for its arguments the counter is %d, want 1 (its charge given back)", n)
	}

	if status, body := call(`{"text":"metered insight two"}`); status != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("second call: HTTP %d %s", status, body)
	}
	status, body := call(`{"text":"metered insight three"}`)
	if status != http.StatusTooManyRequests || !strings.Contains(body, limit.Setting) {
		t.Errorf("third call, past the quota of 2: HTTP %d %s; want 429 naming the quota", status, body)
	}
	if n := count(); n > 3 {
		t.Errorf("the counter is %d after 2 calls and a refusal", n)
	}
}
