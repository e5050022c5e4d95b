package main

import (
	"strings"
	"testing"
	"time"
)

// TestTaskWaitingForInputCarriesItsQuestions: a client of 2026-07-28 that
// declares the Tasks extension but not elicitation (the Inspector CLI does
// so) runs a task that needs an input and a confirmation. Each time the
// task is input_required, tasks/get shows it no form (such a client would
// hand it to a form it cannot show and wait there), and the status message
// names each key to answer with tasks/update; answering them by those
// keys completes the task.
func TestTaskWaitingForInputCarriesItsQuestions(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, nil)
	defer stop()
	c := &mcpTaskClient{t: t, url: base + "/mcp", ext: true,
		// Declared as absent: the extension, and nothing else.
		caps: map[string]any{"elicitation": nil}}
	created := c.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": wipeRequest}})
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || id == "" {
		t.Fatalf("run_task as a task: %+v %+v", created.Result, created.Error)
	}
	answers := map[string]map[string]any{
		"inputs":  {"bucket": "old"},
		"confirm": {"confirm": true},
	}
	asked := 0
	answered := map[string]bool{}
	for {
		got := c.poll(id, "working")
		if got["status"] != "input_required" {
			if got["status"] != "completed" || asked != 2 || strings.Join(up.buckets(), ",") != "old" {
				t.Fatalf("task ended %v after %d questions; buckets %v", got, asked, up.buckets())
			}
			return
		}
		requests, ok := got["inputRequests"].(map[string]any)
		msg, _ := got["statusMessage"].(string)
		if !ok || len(requests) != 0 {
			t.Fatalf("input_required: inputRequests %v, want an empty map for a client without elicitation: %v", got["inputRequests"], got)
		}
		_, keyed, found := strings.Cut(msg, "tasks/update, inputResponses keyed ")
		keyed, _, _ = strings.Cut(keyed, ";")
		if !found || keyed == "" {
			t.Fatalf("status message %q does not say to answer with tasks/update, and by which keys", msg)
		}
		responses := map[string]any{}
		for key := range strings.SplitSeq(keyed, ", ") {
			if answered[key] {
				continue // the answer is on its way
			}
			answered[key] = true
			kind, _, _ := strings.Cut(key, ".")
			responses[key] = map[string]any{"action": "accept", "content": answers[kind]}
		}
		if len(responses) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		asked += len(responses)
		if asked > 4 {
			t.Fatalf("asked again and again: %v", got)
		}
		if r := c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": responses}); r.Error != nil {
			t.Fatalf("tasks/update: %+v", r.Error)
		}
	}
}
