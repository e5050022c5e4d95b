package main

// The soak benchmark (`make bench-soak`, -soak DURATION): one
// `agents-mcp serve` process on the embedded defaults, except
// audit.max_entries (-soak-max-entries, low enough to be reached within
// the soak), relaying the echo upstream to -soak-clients clients over
// streamable HTTP for the whole duration.
//
// Each minute is cut into slices (-soak-slice, 10 s): a relay window (the
// slice less the control window) and then a control window (-soak-control,
// 2 s) of direct calls to the upstream by as many clients, each window
// measured as the relay benchmark measures a round. The machine is shared,
// so a minute's figure that can be compared with another minute's is the
// relay/direct throughput ratio, not the relay's calls/s alone. At the end
// of each slice the store is read (audit rows), and at the end of each
// minute the serve process: resident set (VmRSS) and open file descriptors
// (/proc/PID), goroutines and the audit counters (its /metrics), the
// SQLite file and WAL sizes, and the load average.
//
// The verdict, against the soak's goal: throughput flat within 10 %
// (the relay/direct ratio of the last minute against the first minute
// after a warm-up minute), and the store bounded by audit.max_entries: the
// most audit rows seen at most the documented slack above it (the
// recorder checks the bound every max(max_entries/16, 256) entries
// written), and the store's bytes (file + WAL) at the end within 10 % of
// what they were at the end of the first minute in which the bound was
// reached.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite" // reads the serve process's store
)

// soakFlat is the largest change of the relay/direct ratio, last minute
// against the first after the warm-up, that still counts as flat; and the
// largest growth of the store's bytes once the bound is reached.
const soakFlat = 0.10

// sqliteFile is the store's file under the data dir
// (cmd/agents-mcp.SQLiteFile, which a command cannot import).
const sqliteFile = "agents-mcp.db"

type soakConfig struct {
	bin        string
	env        []string
	duration   time.Duration
	minute     time.Duration // the reporting period
	slice      time.Duration // a relay window and a control window
	control    time.Duration // the control window
	clients    int
	maxEntries int64
	out        io.Writer
}

// soakMinute is what one reporting period saw.
type soakMinute struct {
	relay, direct []sample
	rss           int64 // VmRSS at the end of the minute, bytes
	fds           int
	goroutines    float64
	store         storeStats // at the end of the minute
	maxRows       int64      // the most audit rows read at any slice end
	evicted       float64    // agents_mcp_audit_entries_evicted_total, cumulative
	dropped       float64    // agents_mcp_audit_entries_dropped_total + agents_mcp_tool_performance_dropped_total
	load1         float64
}

// storeStats is one read of the SQLite store.
type storeStats struct {
	dbBytes, walBytes int64
	rows              int64 // audit_entries
	freePages         int64 // freelist_count: pages deleted rows left for reuse
}

func (s storeStats) bytes() int64 { return s.dbBytes + s.walBytes }

// window sums samples: calls, calls per second over their time, CPU per
// call of the relay process, and latency percentiles.
func window(ss []sample) (calls int, perSec float64, cpu time.Duration, p50, p99 time.Duration) {
	var elapsed, cpuSum time.Duration
	var lat [][]time.Duration
	for _, s := range ss {
		calls += s.calls
		elapsed += s.elapsed
		cpuSum += s.cpuPerCall * time.Duration(s.calls)
		lat = append(lat, s.latencies)
	}
	if calls == 0 || elapsed <= 0 {
		return 0, 0, 0, 0, 0
	}
	p50, p99 = percentiles(slices.Concat(lat...))
	return calls, float64(calls) / elapsed.Seconds(), cpuSum / time.Duration(calls), p50, p99
}

// ratio is the minute's relay/direct throughput ratio.
func (m *soakMinute) ratio() float64 {
	_, r, _, _, _ := window(m.relay)
	_, d, _, _, _ := window(m.direct)
	if d == 0 {
		return 0
	}
	return r / d
}

