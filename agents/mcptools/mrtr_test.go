package mcptools

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestRequestStateRefusesWhatItDidNotIssue: a state opens only unchanged,
// under the key that sealed it, before it expires, for the caller and the
// call it was issued to; anything else is a -32602 error.
func TestRequestStateRefusesWhatItDidNotIssue(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rs := &RequestStates{Key: []byte(strings.Repeat("k", RequestStateKeySize)), TTL: time.Minute, Now: func() time.Time { return now }}
	call := callDigest("run_task", "wipe the bucket")
	state, err := rs.seal(requestState{Task: "t1", Call: call, Principal: "key:abc", Asks: map[string]stateAsk{"inputs": {Inputs: []string{"bucket"}}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rs.open(state, call, "key:abc")
	if err != nil || st.Task != "t1" || st.Asks["inputs"].Inputs[0] != "bucket" {
		t.Fatalf("open = %+v, %v", st, err)
	}
	body, mac, _ := strings.Cut(state, ".")
	flip := func(s string, i int) string {
		c := byte('A')
		if s[i] == 'A' {
			c = 'B'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	other := &RequestStates{Key: []byte(strings.Repeat("o", RequestStateKeySize)), TTL: time.Minute, Now: rs.Now}
	for _, tc := range []struct {
		name, state, call, principal string
		rs                           *RequestStates
		want                         string
	}{
		{"payload changed", flip(body, len(body)/2) + "." + mac, call, "key:abc", rs, "failed verification"},
		{"mac changed", body + "." + flip(mac, 3), call, "key:abc", rs, "failed verification"},
		{"no mac", body, call, "key:abc", rs, "failed verification"},
		{"another key", state, call, "key:abc", other, "failed verification"},
		{"another caller", state, call, "key:def", rs, "another caller"},
		{"another call", state, callDigest("run_task", "something else"), "key:abc", rs, "another call"},
		{"expired", state, call, "key:abc", &RequestStates{Key: rs.Key, Now: func() time.Time { return now.Add(time.Minute) }}, "expired"},
	} {
		_, err := tc.rs.open(tc.state, tc.call, tc.principal)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, tc.want) {
			t.Errorf("%s: err = %v, want -32602 saying %q", tc.name, err, tc.want)
		}
	}
}

// TestAnswersMapResponsesToAResume: accepted inputs (only the names asked),
// confirmations and refusals, declined inputs, and unanswered questions
// (left out, so that they are asked again).
func TestAnswersMapResponsesToAResume(t *testing.T) {
	st := &requestState{Asks: map[string]stateAsk{
		"inputs":    {Inputs: []string{"bucket"}},
		"confirm:a": {Step: "a"},
		"confirm:b": {Step: "b"},
		"confirm:c": {Step: "c"},
		"confirm:d": {Step: "d"},
	}}
	rr, declined := answers(st, mcp.InputResponseMap{
		"inputs":    &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": "logs", "admin": true}},
		"confirm:a": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}},
		"confirm:b": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}},
		"confirm:c": &mcp.ElicitResult{Action: "decline"},
		"unknown":   &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}},
	})
	if string(rr.Inputs) != `{"bucket":"logs"}` || strings.Join(rr.Confirm, ",") != "a" || strings.Join(rr.Reject, ",") != "b,c" || len(declined) != 0 {
		t.Errorf("answers = %s confirm %v reject %v declined %v", rr.Inputs, rr.Confirm, rr.Reject, declined)
	}
	rr, declined = answers(st, mcp.InputResponseMap{"inputs": &mcp.ElicitResult{Action: "cancel"}})
	if !emptyResume(rr) || strings.Join(declined, ",") != "bucket" {
		t.Errorf("a declined inputs question: %+v, declined %v", rr, declined)
	}
}

// TestMRTRModelReplaysByPurpose: a replayed request gets the answer
// recorded at its position when it is for the same purpose, whatever
// figures its prompt shows now; a request for another purpose there means
// the run took another path, so that answer and the later ones are
// dropped and the request is the one asked next.
func TestMRTRModelReplaysByPurpose(t *testing.T) {
	recorded := func() *mrtrLLM {
		return &mrtrLLM{
			asked:   []string{requestDigest("thought"), requestDigest("plan"), requestDigest("plan-repair")},
			answers: []sampleAnswer{{Text: "T"}, {Text: "P"}},
		}
	}
	ask := func(m *mrtrLLM, purpose, prompt string) (string, error) {
		res, err := m.Complete(t.Context(), &agentsmcp.LLMRequest{Purpose: purpose, System: prompt})
		if err != nil {
			return "", err
		}
		return res.Text, nil
	}
	m := recorded()
	if a, err := ask(m, "thought", "3 calls in all"); err != nil || a != "T" {
		t.Fatalf("thought = %q, %v; want the recorded answer", a, err)
	}
	if a, err := ask(m, "plan", "4 calls in all"); err != nil || a != "P" {
		t.Fatalf("plan = %q, %v; want the recorded answer", a, err)
	}
	if _, err := ask(m, "plan-repair", ""); !errors.Is(err, errSamplingStop) || m.diverged || len(m.asked) != 3 || len(m.answers) != 2 {
		t.Fatalf("the unanswered repair: err %v, diverged %v, %d asked, %d answers", err, m.diverged, len(m.asked), len(m.answers))
	}

	m = recorded()
	if _, err := ask(m, "thought", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(m, "plan-repair", ""); !errors.Is(err, errSamplingStop) || !m.diverged {
		t.Fatalf("another purpose at position 1: err %v, diverged %v; want a stop and a divergence", err, m.diverged)
	}
	if len(m.answers) != 1 || len(m.asked) != 2 || m.asked[1] != requestDigest("plan-repair") {
		t.Errorf("after the divergence: %d answers, asked %v; want the thought's answer kept and the repair asked", len(m.answers), m.asked)
	}
}
