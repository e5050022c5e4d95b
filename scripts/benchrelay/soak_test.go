package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeMinute is a minute in which the relay made relay calls/s and the
// control direct calls/s, the audit trail peaked at rows and the store
// held bytes at its end.
func fakeMinute(relay, direct float64, rows, bytes int64) *soakMinute {
	s := func(perSec float64) sample {
		return sample{calls: int(perSec * 10), elapsed: 10 * time.Second, latencies: []time.Duration{time.Millisecond, 2 * time.Millisecond}}
	}
	return &soakMinute{relay: []sample{s(relay)}, direct: []sample{s(direct)}, maxRows: rows,
		store: storeStats{rows: rows, dbBytes: bytes}}
}

// TestSoakVerdict judges made-up minutes: a flat ratio and a bounded
// store pass, and each way of missing the goal fails with its reason.
func TestSoakVerdict(t *testing.T) {
	const bound = 1000
	flat := []*soakMinute{
		fakeMinute(500, 1000, 600, 100),  // warm-up, not judged
		fakeMinute(800, 1000, 1000, 200), // 0.80; bound reached
		fakeMinute(600, 800, 1050, 205),  // machine slower, same ratio
		fakeMinute(900, 1200, 1062, 210), // 0.75: -6 %
	}
	for _, tc := range []struct {
		name    string
		minutes []*soakMinute
		ok      bool
		want    string
	}{
		{"flat and bounded", flat, true, "verdict: PASS"},
		{"ratio falls", append(flat[:3:3], fakeMinute(600, 1000, 1000, 210)), false, "FAIL  throughput flat"},
		{"ratio rises", append(flat[:3:3], fakeMinute(1000, 1000, 1000, 210)), false, "FAIL  throughput flat"},
		{"too short", flat[:2], false, "throughput: not judged"},
		{"rows over the slack", append(flat[:3:3], fakeMinute(600, 800, bound+257, 210)), false, "FAIL  audit rows bounded"},
		{"bound never reached", []*soakMinute{fakeMinute(1, 1, 10, 1), fakeMinute(1, 1, 20, 2), fakeMinute(1, 1, 999, 3)}, false, "never reached"},
		{"bound reached at the end", append(flat[:1:1], fakeMinute(800, 1000, 900, 200), fakeMinute(800, 1000, 1000, 200)), false, "first reached in the last minute"},
		{"store grows", append(flat[:3:3], fakeMinute(600, 800, 1000, 221)), false, "FAIL  store stops growing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if ok := soakVerdict(&out, tc.minutes, bound); ok != tc.ok {
				t.Errorf("ok = %v, want %v:\n%s", ok, tc.ok, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("lacks %q:\n%s", tc.want, out.String())
			}
		})
	}
}

// TestTrend fits a line through the ratios: a fall of a fifth across the
// span reads -20 %, whatever the noise around the line.
func TestTrend(t *testing.T) {
	ms := []*soakMinute{fakeMinute(1000, 1000, 0, 0), fakeMinute(950, 1000, 0, 0), fakeMinute(800, 1000, 0, 0)}
	// ratios 1.0, 0.95, 0.8: slope -0.1/min over a mean of 0.9167, span 2.
	if got := trend(ms); got < -0.2183 || got > -0.2181 {
		t.Errorf("trend = %v, want -0.2182", got)
	}
	if got := trend(ms[:1]); got != 0 {
		t.Errorf("one minute: %v", got)
	}
}

// TestWindow sums windows: calls over their total time, CPU per call
// weighted by calls, latencies pooled.
func TestWindow(t *testing.T) {
	ss := []sample{
		{calls: 100, elapsed: time.Second, cpuPerCall: 100 * time.Microsecond, latencies: []time.Duration{1, 2, 3}},
		{calls: 300, elapsed: 3 * time.Second, cpuPerCall: 200 * time.Microsecond, latencies: []time.Duration{4}},
	}
	calls, perSec, cpu, p50, p99 := window(ss)
	if calls != 400 || perSec != 100 || cpu != 175*time.Microsecond || p50 != 2 || p99 != 4 {
		t.Errorf("got %d calls, %v/s, cpu %v, p50 %v, p99 %v", calls, perSec, cpu, p50, p99)
	}
	if calls, perSec, _, _, _ := window(nil); calls != 0 || perSec != 0 {
		t.Errorf("no samples: %d, %v", calls, perSec)
	}
}

// TestParseMetrics reads unlabelled series and skips comments and
// labelled ones.
func TestParseMetrics(t *testing.T) {
	text := "# HELP go_goroutines x\n# TYPE go_goroutines gauge\ngo_goroutines 96\n" +
		"agents_mcp_tool_calls_total{tool=\"go__echo\"} 5\nagents_mcp_audit_entries_evicted_total 1.5e+06\nbroken\n"
	m := parseMetrics(strings.NewReader(text))
	if len(m) != 2 || m["go_goroutines"] != 96 || m["agents_mcp_audit_entries_evicted_total"] != 1.5e6 {
		t.Errorf("got %v", m)
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tagents-mcp\nVmHWM:\t   81920 kB\nVmRSS:\t 70000 kB\n"
	if got := parseStatusKB(status, "VmRSS"); got != 70000*1024 {
		t.Errorf("VmRSS: got %d", got)
	}
	if got := parseStatusKB(status, "VmSwap"); got != 0 {
		t.Errorf("absent: got %d", got)
	}
}

// TestReadStore reads a WAL store written through another connection, as
// the soak reads the serve process's: rows, file and WAL sizes.
func TestReadStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqliteFile)
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE TABLE audit_entries (id INTEGER PRIMARY KEY)", "INSERT INTO audit_entries VALUES (1), (2), (3)"} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r, err := openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st, err := readStore(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if st.rows != 3 || st.dbBytes == 0 || st.walBytes == 0 {
		t.Errorf("got %+v", st)
	}
}
