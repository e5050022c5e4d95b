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

// TestVariantFlag parses -variant values and refuses malformed ones.
func TestVariantFlag(t *testing.T) {
	var v variantFlag
	if err := v.Set("memlimit=GOMEMLIMIT=256MiB,GOGC=off"); err != nil {
		t.Fatal(err)
	}
	if len(v) != 1 || v[0].name != "agents-mcp-memlimit" || strings.Join(v[0].env, " ") != "GOMEMLIMIT=256MiB GOGC=off" {
		t.Errorf("got %+v", v)
	}
	for _, bad := range []string{"", "x", "=GOGC=1", "x=", "x=GOGC", "x=GOGC=1,=2"} {
		if err := v.Set(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseHWM reads the peak RSS line of /proc/PID/status.
func TestParseHWM(t *testing.T) {
	status := "Name:\tagents-mcp\nVmPeak:\t 2000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t 70000 kB\n"
	if got := parseHWM(status); got != 81920*1024 {
		t.Errorf("got %d", got)
	}
	if got := parseHWM("VmHWM: lots\n"); got != 0 {
		t.Errorf("garbage: got %d", got)
	}
}
