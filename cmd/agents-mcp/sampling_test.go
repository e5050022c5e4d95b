package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// Sampling for clients of MCP 2026-07-28 through MRTR (ADR 0009), on the
// real serve assembly with AGENTS_MCP_LLM=sampling: run_task called by a
// 2026-07-28 request that declares sampling answers input_required with
// one sampling/createMessage request per round, which the test answers as
// the client's model (wipeModel), then runs the plan that model made.
// The client is raw JSON-RPC over loopback HTTP (mcpTaskClient).

// wipeModel stands for the client's model: its thought recommends the
// storage upstream's wipe_bucket, and its plan wipes the bucket the user
// is asked for, after a confirmation.
func wipeModel(params map[string]any) string {
	if system, _ := params["systemPrompt"].(string); strings.Contains(system, "thought agent") {
		return `{"subGoals":["wipe the bucket"],"reasoning":"one destructive call","approaches":["wipe it"],"constraints":["ask which bucket"],"assumptions":[],"uncertainties":["which bucket"],"confidence":0.8,"recommendedTools":[{"tool":"storage__wipe_bucket","reason":"it wipes buckets"}]}`
	}
	return `{"goal":"wipe a bucket","steps":[{"id":"wipe_bucket","tool":"storage__wipe_bucket","arguments":{"bucket":"{{inputs.bucket}}"},"description":"wipe the bucket","needsConfirmation":true}],"inputs":{"type":"object","properties":{"bucket":{"type":"string","description":"name of the bucket to wipe"}},"required":["bucket"]}}`
}

// sampleRounds calls run_task for wipeRequest and answers its sampling
// rounds with wipeModel, checking each: one sampling/createMessage
// request under sample.<n>, the thought asked first. A changed
// requestState is refused on the way. It returns the answer that is not
// a sampling round, and the systemPrompt of each request.
func sampleRounds(t *testing.T, c *mcpTaskClient) (rpcAnswer, []string) {
	t.Helper()
	args := map[string]any{"request": wipeRequest}
	r := c.call("tools/call", map[string]any{"name": "run_task", "arguments": args})
	var systems []string
	for n := 1; r.Error == nil && r.Result["resultType"] == "input_required"; n++ {
		asks, _ := r.Result["inputRequests"].(map[string]any)
		key := fmt.Sprintf("sample.%d", n)
		ask, _ := asks[key].(map[string]any)
		if ask == nil {
			// Sampling is over: these are the task's questions.
			break
		}
		params, _ := ask["params"].(map[string]any)
		state, _ := r.Result["requestState"].(string)
		if len(asks) != 1 || ask["method"] != "sampling/createMessage" || params == nil || state == "" || n > 4 {
			t.Fatalf("round %d: %v", n, r.Result)
		}
		system, _ := params["systemPrompt"].(string)
		systems = append(systems, system)
		answer := map[string]any{key: map[string]any{"role": "assistant", "model": "wipe-model",
			"content": map[string]any{"type": "text", "text": wipeModel(params)}}}
		if n == 1 {
			changed := []byte(state)
			changed[len(changed)/3] ^= 1
			bad := c.call("tools/call", map[string]any{"name": "run_task", "arguments": args, "requestState": string(changed), "inputResponses": answer})
			if bad.Error == nil || bad.Error.Code != -32602 || !strings.Contains(bad.Error.Message, "failed verification") {
				t.Fatalf("a changed requestState: %+v %+v", bad.Result, bad.Error)
			}
		}
		r = c.call("tools/call", map[string]any{"name": "run_task", "arguments": args, "requestState": state, "inputResponses": answer})
	}
	if r.Error != nil {
		t.Fatalf("run_task: %+v", r.Error)
	}
	if len(systems) != 2 || !strings.Contains(systems[0], "thought agent") || strings.Contains(systems[1], "thought agent") {
		t.Fatalf("%d sampling rounds, want the thought then the plan", len(systems))
	}
	return r, systems
}

