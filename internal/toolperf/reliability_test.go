package toolperf_test

import (
	"math"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

var relT0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// evidence records outcomes ("s" or "f") one minute apart from relT0, as a
// store would, and returns the evidence and the time of the last one.
func evidence(outcomes string) (toolperf.ReliabilityEvidence, time.Time) {
	var e toolperf.ReliabilityEvidence
	t := relT0
	for i, o := range outcomes {
		t = relT0.Add(time.Duration(i) * time.Minute)
		failed := o == 'f'
		e.Recent = toolperf.AddOutcome(e.Recent, t, failed)
		if failed {
			e.ConsecutiveFailures++
			e.LastFailureAt, e.LastErrorClass = t, "service unavailable (503)"
		} else {
			e.ConsecutiveFailures = 0
			e.LastSuccessAt = t
		}
	}
	return e, t
}

func repeat(s string, n int) (out string) {
	for range n {
		out += s
	}
	return out
}

func TestReliabilityPrior(t *testing.T) {
	p := toolperf.DefaultReliabilityPolicy
	r := toolperf.Estimate(p, toolperf.ReliabilityEvidence{}, relT0)
	if r.Estimate != 0.5 || r.CoolingDown || r.ProbeDue {
		t.Errorf("a tool never called: %+v, want 0.5 and no cool-down", r)
	}
	if got := toolperf.Prior((toolperf.ReliabilityPolicy{PriorSuccesses: 3, PriorFailures: 1})); got != 0.75 {
		t.Errorf("prior 3:1 = %v, want 0.75", got)
	}
	// Evidence moves the estimate away from the prior, more with more.
	e, now := evidence("sss")
	if got := toolperf.Estimate(p, e, now).Estimate; math.Abs(got-0.8) > 1e-3 {
		t.Errorf("3 successes: %v, want (1+3)/(2+3) = 0.8", got)
	}
	e, now = evidence(repeat("f", 30))
	failing := toolperf.Estimate(p, e, now)
	if math.Abs(failing.Estimate-1.0/32) > 1e-3 {
		t.Errorf("0 successes in 30: %v, want 1/32", failing.Estimate)
	}
	// The case: 0 of 30 ranks below an untried tool even when its
	// search score is several times higher.
	if 1.0*failing.Estimate >= 0.253*toolperf.Prior(p) {
		t.Errorf("0 of 30 at search score 1 (%v) still beats an untried tool at 0.253 (%v)", failing.Estimate, 0.253*toolperf.Prior(p))
	}
}

func TestReliabilityDecayAndRecovery(t *testing.T) {
	p := toolperf.DefaultReliabilityPolicy
	e, last := evidence(repeat("f", 20))
	atOnce := toolperf.Estimate(p, e, last).Estimate
	dayLater := toolperf.Estimate(p, e, last.Add(agentsmcp.ReliabilityHalfLife))
	if math.Abs(dayLater.Failures-10) > 0.1 {
		t.Errorf("a half-life later 20 failures weigh %v, want about 10", dayLater.Failures)
	}
	weekLater := toolperf.Estimate(p, e, last.Add(7*agentsmcp.ReliabilityHalfLife)).Estimate
	if !(atOnce < dayLater.Estimate && dayLater.Estimate < weekLater && weekLater > 0.4) {
		t.Errorf("old failures do not fade: %v at once, %v a day later, %v a week later", atOnce, dayLater.Estimate, weekLater)
	}
	// The tool recovers: successes a day later outweigh the old failures.
	for i := range 10 {
		at := last.Add(agentsmcp.ReliabilityHalfLife + time.Duration(i)*time.Minute)
		e.Recent = toolperf.AddOutcome(e.Recent, at, false)
		e.ConsecutiveFailures, e.LastSuccessAt = 0, at
	}
	back := toolperf.Estimate(p, e, e.LastSuccessAt)
	if back.Estimate <= 0.5 || back.CoolingDown || back.ProbeDue {
		t.Errorf("after 10 successes a day on: %+v, want above 0.5 and no cool-down", back)
	}
}

func TestReliabilityCoolDownAndProbe(t *testing.T) {
	p := toolperf.ReliabilityPolicy{FailureStreak: 3, CoolDown: time.Minute, MaxCoolDown: 4 * time.Minute}
	e, last := evidence("sff")
	if r := toolperf.Estimate(p, e, last); r.CoolingDown || r.ProbeDue {
		t.Errorf("two failures in a row: %+v, want no cool-down yet", r)
	}
	e, last = evidence("sfff")
	tests := []struct {
		after               time.Duration
		coolingDown, probes bool
	}{
		{0, true, false},
		{59 * time.Second, true, false},
		{time.Minute, false, true},
		{time.Hour, false, true},
	}
	for _, tt := range tests {
		r := toolperf.Estimate(p, e, last.Add(tt.after))
		if r.CoolingDown != tt.coolingDown || r.ProbeDue != tt.probes || r.ConsecutiveFailures != 3 || r.LastErrorClass == "" {
			t.Errorf("%v after the third failure: %+v, want cooling down %v, probe due %v", tt.after, r, tt.coolingDown, tt.probes)
		}
	}
	// A failed probe starts a longer cool-down, doubling up to the cap.
	for streak, want := range map[int64]time.Duration{3: time.Minute, 4: 2 * time.Minute, 5: 4 * time.Minute, 6: 4 * time.Minute, 40: 4 * time.Minute} {
		if got := toolperf.CoolDownAfter(p, streak); got != want {
			t.Errorf("cool-down after %d failures: %v, want %v", streak, got, want)
		}
	}
	e, last = evidence("sffff")
	if r := toolperf.Estimate(p, e, last.Add(time.Minute)); !r.CoolingDown || !r.CoolDownUntil.Equal(last.Add(2*time.Minute)) {
		t.Errorf("a minute after a failed probe: %+v, want cooling down until %v", r, last.Add(2*time.Minute))
	}
	// A successful probe ends the streak at once.
	e, last = evidence("sffffs")
	if r := toolperf.Estimate(p, e, last); r.CoolingDown || r.ProbeDue || r.ConsecutiveFailures != 0 {
		t.Errorf("after a successful probe: %+v, want no cool-down", r)
	}
}

func TestDecayedCountsStayFinite(t *testing.T) {
	var c agentsmcp.DecayedCounts
	c = toolperf.AddOutcome(c, relT0, true)
	far := relT0.Add(5000 * agentsmcp.ReliabilityHalfLife)
	if got := toolperf.DecayedAs(c, far); got.Failures != 0 || math.IsNaN(got.Failures) {
		t.Errorf("5000 half-lives on: %+v, want faded to 0", got)
	}
	if got := toolperf.DecayedAs((agentsmcp.DecayedCounts{}), far); got.Successes != 0 || got.Failures != 0 || !got.At.Equal(far) {
		t.Errorf("no counts as of %v: %+v", far, got)
	}
}
