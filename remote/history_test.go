package remote

import (
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

// TestHistoryRecordsTransitionsInOrder takes a real upstream down and back
// twice: the history has each change of state once, in order, with
// redacted reasons, and never more than Options.StateHistory entries.
func TestHistoryRecordsTransitionsInOrder(t *testing.T) {
	t.Parallel()
	const bound = 7
	opts := fastOptions()
	opts.StateHistory = bound
	e := newEnv(t, opts)
	fx := newFixture("flap")
	t.Cleanup(fx.releaseAll)
	hs := serveStreamable(t, fx.server)
	const secret = "history-s3cr3t"
	e.add(streamableConfig("flap", hs.URL()+"?key="+secret))

	history := func() []agentsmcp.UpstreamTransition {
		t.Helper()
		h, ok := e.pool.History("flap")
		if !ok {
			t.Fatal("no history for flap")
		}
		for i, tr := range h {
			if tr.Reason == "" || tr.At.IsZero() || strings.Contains(tr.Reason, secret) {
				t.Errorf("transition %d: %+v", i, tr)
			}
			if i > 0 && (tr.State == h[i-1].State || tr.At.Before(h[i-1].At)) {
				t.Errorf("transitions %d and %d are out of order or repeat a state: %+v, %+v", i-1, i, h[i-1], tr)
			}
		}
		return h
	}
	// cycle stops the upstream, lets the pool retry it a few times while
	// it is down (each attempt has a new reason, and is no transition), and
	// starts it again.
	cycle := func() {
		t.Helper()
		hs.stop()
		e.waitState("flap", StateDown, 10*time.Second)
		testutil.Eventually(t, 10*time.Second, "flap failed again while down", func() bool { return e.status("flap").FailedAttempts >= 3 })
		hs.start()
		e.waitState("flap", StateReady, 10*time.Second)
	}

	h0 := history()
	if len(h0) != 2 || h0[0].State != StateConnecting || h0[0].Reason != "first connection in progress" || h0[1].State != StateReady {
		t.Fatalf("history once ready: %+v", h0)
	}
	if st := e.status("flap"); !h0[1].At.Equal(st.Since) || h0[1].Reason != st.Reason {
		t.Errorf("last transition %+v, status since %v: %q", h0[1], st.Since, st.Reason)
	}

	// Down and back: ready, then connecting or degraded as the session is
	// lost, down once whatever the number of failed attempts, ready again.
	cycle()
	h1 := history()
	if len(h1) > bound || !slices.Equal(h1[:2], h0) || h1[len(h1)-1].State != StateReady {
		t.Fatalf("history after a recovery: %+v", h1)
	}
	downs := 0
	for _, tr := range h1[2 : len(h1)-1] {
		switch tr.State {
		case StateDown:
			downs++
			if !strings.HasPrefix(tr.Reason, "cannot connect: ") {
				t.Errorf("down for %q", tr.Reason)
			}
		case StateConnecting, StateDegraded:
		default:
			t.Errorf("%s while going down: %+v", tr.State, h1)
		}
	}
	if downs != 1 || h1[len(h1)-2].State != StateDown {
		t.Errorf("history after a recovery, with %d downs: %+v", downs, h1)
	}

	// Down and back again: at least three more transitions, so the oldest
	// are dropped and the rest keep their order.
	cycle()
	h2 := history()
	if len(h2) != bound || h2[len(h2)-1].State != StateReady || h2[len(h2)-2].State != StateDown {
		t.Fatalf("history after two recoveries (bound %d): %+v", bound, h2)
	}
	last := h1[len(h1)-1].At
	old := 0 // the entries of h2 that h1 had: its tail
	for old < len(h2) && !h2[old].At.After(last) {
		old++
	}
	if h2[0] == h0[0] || old > len(h1) || !slices.Equal(h2[:old], h1[len(h1)-old:]) {
		t.Errorf("history after two recoveries is not the tail of the one before (%+v) and the new transitions: %+v", h1, h2)
	}

	if _, ok := e.pool.History("nothere"); ok {
		t.Error("History of an unknown upstream is ok")
	}
}
