package router_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router"
)

// The bounds on subscriptions/listen for task ids: one
// read per task however many streams watch it, backoff on tasks that wait
// for their user, a quota of task ids watched per principal, and each id
// charged to the caller's rate limit. Real router over loopback HTTP with
// ownedTasks, which counts its reads.

func TestListenReadsEachTaskOncePerPollWhateverTheStreams(t *testing.T) {
	const poll = 100 * time.Millisecond
	s := newListenServer(t, poll)
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking})
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_b", Status: mcpwire.MCPTaskWorking})
	const streams = 20
	var all []*listenStream
	for range streams {
		st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a", "own_b"}}, true)
		if got := ackedIDs(t, st.next(t, 5*time.Second)); len(got) != 2 {
			t.Fatalf("acknowledged %v", got)
		}
		taskNote(t, st.next(t, 5*time.Second))
		taskNote(t, st.next(t, 5*time.Second))
		all = append(all, st)
	}
	before := s.owned.reads.Load()
	const window = time.Second
	time.Sleep(window)
	reads := s.owned.reads.Load() - before
	// Two working tasks, each read about once per poll: ~20 reads, where
	// a read per stream would be ~400.
	if limit := int64(2 * (window/poll + 3)); reads > limit || reads < 2 {
		t.Fatalf("%d reads of 2 working tasks in %s by %d streams polling every %s, want 2..%d", reads, window, streams, poll, limit)
	}

	// A change still reaches every stream, once.
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskCompleted, Result: &mcp.CallToolResult{Content: []mcp.Content{}}})
	for _, st := range all {
		if note := taskNote(t, st.next(t, 5*time.Second)); note["taskId"] != "own_a" || note["status"] != "completed" {
			t.Fatalf("notification %v", note)
		}
	}
	for _, st := range all {
		st.quiet(t, 50*time.Millisecond)
	}
}

func TestListenBacksOffOnTasksWaitingForTheirUserAndWakesOnTheHub(t *testing.T) {
	const poll, maxPoll = 50 * time.Millisecond, 800 * time.Millisecond
	s := newListenServer(t, poll, func(o *router.HTTPOptions) { o.TaskPollMaxInterval = maxPoll })
	ask := mcp.InputRequestMap{"confirm.s1.1": &mcp.ElicitParams{Message: "Allow?", RequestedSchema: map[string]any{"type": "object"}}}
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_p", Status: mcpwire.MCPTaskInputRequired, StatusMessage: "waiting", InputRequests: ask})
	st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_p"}}, true)
	ackedIDs(t, st.next(t, 5*time.Second))
	taskNote(t, st.next(t, 5*time.Second))

	// Unchanged, the paused task is read at 50, 100, 200, 400, 800, 800 ms
	// intervals: about 6 reads in 2.5 s where a fixed poll makes 50.
	before := s.owned.reads.Load()
	time.Sleep(2500 * time.Millisecond)
	if reads := s.owned.reads.Load() - before; reads > 9 || reads < 3 {
		t.Fatalf("%d reads of a paused task in 2.5s, want 3..9 (backoff from %s to %s)", reads, poll, maxPoll)
	}
	// The answer stored through this replica is seen at once, not at the
	// next read of the backoff.
	start := time.Now()
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_p", Status: mcpwire.MCPTaskWorking, StatusMessage: "resumed"})
	if note := taskNote(t, st.next(t, 5*time.Second)); note["status"] != "working" {
		t.Fatalf("notification %v", note)
	}
	if waited := time.Since(start); waited > maxPoll/2 {
		t.Errorf("the change reached the stream after %s: the hub's report did not wake the watcher", waited)
	}
	// Working again: polled at the base interval.
	before = s.owned.reads.Load()
	time.Sleep(500 * time.Millisecond)
	if reads := s.owned.reads.Load() - before; reads < 5 {
		t.Errorf("%d reads of a working task in 500ms polling every %s: the backoff was not reset", reads, poll)
	}
}

// quotaRefusal reads a listen answer that is not a stream.
func quotaRefusal(t *testing.T, st *listenStream) (status int, code int, msg string) {
	t.Helper()
	defer st.resp.Body.Close()
	var reply struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if st.resp.StatusCode == http.StatusOK {
		return st.resp.StatusCode, 0, ""
	}
	if err := json.NewDecoder(st.resp.Body).Decode(&reply); err != nil {
		t.Fatalf("HTTP %d: %v", st.resp.StatusCode, err)
	}
	if reply.ID != "listen-1" {
		t.Fatalf("error for id %q", reply.ID)
	}
	return st.resp.StatusCode, reply.Error.Code, reply.Error.Message
}

