package vectors

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestHugeRange(t *testing.T) {
	const hp = hugePageSize
	for _, c := range []struct {
		p, n        uintptr
		off, length int
	}{
		{0, hp, 0, hp},                // exactly one page
		{1, hp, 0, 0},                 // misaligned: no whole page
		{1, 2 * hp, hp - 1, hp},       // the one whole page inside
		{hp - 8, 3*hp + 8, 8, 3 * hp}, // three whole pages
		{hp, 3*hp - 1, 0, 2 * hp},     // the tail is not whole
		{5 * hp, 0, 0, 0},             // empty
		{5*hp + 3, hp - 3, 0, 0},      // ends at a boundary, starts past one
	} {
		off, length := hugeRange(c.p, int(c.n))
		if off != c.off || length != c.length {
			t.Errorf("hugeRange(%#x, %#x) = %d, %d; want %d, %d", c.p, c.n, off, length, c.off, c.length)
		}
	}
}

// TestAdviseSlabsKeepsContents gives the advice to slabs large enough to
// hold whole huge pages and checks that their contents survive (the
// kernel may collapse them into huge pages meanwhile) and that a slab is
// advised again only once it moved.
func TestAdviseSlabsKeepsContents(t *testing.T) {
	g := &graph{qvals: make([]int8, 6<<20), qscale: make([]float32, 1<<20), links0: make([]uint32, 1<<20)}
	for i := range g.qvals {
		g.qvals[i] = int8(i * 7)
	}
	for i := range g.links0 {
		g.links0[i] = uint32(i)
	}
	g.adviseSlabs(true)
	for i, x := range g.qvals {
		if x != int8(i*7) {
			t.Fatalf("qvals[%d] = %d after the advice, want %d", i, x, int8(i*7))
		}
	}
	for i, x := range g.links0 {
		if x != uint32(i) {
			t.Fatalf("links0[%d] = %d after the advice, want %d", i, x, i)
		}
	}
	if g.advised[0].p != unsafe.Pointer(&g.qvals[0]) || g.advised[2].p != unsafe.Pointer(&g.links0[0]) {
		t.Fatalf("advised = %v, want the qvals and links0 arrays", g.advised)
	}
	g.qvals = append(g.qvals, make([]int8, 4<<20)...) // moves
	g.adviseSlabs(true)
	if g.advised[0].p != unsafe.Pointer(&g.qvals[0]) {
		t.Errorf("the grown qvals slab was not advised again")
	}
}

// anonHugeMB is the process's memory in transparent huge pages, in MB (-1
// when unknown).
func anonHugeMB() float64 {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return -1
			}
			return float64(kb) / 1024
		}
	}
	return -1
}

// BenchmarkHugePagesAB measures the huge-page advice before/after on one
// saved graph (VECTORS_BENCH_AB_FILE, e.g. a file the real-text
// benchmarks left in VECTORS_BENCH_CACHE): it loads the file twice, once
// without the advice and once with it, and answers the same queries (1,000
// of the graph's own rows, each left out of its own search) on both,
// alternating query by query so that the machine's load hits both alike.
// It reports each one's median CPU time per query, their ratio, the
// similarities per query (equal on both: the graphs are the same) and the
// memory in huge pages after each load. VECTORS_BENCH_AB_EF is the beam
// width, default 128.
func BenchmarkHugePagesAB(b *testing.B) {
	path := os.Getenv("VECTORS_BENCH_AB_FILE")
	if path == "" {
		b.Skip("set VECTORS_BENCH_AB_FILE to a saved index")
	}
	ef := 128
	if v := os.Getenv("VECTORS_BENCH_AB_EF"); v != "" {
		var err error
		if ef, err = strconv.Atoi(v); err != nil || ef <= 0 {
			b.Fatalf("VECTORS_BENCH_AB_EF=%q: want a positive integer", v)
		}
	}
	defer func(was bool) { hugePages = was }(hugePages)
	load := func(advise bool) (*HNSW, float64) {
		hugePages = advise
		h, err := LoadHNSW(path)
		if err != nil {
			b.Fatal(err)
		}
		return h, anonHugeMB()
	}
	before, hugeBefore := load(false)
	after, hugeAfter := load(true)
	var ns string
	for name := range before.namespaces {
		ns = name
	}
	g := before.space(ns, false).g
	step := max(1, len(g.ids)/1000)
	var qs [][]float32
	for i := 0; i < len(g.ids) && len(qs) < 1000; i += step {
		qs = append(qs, slices.Clone(g.vec(uint32(i))))
	}
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu [2][]time.Duration
	var sims [2]int
	for b.Loop() {
		for i, q := range qs {
			for k := range 2 {
				side := (i + k) % 2 // alternate which goes first
				h := []*HNSW{before, after}[side]
				c0 := threadCPU()
				if _, err := h.queryCounting(ctx, ns, agentsmcp.VectorQuery{Values: q, TopK: 10}, ef, &sims[side]); err != nil {
					b.Fatal(err)
				}
				cpu[side] = append(cpu[side], threadCPU()-c0)
			}
		}
	}
	for k := range cpu {
		slices.Sort(cpu[k])
	}
	p50 := [2]time.Duration{percentile(cpu[0], 0.5), percentile(cpu[1], 0.5)}
	b.ReportMetric(float64(p50[0].Nanoseconds())/1e3, "before-cpu-p50-µs")
	b.ReportMetric(float64(p50[1].Nanoseconds())/1e3, "after-cpu-p50-µs")
	b.ReportMetric(float64(p50[1])/float64(p50[0]), "after/before")
	b.ReportMetric(float64(sims[0])/float64(len(cpu[0])), "before-sims/query")
	b.ReportMetric(float64(sims[1])/float64(len(cpu[1])), "after-sims/query")
	b.ReportMetric(hugeBefore, "huge-MB-after-1st-load")
	b.ReportMetric(hugeAfter, "huge-MB-after-2nd-load")
}
