package quota_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/quota"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/router"
)

// The quotas per principal on a real SQLite store,
// through the real store_insight tool on a real router: over MCP (go-sdk
// client over in-memory transports) and the REST bridge (loopback HTTP).

var (
	alice = &agentsmcp.Principal{ID: "key:alice", Scopes: agentsmcp.Scopes}
	bob   = &agentsmcp.Principal{ID: "key:bob", Scopes: agentsmcp.Scopes}
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "quota.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// memoryRouter serves the memory tools over db's insights within q.
func memoryRouter(t *testing.T, db *sqlite.DB, q quota.Quota) *router.Router {
	t.Helper()
	insights := &quota.Insights{InsightService: db, Usage: db, Quota: q}
	tools := &mcptools.MemoryTools{
		Recall:          &recall.Searcher{Index: vectors.NewFlat(embed.HashDimensions), Embedder: embed.Hash{}, Learnings: db, Insights: insights, Patterns: db},
		ToolPerformance: db,
	}
	r := router.New(router.Options{Version: "test", Access: router.AccessOptions{Default: alice}})
	local := localtools.New()
	if err := tools.Register(local); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	return r
}

// mcpClient connects a go-sdk client to r; its calls are alice's, the
// router's default principal.
func mcpClient(t *testing.T, r *router.Router) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flood", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The attack of the issue: one key stores insight after insight. It is
// refused at its quota, with an isError result that names the quota, and
// nothing past it is stored; another principal is not affected.
func TestStoreInsightFloodIsRefusedAtTheQuota(t *testing.T) {
	db := openStore(t)
	const maxCount = 25
	r := memoryRouter(t, db, quota.Quota{MaxCount: maxCount, MaxBytes: 64 << 20})
	cs := mcpClient(t, r)
	text := strings.Repeat("x", 16<<10-1) // 16 KB each, as in the report
	stored, refusal := 0, ""
	for i := range 2 * maxCount {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcptools.StoreInsightName,
			Arguments: map[string]any{"text": text + string(rune('a'+i%26)), "type": "observation"}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res.IsError {
			refusal = res.Content[0].(*mcp.TextContent).Text
			break
		}
		stored++
	}
	if stored != maxCount {
		t.Fatalf("stored %d insights before a refusal, want the quota, %d", stored, maxCount)
	}
	for _, want := range []string{"quota exceeded", `"key:alice"`, "quotas.insights.max_count", "25"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("refusal %q does not say %q", refusal, want)
		}
	}
	if u, err := db.InsightUsage(t.Context(), alice.ID); err != nil || u.Count != maxCount {
		t.Fatalf("alice holds %+v (%v), want %d insights", u, err, maxCount)
	}
	// Bob, through the same router, has a quota of his own.
	raw, _ := json.Marshal(map[string]any{"text": "bob's insight"})
	res, err := r.CallTool(agentsmcp.WithPrincipal(t.Context(), bob),
		&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: mcptools.StoreInsightName, Arguments: raw}})
	if err != nil || res.IsError {
		t.Fatalf("bob's store_insight: %v %+v", err, res)
	}
	// Deleting frees room.
	items, _, err := db.FindInsights(t.Context(), agentsmcp.InsightFilter{Principal: alice.ID, Limit: 1})
	if err != nil || len(items) != 1 {
		t.Fatal(err)
	}
	if err := db.DeleteInsight(t.Context(), items[0].ID); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcptools.StoreInsightName, Arguments: map[string]any{"text": "room again"}})
	if err != nil || res.IsError {
		t.Fatalf("after a delete: %v %+v", err, res)
	}
}

func TestStoreInsightBytesQuota(t *testing.T) {
	db := openStore(t)
	r := memoryRouter(t, db, quota.Quota{MaxBytes: 10_000})
	cs := mcpClient(t, r)
	var texts []string
	for i := range 3 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcptools.StoreInsightName,
			Arguments: map[string]any{"text": strings.Repeat(string(rune('a'+i)), 4000)}})
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, res.Content[0].(*mcp.TextContent).Text)
		if res.IsError != (i == 2) {
			t.Fatalf("insight %d of 4,000 bytes under a quota of 10,000: isError %v: %.200s", i, res.IsError, texts[i])
		}
	}
	if !strings.Contains(texts[2], "quotas.insights.max_bytes") || !strings.Contains(texts[2], "10000 bytes") {
		t.Errorf("refusal %q does not name the bytes quota", texts[2])
	}
}