func TestListenQuotaOfTaskIDsPerPrincipal(t *testing.T) {
	s := newListenServer(t, time.Hour, func(o *router.HTTPOptions) { o.MaxListenTaskIDsPerPrincipal = 3 })
	for _, id := range []string{"own_1", "own_2", "own_3", "own_4"} {
		s.owned.set("alice", mcpwire.MCPTask{ID: id, Status: mcpwire.MCPTaskWorking})
		s.owned.set("bob", mcpwire.MCPTask{ID: strings.Replace(id, "own_", "own_b", 1), Status: mcpwire.MCPTaskWorking})
	}
	first := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_1", "own_2"}}, true)
	ackedIDs(t, first.next(t, 5*time.Second))
	// The same ids again cost nothing: a task counts once, whatever the
	// streams that watch it.
	for range 5 {
		st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_2", "own_1"}}, true)
		if got := ackedIDs(t, st.next(t, 5*time.Second)); len(got) != 2 {
			t.Fatalf("acknowledged %v", got)
		}
	}
	second := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_2", "own_3"}}, true)
	ackedIDs(t, second.next(t, 5*time.Second))

	// A fourth id is over alice's quota: the whole stream is refused.
	over := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_1", "own_4"}}, true)
	status, code, msg := quotaRefusal(t, over)
	if status != http.StatusTooManyRequests || code != router.CodeQuotaExceeded ||
		!strings.Contains(msg, "quotas.listen_task_ids") || !strings.Contains(msg, "is 3") {
		t.Fatalf("over the quota: HTTP %d, code %d, %q", status, code, msg)
	}
	// Bob has a quota of his own, and unknown ids do not use it up: they
	// are not kept.
	unknown := listen(t, s.url, "bob", map[string]any{"taskIds": []string{"own_none1", "own_none2", "own_none3"}}, true)
	if got := ackedIDs(t, unknown.next(t, 5*time.Second)); len(got) != 0 {
		t.Fatalf("bob acknowledged %v", got)
	}
	bob := listen(t, s.url, "bob", map[string]any{"taskIds": []string{"own_b1", "own_b2", "own_b3"}}, true)
	if got := ackedIDs(t, bob.next(t, 5*time.Second)); len(got) != 3 {
		t.Fatalf("bob acknowledged %v", got)
	}
	// A stream that ends gives its ids back.
	second.cancel()
	testutil.Eventually(t, 5*time.Second, "own_3 is released", func() bool {
		st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_4"}}, true)
		defer st.cancel()
		return st.resp.StatusCode == http.StatusOK
	})
}

func TestListenChargesEachTaskIDToTheRateLimit(t *testing.T) {
	var mu sync.Mutex
	var charged []int
	refuse := false
	s := newListenServer(t, time.Hour, func(o *router.HTTPOptions) {
		o.ChargeListen = func(w http.ResponseWriter, r *http.Request, extra int) bool {
			mu.Lock()
			defer mu.Unlock()
			charged = append(charged, extra)
			if refuse {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
				return false
			}
			return true
		}
	})
	for _, id := range []string{"own_1", "own_2", "own_3"} {
		s.owned.set("alice", mcpwire.MCPTask{ID: id, Status: mcpwire.MCPTaskWorking})
	}
	// Repeated and empty ids are not charged; an unknown one is, since it
	// costs a read.
	st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_1", "own_2", "own_1", "", "own_3", "own_x"}}, true)
	ackedIDs(t, st.next(t, 5*time.Second))
	one := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_1"}}, true)
	ackedIDs(t, one.next(t, 5*time.Second))
	mu.Lock()
	if !slices.Equal(charged, []int{3}) {
		t.Errorf("charged %v, want [3]: four ids, the first paid with the request; a stream of one id is charged nothing more", charged)
	}
	refuse = true
	mu.Unlock()

	before := s.owned.reads.Load()
	st = listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_1", "own_2"}}, true)
	st.resp.Body.Close()
	if st.resp.StatusCode != http.StatusTooManyRequests || st.resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("refused by the rate limit: HTTP %d", st.resp.StatusCode)
	}
	if n := s.owned.reads.Load() - before; n != 0 {
		t.Errorf("a refused stream read %d tasks", n)
	}
}
