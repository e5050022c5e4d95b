package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Task status notifications (ADR 0010, D5) on the real serve assembly:
// run_task called as a task is listened to with subscriptions/listen, and
// its input_required and completed states arrive on the stream, woken by
// the executor's OnChange through the replica's hub.

// taskStream is an open listen stream of raw JSON-RPC messages.
type taskStream struct {
	status   int
	errReply map[string]any // the JSON answer of a refused listen
	messages chan map[string]any
}

func openTaskStream(t *testing.T, url, key string, taskIDs []string, ext bool) *taskStream {
	t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": caps,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "listen-e2e", "version": "1"},
		},
		"notifications": map[string]any{"taskIds": taskIDs},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &taskStream{status: resp.StatusCode, messages: make(chan map[string]any, 100)}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(&s.errReply)
		close(s.messages)
		return s
	}
	go func() { // ends with the body: the stream's end or the test's cancel
		defer close(s.messages)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				var m map[string]any
				if json.Unmarshal([]byte(strings.TrimSpace(d)), &m) == nil {
					s.messages <- m
				}
			}
		}
	}()
	return s
}

func (s *taskStream) next(t *testing.T, timeout time.Duration) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.messages:
		if !ok {
			t.Fatal("the listen stream ended")
		}
		return m
	case <-time.After(timeout):
		t.Fatal("nothing on the listen stream")
	}
	return nil
}

// acked returns the task ids of the acknowledgement m.
func acked(t *testing.T, m map[string]any) []string {
	t.Helper()
	params, _ := m["params"].(map[string]any)
	notes, _ := params["notifications"].(map[string]any)
	if m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("not an acknowledgement: %v", m)
	}
	ids := []string{}
	for _, id := range notes["taskIds"].([]any) {
		ids = append(ids, id.(string))
	}
	return ids
}

func TestRunTaskNotificationsOnSubscriptionsListen(t *testing.T) {
	fake := fakePlanner(t)
	cfgFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - name: alice
      key: `+aliceKey+`
      scopes: [mcp]
    - name: bob
      key: `+bobKey+`
      scopes: [mcp]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, code, logs := startServe(t, map[string]string{
		"AGENTS_MCP_LLM": "openai", "OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "fake-key",
	}, "--config", cfgFile)
	exited := false
	t.Cleanup(func() {
		if !exited {
			stop()
			<-code
		}
	})
	url := base + "/mcp"
	alice := &mcpTaskClient{t: t, url: url, key: aliceKey, ext: true}

	created := alice.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": "confirm-me: find tools"}})
	id, _ := created.Result["taskId"].(string)
	if created.Result["resultType"] != "task" || id == "" {
		t.Fatalf("run_task as a task: %+v %+v\n%s", created.Result, created.Error, logs.String())
	}

	// Without the extension the listen is refused; another principal is
	// acknowledged nothing, and its stream ends.
	if s := openTaskStream(t, url, aliceKey, []string{id}, false); s.status != http.StatusBadRequest ||
		!strings.Contains(mustJSON(s.errReply), `"code":-32021`) {
		t.Fatalf("listen without the extension: HTTP %d %v", s.status, s.errReply)
	}
	bobs := openTaskStream(t, url, bobKey, []string{id}, true)
	if got := acked(t, bobs.next(t, 10*time.Second)); len(got) != 0 {
		t.Fatalf("bob was acknowledged %v", got)
	}

	st := openTaskStream(t, url, aliceKey, []string{id}, true)
	if got := acked(t, st.next(t, 10*time.Second)); !slices.Equal(got, []string{id}) {
		t.Fatalf("alice was acknowledged %v", got)
	}
	// The task as it is (working or already paused), then each change:
	// it pauses for the confirmation of s1.
	var seen []string
	var note map[string]any
	for note == nil || note["status"] != "input_required" {
		m := st.next(t, 20*time.Second)
		if m["method"] != "notifications/tasks" {
			t.Fatalf("unexpected message: %v", m)
		}
		note, _ = m["params"].(map[string]any)
		meta, _ := note["_meta"].(map[string]any)
		if note["taskId"] != id || meta["io.modelcontextprotocol/subscriptionId"] != float64(41) {
			t.Fatalf("notification: %v", m)
		}
		seen = append(seen, note["status"].(string)+"|"+note["statusMessage"].(string))
	}
	asks, _ := note["inputRequests"].(map[string]any)
	if ask, _ := asks["confirm.s1.1"].(map[string]any); ask["method"] != "elicitation/create" {
		t.Fatalf("input_required notification: %v", note)
	}

	ack := alice.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"confirm.s1.1": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
	}})
	if ack.Error != nil {
		t.Fatalf("tasks/update: %+v", ack.Error)
	}
	for note["status"] != "completed" {
		m := st.next(t, 20*time.Second)
		note, _ = m["params"].(map[string]any)
		msg, _ := note["statusMessage"].(string)
		seen = append(seen, note["status"].(string)+"|"+msg)
	}
	res, _ := note["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if task, _ := sc["task"].(map[string]any); task["id"] != id || task["status"] != "succeeded" {
		t.Fatalf("completed notification: %v", note)
	}
	// One notification per visible change: never the same view twice in a
	// row.
	for i := 1; i < len(seen); i++ {
		if seen[i] == seen[i-1] {
			t.Errorf("the same view was sent twice: %q", seen)
		}
	}
	t.Logf("notifications: %q", seen)

	// The stream stays open after the task ended; at shutdown it ends
	// with its listen result, and does not hold the server up.
	stop()
	end := st.next(t, 10*time.Second)
	if end["id"] != float64(41) || end["result"] == nil {
		t.Fatalf("final message: %v", end)
	}
	select {
	case <-code:
		exited = true
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit with a listen stream open")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