// runSoak runs the soak and prints its table and verdict; ok is the
// verdict.
func runSoak(cfg soakConfig) (ok bool, err error) {
	if cfg.control <= 0 || cfg.slice <= cfg.control || cfg.minute%cfg.slice != 0 {
		return false, fmt.Errorf("soak: want 0 < control < slice and slices that divide a minute, got slice %s, control %s", cfg.slice, cfg.control)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "benchsoak")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	up, stopUp, err := startUpstream()
	if err != nil {
		return false, err
	}
	defer stopUp()
	direct := &target{name: "direct", tool: "echo", endpoints: map[string]string{"streamable": up + "/mcp"}}
	env := append(slices.Clone(cfg.env), fmt.Sprintf("AGENTS_MCP_AUDIT_MAX_ENTRIES=%d", cfg.maxEntries))
	relay, err := startAgents("agents-mcp", cfg.bin, env, filepath.Join(dir, "agents-mcp"), up+"/mcp")
	if err != nil {
		return false, err
	}
	defer relay.proc.stop()
	store, err := openStore(filepath.Join(dir, "agents-mcp", "data", sqliteFile))
	if err != nil {
		return false, err
	}
	defer store.Close()

	clients := map[string][]*mcp.ClientSession{}
	for _, t := range []*target{relay, direct} {
		cs, err := connect(ctx, "streamable", t.endpoints["streamable"], cfg.clients)
		if err != nil {
			return false, fmt.Errorf("%s: %w", t.name, err)
		}
		defer func() {
			for _, c := range cs {
				_ = c.Close()
			}
		}()
		for _, c := range cs {
			if err := callOnce(ctx, c, t.tool); err != nil {
				return false, fmt.Errorf("warm-up call to %s: %w", t.name, err)
			}
		}
		clients[t.name] = cs
	}

	w := cfg.out
	minutes := int((cfg.duration + cfg.minute - 1) / cfg.minute)
	fmt.Fprintf(w, "soak: %d clients over streamable HTTP, %d × %s, each %s slice %s relayed then %s direct; audit.max_entries %d; serve pid %d\n\n",
		cfg.clients, minutes, cfg.minute, cfg.slice, cfg.slice-cfg.control, cfg.control, cfg.maxEntries, relay.proc.cmd.Process.Pid)
	fmt.Fprintln(w, "| min | relay calls/s | p50 ms | p99 ms | direct calls/s | direct p50 ms | relay/direct | relay CPU µs/call | RSS MiB | goroutines | fds | audit rows (max) | db MiB | WAL MiB | free pages | evicted | dropped | load1 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var got []*soakMinute
	for i := range minutes {
		m := &soakMinute{}
		for range cfg.minute / cfg.slice {
			s := measure(ctx, relay, "streamable", clients[relay.name], cfg.slice-cfg.control)
			if s.failed != nil {
				return false, fmt.Errorf("minute %d, relayed: %w", i+1, s.failed)
			}
			d := measure(ctx, direct, "streamable", clients[direct.name], cfg.control)
			if d.failed != nil {
				return false, fmt.Errorf("minute %d, direct: %w", i+1, d.failed)
			}
			m.relay, m.direct = append(m.relay, s), append(m.direct, d)
			st, err := readStore(ctx, store)
			if err != nil {
				return false, err
			}
			m.store, m.maxRows = st, max(m.maxRows, st.rows)
		}
		m.sampleProcess(relay.proc)
		got = append(got, m)
		m.print(w, i+1)
	}
	return soakVerdict(w, got, cfg.maxEntries), nil
}

// sampleProcess reads the serve process's resident set, descriptors,
// goroutines and audit counters, and the load average.
func (m *soakMinute) sampleProcess(p *process) {
	pid := p.cmd.Process.Pid
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		m.rss = parseStatusKB(string(data), "VmRSS")
	}
	if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		m.fds = len(fds)
	}
	mt := p.scrape()
	m.goroutines = mt["go_goroutines"]
	m.evicted = mt["agents_mcp_audit_entries_evicted_total"]
	m.dropped = mt["agents_mcp_audit_entries_dropped_total"] + mt["agents_mcp_tool_performance_dropped_total"]
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			m.load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
}

