package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestHarnessSmoke runs the harness's own parts for a moment against the
// direct target only (no relay process): the upstream over both client
// transports, a measurement, and the report. The benchmark itself is `make
// bench-relay`.
func TestHarnessSmoke(t *testing.T) {
	up, stop, err := serveUpstream()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	tg := &target{name: "direct", tool: "echo", endpoints: map[string]string{"streamable": up + "/mcp", "sse": up + "/sse"}}
	rep := &report{cfg: config{rounds: 1, per: 200 * time.Millisecond, conc: []int{2}, transports: []string{"streamable", "sse"}},
		targets: []string{"direct"}, samples: map[key][]sample{}}
	for _, tr := range rep.cfg.transports {
		clients, err := connect(ctx, tr, tg.endpoints[tr], 2)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		s := measure(ctx, tg, tr, clients, rep.cfg.per)
		for _, c := range clients {
			_ = c.Close()
		}
		if s.failed != nil || s.calls == 0 || s.p50 <= 0 || s.p99 < s.p50 {
			t.Fatalf("%s: %+v", tr, s)
		}
		rep.samples[key{tr, 2, "direct"}] = append(rep.samples[key{tr, 2, "direct"}], s)
	}
	var out strings.Builder
	rep.print(&out)
	for _, want := range []string{"| streamable | 2 | direct |", "| sse | 2 | direct |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPercentilesAndMedian(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i))
	}
	if p50, p99 := percentiles(d); p50 != 50 || p99 != 99 {
		t.Errorf("1..100: p50, p99 = %d, %d", p50, p99)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3,1,2 = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median of 4,1,2,3 = %v", m)
	}
}
