package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/router"
)

// openTaskStream opens a subscriptions/listen stream for ids as principal
// alice and returns once its acknowledgement arrived, with the ids acked.
// The stream's events are drained until ctx ends.
func openTaskStream(t *testing.T, ctx context.Context, url string, ids []string) (int, []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{
				"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
			},
		},
		"notifications": map[string]any{"taskIds": ids},
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, []string{b.String()}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var acked []string
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(d)), &m); err != nil || m.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first event %q, want the acknowledgement", d)
		}
		acked = m.Params.Notifications.TaskIDs
		break
	}
	go func() { // owned by the test: ends with ctx, which closes the body
		defer resp.Body.Close()
		for sc.Scan() {
		}
	}()
	return resp.StatusCode, acked
}

// The read amplification this bounds: one principal's 128 listen
// streams, each naming the same 100 paused tasks, used to read every task
// once per stream per poll (128 × 100 reads every 2 s, 6,400 reads a
// second). With one shared watcher per task and backoff on paused tasks,
// each task is read about once per backoff interval, whatever the number
// of streams. Real executor and MCP task backend over a real SQLite store,
// counted; real router over loopback HTTP.
func TestListenReadsEachPausedTaskOncePerBackoff(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 128 streams")
	}
	const (
		streams = 128
		tasks   = 100
		poll    = 50 * time.Millisecond
		maxPoll = 400 * time.Millisecond
		window  = 3 * time.Second
	)
	var counting *agentstest.ReadCountingTasks
	h := agentstest.NewHarness(t, func(o *agents.ExecutorOptions) {
		counting = &agentstest.ReadCountingTasks{TaskService: o.Tasks, Verbatim: true}
		o.Tasks = counting
	})
	alice := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "alice"})
	p := h.Plan("", agentstest.Step("wipe", "delete_all", `{"path":"/tmp/x"}`))
	var ids []string
	for range tasks {
		task, err := h.Exec.Start(alice, p, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if done := h.Wait(task.ID); done.Status != agentsmcp.TaskPaused {
			t.Fatalf("task %s is %s, want paused on the confirmation", task.ID, done.Status)
		}
		ids = append(ids, task.ID)
	}

	h.Router.AddTaskBackend(&mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store})
	hub := router.NewTaskHub()
	opts := router.HTTPOptions{TaskHub: hub, TaskPollInterval: poll, TaskPollMaxInterval: maxPoll,
		Authenticate: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				next.ServeHTTP(w, req.WithContext(agentsmcp.WithPrincipal(req.Context(), &agentsmcp.Principal{ID: "alice"})))
			})
		}}
	handler := h.Router.HTTPHandler(opts)
	srv := httptest.NewServer(handler)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		hub.Close()
		handler.Close()
		srv.Close()
	})

	var wg sync.WaitGroup
	errs := make(chan string, streams)
	for range streams {
		wg.Go(func() {
			status, acked := openTaskStream(t, ctx, srv.URL+"/mcp", ids)
			if status != http.StatusOK || len(acked) != tasks {
				errs <- fmt.Sprintf("HTTP %d, %d ids acknowledged: %v", status, len(acked), acked)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal("a stream: " + e)
	}

	before := counting.Reads.Load()
	time.Sleep(window)
	reads := counting.Reads.Load() - before
	// Each task is read at most once per interval of its backoff (50 ms,
	// doubled up to 400 ms) in the window; the slack covers a read in
	// flight at each end and the backoff still growing.
	perTask := int64(window/maxPoll) + 4
	t.Logf("%d streams × %d paused tasks: %d task reads in %s (%.0f/s); at most %d allowed",
		streams, tasks, reads, window, float64(reads)/window.Seconds(), perTask*tasks)
	if reads > perTask*tasks {
		t.Errorf("%d task reads in %s for %d tasks, want at most %d: each task is read once per poll, not once per stream",
			reads, window, tasks, perTask*tasks)
	}
	if reads < tasks {
		t.Errorf("%d task reads in %s: the paused tasks are no longer polled at all (another replica's change would never be seen)", reads, window)
	}
}