func (m *soakMinute) print(w io.Writer, n int) {
	_, r, cpu, p50, p99 := window(m.relay)
	_, d, _, dp50, _ := window(m.direct)
	const mib = 1 << 20
	fmt.Fprintf(w, "| %d | %.0f | %.1f | %.1f | %.0f | %.1f | %.2f | %.0f | %.1f | %.0f | %d | %d (%d) | %.1f | %.1f | %d | %.0f | %.0f | %.1f |\n",
		n, r, ms(p50), ms(p99), d, ms(dp50), m.ratio(), us(cpu), float64(m.rss)/mib, m.goroutines, m.fds,
		m.store.rows, m.maxRows, float64(m.store.dbBytes)/mib, float64(m.store.walBytes)/mib, m.store.freePages,
		m.evicted, m.dropped, m.load1)
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// soakVerdict prints the verdict on minutes and returns it.
func soakVerdict(w io.Writer, minutes []*soakMinute, maxEntries int64) bool {
	fmt.Fprintln(w)
	ok := true
	judge := func(pass bool, format string, args ...any) {
		mark := "PASS"
		if !pass {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(w, "%s  %s\n", mark, fmt.Sprintf(format, args...))
	}

	if len(minutes) < 3 {
		judge(false, "throughput: not judged, it needs a warm-up minute and two more (got %d minutes)", len(minutes))
	} else {
		first, last := minutes[1], minutes[len(minutes)-1]
		_, fr, _, _, _ := window(first.relay)
		_, lr, _, _, _ := window(last.relay)
		change := last.ratio()/first.ratio() - 1
		judge(math.Abs(change) <= soakFlat,
			"throughput flat within %.0f %%: relay/direct %.2f in minute 2, %.2f in minute %d (%+.1f %%); relay alone %.0f → %.0f calls/s (%+.1f %%); trend over minutes 2–%d %+.1f %%",
			soakFlat*100, first.ratio(), last.ratio(), len(minutes), change*100, fr, lr, (lr/fr-1)*100, len(minutes), trend(minutes[1:])*100)
		_, _, fc, _, _ := window(first.relay)
		_, _, lc, _, _ := window(last.relay)
		fmt.Fprintf(w, "info  relay CPU per call %.0f µs in minute 2, %.0f µs in minute %d (%+.1f %%); RSS %.1f → %.1f MiB, goroutines %.0f → %.0f, fds %d → %d\n",
			us(fc), us(lc), len(minutes), (float64(lc)/float64(fc)-1)*100, float64(first.rss)/(1<<20), float64(last.rss)/(1<<20),
			first.goroutines, last.goroutines, first.fds, last.fds)
	}

	slack := max(maxEntries/16, 256)
	var peak int64
	reached := -1
	for i, m := range minutes {
		peak = max(peak, m.maxRows)
		if reached < 0 && m.maxRows >= maxEntries {
			reached = i
		}
	}
	switch {
	case reached < 0:
		judge(false, "store bounded: not judged, the audit trail never reached audit.max_entries %d (most rows %d): run longer or lower -soak-max-entries", maxEntries, peak)
	default:
		judge(peak <= maxEntries+slack, "audit rows bounded: at most %d seen against audit.max_entries %d (%+.1f %%; the recorder allows up to %d more between checks); %.0f evicted",
			peak, maxEntries, (float64(peak)/float64(maxEntries)-1)*100, slack, minutes[len(minutes)-1].evicted)
		if reached == len(minutes)-1 {
			judge(false, "store size: not judged, the bound was first reached in the last minute")
			break
		}
		base, end := minutes[reached].store, minutes[len(minutes)-1].store
		growth := float64(end.bytes())/float64(base.bytes()) - 1
		judge(growth <= soakFlat, "store stops growing: file + WAL %.1f MiB at the end of minute %d (bound first reached), %.1f MiB at the end (%+.1f %%, at most %+.0f %%)",
			float64(base.bytes())/(1<<20), reached+1, float64(end.bytes())/(1<<20), growth*100, soakFlat*100)
	}
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "verdict: %s\n", verdict)
	return ok
}

// trend is the least-squares slope of the minutes' relay/direct ratios,
// times the span, over their mean: the change across the span that the
// fitted line shows, steadier than the two ends alone.
func trend(minutes []*soakMinute) float64 {
	n := float64(len(minutes))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, m := range minutes {
		x, y := float64(i), m.ratio()
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return slope * (n - 1) / (sy / n)
}

// openStore opens the serve process's SQLite file read-only, which WAL
// lets a second process do while the first writes.
func openStore(path string) (*sql.DB, error) {
	q := url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(5000)"}}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: filepath.ToSlash(path)}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// readStore counts the audit rows and measures the file, the WAL and the
// free pages.
func readStore(ctx context.Context, db *sql.DB) (storeStats, error) {
	var st storeStats
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM audit_entries").Scan(&st.rows); err != nil {
		return st, fmt.Errorf("count audit rows: %w", err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&st.freePages); err != nil {
		return st, fmt.Errorf("freelist_count: %w", err)
	}
	var path string
	if err := db.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path); err != nil {
		return st, fmt.Errorf("store path: %w", err)
	}
	if fi, err := os.Stat(path); err == nil {
		st.dbBytes = fi.Size()
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		st.walBytes = fi.Size()
	}
	return st, nil
}