// answersTo answers the elicitation questions of a paused wipe: the
// bucket "tmp", and yes to every confirmation.
func answersTo(asks map[string]any) map[string]any {
	out := map[string]any{}
	for key, a := range asks {
		ask, _ := a.(map[string]any)
		if ask["method"] != "elicitation/create" {
			continue
		}
		if strings.HasPrefix(key, "confirm") {
			out[key] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
		} else {
			out[key] = map[string]any{"action": "accept", "content": map[string]any{"bucket": "tmp"}}
		}
	}
	return out
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRunTaskSamplesA2026ClientsModelThroughMRTR: the sampling rounds
// come first (thought, plan), then the rounds of the task's own
// questions (the bucket, the confirmation), then the outcome: the bucket
// the user gave wiped once, on the model's plan.
func TestRunTaskSamplesA2026ClientsModelThroughMRTR(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, map[string]string{"AGENTS_MCP_LLM": "sampling"})
	defer stop()
	c := &mcpTaskClient{t: t, url: base + "/mcp", caps: map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}}}

	r, _ := sampleRounds(t, c)
	var asked []string
	for n := 0; r.Error == nil && r.Result["resultType"] == "input_required"; n++ {
		asks, _ := r.Result["inputRequests"].(map[string]any)
		answers := answersTo(asks)
		if n > 3 || len(answers) != len(asks) {
			t.Fatalf("question round %d: %v", n, r.Result)
		}
		asked = append(asked, keysOf(asks)...)
		r = c.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": wipeRequest},
			"requestState": r.Result["requestState"], "inputResponses": answers})
	}
	if r.Error != nil {
		t.Fatalf("run_task: %+v", r.Error)
	}
	sc, _ := r.Result["structuredContent"].(map[string]any)
	task, _ := sc["task"].(map[string]any)
	if task["status"] != "succeeded" || strings.Join(up.buckets(), ",") != "tmp" || len(asked) < 2 {
		t.Fatalf("task %v after questions %v; buckets %v", task["status"], asked, up.buckets())
	}

	// Without the capability, AGENTS_MCP_LLM=sampling refuses the call.
	plain := &mcpTaskClient{t: t, url: base + "/mcp", caps: map[string]any{"elicitation": map[string]any{}}}
	r = plain.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": wipeRequest}})
	content, _ := json.Marshal(r.Result["content"])
	if r.Error != nil || r.Result["isError"] != true || !strings.Contains(string(content), "does not declare the sampling capability") {
		t.Fatalf("sampling mode, no capability: %+v %+v", r.Result, r.Error)
	}
}

// TestSamplingRoundsThenTheMCPTask: a request that also declares the
// Tasks extension gets its sampling rounds as input_required results,
// and only the round that completes the plan answers with the
// CreateTaskResult (ADR 0010: MRTR rounds first, then the task), which
// then asks its questions through tasks/get and tasks/update.
func TestSamplingRoundsThenTheMCPTask(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, map[string]string{"AGENTS_MCP_LLM": "auto"})
	defer stop()
	c := &mcpTaskClient{t: t, url: base + "/mcp", ext: true, caps: map[string]any{"sampling": map[string]any{}}}

	created, _ := sampleRounds(t, c)
	id, _ := created.Result["taskId"].(string)
	if created.Result["resultType"] != "task" || !strings.HasPrefix(id, "tsk_") {
		t.Fatalf("after the sampling rounds: %+v", created.Result)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := c.poll(id, "working")
		if got["status"] != "input_required" {
			if got["status"] != "completed" || strings.Join(up.buckets(), ",") != "tmp" {
				t.Fatalf("task %v; buckets %v", got, up.buckets())
			}
			return
		}
		asks, _ := got["inputRequests"].(map[string]any)
		if ack := c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": answersTo(asks)}); ack.Error != nil {
			t.Fatalf("tasks/update: %+v", ack.Error)
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still asks %v", id, keysOf(asks))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