// Concurrent creates of one principal never get past the quota on one
// replica: the usage read and the create are serialised per principal.
func TestConcurrentCreatesStopAtTheQuota(t *testing.T) {
	db := openStore(t)
	insights := &quota.Insights{InsightService: db, Usage: db, Quota: quota.Quota{MaxCount: 20}}
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				err := insights.CreateInsight(context.Background(), &agentsmcp.Insight{Text: "concurrent", Type: agentsmcp.InsightObservation, Principal: alice.ID})
				switch agentsmcp.ErrorCode(err) {
				case "":
					ok.Add(1)
				case agentsmcp.EQUOTA:
					refused.Add(1)
				default:
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != 20 || refused.Load() != 60 {
		t.Fatalf("%d created, %d refused; want exactly the quota, 20, and 60", ok.Load(), refused.Load())
	}
}

// The REST bridge answers a quota refusal with 429, not a 200 isError.
func TestRESTBridgeAnswersAQuotaRefusalWith429(t *testing.T) {
	db := openStore(t)
	r := memoryRouter(t, db, quota.Quota{MaxCount: 1})
	h := r.HTTPHandler(router.HTTPOptions{Authenticate: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			next.ServeHTTP(w, req.WithContext(agentsmcp.WithPrincipal(req.Context(), alice)))
		})
	}})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	post := func() (int, map[string]any) {
		resp, err := http.Post(srv.URL+router.RESTBridgePath, "application/json",
			bytes.NewReader([]byte(`{"tool":"store_insight","params":{"text":"an insight"}}`)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	if status, body := post(); status != http.StatusOK || body["isError"] != false {
		t.Fatalf("first insight: HTTP %d %v", status, body)
	}
	status, body := post()
	e, _ := body["error"].(map[string]any)
	if status != http.StatusTooManyRequests || e["code"] != router.BridgeQuotaExceeded ||
		!strings.Contains(e["message"].(string), "quotas.insights.max_count") {
		t.Fatalf("over the quota: HTTP %d %v", status, body)
	}
}

func TestTasksQuota(t *testing.T) {
	db := openStore(t)
	tasks := &quota.Tasks{TaskService: db, Usage: db, Quota: quota.Quota{MaxCount: 2, MaxBytes: 1 << 20}}
	ctx := t.Context()
	var created []*agentsmcp.Task
	for range 2 {
		tk := &agentsmcp.Task{Request: "export the report", Principal: alice.ID}
		for _, id := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
			tk.Steps = append(tk.Steps, agentsmcp.StepState{StepID: id, Status: agentsmcp.StepPending})
		}
		if err := tasks.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		created = append(created, tk)
	}
	err := tasks.CreateTask(ctx, &agentsmcp.Task{Request: "one more", Principal: alice.ID})
	if agentsmcp.ErrorCode(err) != agentsmcp.EQUOTA || !strings.Contains(agentsmcp.ErrorMessage(err), "quotas.tasks.max_count") {
		t.Fatalf("a third task: %v, want EQUOTA naming quotas.tasks.max_count", err)
	}
	if err := tasks.CreateTask(ctx, &agentsmcp.Task{Request: "bob's", Principal: bob.ID}); err != nil {
		t.Fatalf("bob's task: %v", err)
	}

	// A running task is never failed for the quota: its per-step writes
	// reach the store's own UpdateTaskSteps, and it may grow past it.
	if !storedform.TasksVerbatim(tasks) {
		t.Error("the wrapper hides that SQLite stores tasks verbatim")
	}
	tk := created[0]
	tk.Status = agentsmcp.TaskRunning
	for i := range tk.Steps { // 6 × 200 KB: 1.2 MB, past the 1 MiB quota
		tk.Steps[i].Status, tk.Steps[i].Output = agentsmcp.StepSucceeded, json.RawMessage(`"`+strings.Repeat("o", 200<<10)+`"`)
		if err := tasks.UpdateTaskSteps(ctx, tk, agentsmcp.TaskChange{Steps: []int{i}}); err != nil {
			t.Fatal(err)
		}
	}
	// Room in count (the other task ended and went), none in bytes.
	other := created[1]
	other.Status, other.EndedAt = agentsmcp.TaskSucceeded, time.Now().Add(-time.Hour)
	if err := tasks.UpdateTask(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DeleteEndedTasks(ctx, time.Now(), 10); err != nil || n != 1 {
		t.Fatalf("DeleteEndedTasks: %d, %v", n, err)
	}
	err = tasks.CreateTask(ctx, &agentsmcp.Task{Request: "small", Principal: alice.ID})
	if agentsmcp.ErrorCode(err) != agentsmcp.EQUOTA || !strings.Contains(agentsmcp.ErrorMessage(err), "quotas.tasks.max_bytes") {
		t.Fatalf("a task past the bytes quota: %v, want EQUOTA naming quotas.tasks.max_bytes", err)
	}
	// Once the large task is gone, there is room again.
	tk.Status, tk.EndedAt = agentsmcp.TaskSucceeded, time.Now().Add(-time.Hour)
	if err := tasks.UpdateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DeleteEndedTasks(ctx, time.Now(), 10); err != nil || n != 1 {
		t.Fatalf("DeleteEndedTasks: %d, %v", n, err)
	}
	if err := tasks.CreateTask(ctx, &agentsmcp.Task{Request: "small", Principal: alice.ID}); err != nil {
		t.Fatalf("a small task within both quotas: %v", err)
	}
}

func TestInsightSweeperDeletesOldInsights(t *testing.T) {
	db := openStore(t)
	ctx := t.Context()
	now := time.Now()
	var old, fresh []string
	for i := range 250 { // more than one batch
		in := &agentsmcp.Insight{Text: "old", Type: agentsmcp.InsightObservation, Principal: []string{alice.ID, bob.ID}[i%2],
			CreatedAt: now.Add(-48*time.Hour + time.Duration(i)*time.Second)}
		if err := db.CreateInsight(ctx, in); err != nil {
			t.Fatal(err)
		}
		old = append(old, in.ID)
	}
	for range 3 {
		in := &agentsmcp.Insight{Text: "fresh", Type: agentsmcp.InsightObservation, Principal: alice.ID}
		if err := db.CreateInsight(ctx, in); err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, in.ID)
	}
	s := &quota.InsightSweeper{Insights: db, Retention: 24 * time.Hour, Interval: time.Hour}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { // owned by the test: stopped below
		defer close(done)
		s.Run(runCtx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		u, err := db.InsightUsage(ctx, bob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if u.Count == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob still holds %d insights after the first sweep", u.Count)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the sweeper did not stop with its context")
	}
	for _, id := range old {
		if _, err := db.FindInsightByID(ctx, id); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			t.Fatalf("old insight %s: %v, want deleted", id, err)
		}
	}
	for _, id := range fresh {
		if _, err := db.FindInsightByID(ctx, id); err != nil {
			t.Fatalf("fresh insight %s: %v", id, err)
		}
	}
}
