package vectors

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The benchmarks in this file run on synthetic 384-dimensional clustered
// data (see dataset: 200 clusters, each spread along its own rank-16
// subspace), one query at a time, k = 10; BenchmarkQueryReal
// (realdata_test.go) runs on real text. Each iteration of BenchmarkQuery runs the whole query set
// and records every query's latency, so even -benchtime 1x yields
// percentiles. 1M vectors take minutes to build and ~5 GB of memory: set
// VECTORS_BENCH_1M=1 to include them.
//
//	go test -run '^$' -bench . -benchtime 1x ./memory/vectors/
const (
	benchDims     = 384
	benchClusters = 200
	benchRank     = 16
)

func benchSizes() []int {
	sizes := []int{10_000, 100_000}
	if os.Getenv("VECTORS_BENCH_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	return sizes
}

func sizeName(n int) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("n=%dM", n/1_000_000)
	}
	return fmt.Sprintf("n=%dk", n/1000)
}

type benchSet struct {
	qs    [][]float32
	flat  *Flat
	hnsw  *HNSW
	truth [][]string
	build time.Duration // HNSW build time

	mu      sync.Mutex
	flatP50 time.Duration // from the flat sub-benchmark of this run, if it ran
}

var (
	benchMu   sync.Mutex
	benchSets = map[int]*benchSet{}
)

// benchData builds the indexes for n vectors once per process.
func benchData(b *testing.B, n int) *benchSet {
	benchMu.Lock()
	defer benchMu.Unlock()
	if s := benchSets[n]; s != nil {
		return s
	}
	ctx := context.Background()
	nq := 1000
	if n >= 1_000_000 {
		nq = 200
	} else if n >= 100_000 {
		nq = 500
	}
	vs, qs := dataset(uint64(n), n, nq, benchDims, benchClusters, benchRank)
	s := &benchSet{qs: qs, flat: NewFlat(benchDims), hnsw: NewHNSW(benchDims, HNSWOptions{Seed: 1})}
	if err := s.flat.Upsert(ctx, "ns", vs); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < n; i += 10_000 {
		if err := s.hnsw.Upsert(ctx, "ns", vs[i:min(n, i+10_000)]); err != nil {
			b.Fatal(err)
		}
		if n >= 1_000_000 && (i/10_000)%10 == 9 {
			b.Logf("built %d in %v", i+10_000, time.Since(start).Round(time.Second))
		}
	}
	s.build = time.Since(start)
	for _, q := range qs {
		got, err := s.flat.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
		if err != nil {
			b.Fatal(err)
		}
		s.truth = append(s.truth, ids(got))
	}
	benchSets[n] = s
	return s
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		type variant struct {
			name string
			ef   int // -1: flat; 0: HNSW's default (tuned)
		}
		for _, v := range []variant{{"flat", -1}, {"hnsw-ef32", 32}, {"hnsw-ef64", 64}, {"hnsw", 0}, {"hnsw-ef128", 128}} {
			b.Run(sizeName(n)+"/"+v.name, func(b *testing.B) {
				s := benchData(b, n)
				var lat []time.Duration
				hits := 0
				for b.Loop() {
					for i, q := range s.qs {
						start := time.Now()
						var got []agentsmcp.VectorMatch
						var err error
						if v.ef < 0 {
							got, err = s.flat.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
						} else {
							got, err = s.hnsw.QueryEf(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}, v.ef)
						}
						lat = append(lat, time.Since(start))
						if err != nil {
							b.Fatal(err)
						}
						hits += overlap(ids(got), s.truth[i])
					}
				}
				slices.Sort(lat)
				p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
				b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
				b.ReportMetric(float64(hits)/float64(10*len(lat)), "recall@10")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(lat))/1e3, "µs/query")
				s.mu.Lock()
				defer s.mu.Unlock()
				if v.ef < 0 {
					s.flatP50 = p50
				} else {
					if v.ef == 0 {
						b.ReportMetric(float64(s.hnsw.EfSearch("ns")), "ef")
					}
					b.ReportMetric(s.build.Seconds(), "build-s")
					if s.flatP50 > 0 {
						b.ReportMetric(float64(p50)/float64(s.flatP50), "p50/flat")
					}
				}
			})
		}
	}
}

// BenchmarkQueryFiltered measures a filter on 2 % of the vectors (answered
// by an exact scan of its posting list) and one on a third (beam search
// that counts only matches).
func BenchmarkQueryFiltered(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		for _, f := range []struct {
			name   string
			filter func(i int) map[string]string
		}{
			{"2pct", func(i int) map[string]string { return map[string]string{"shard": fmt.Sprint(i % 50)} }},
			{"33pct", func(int) map[string]string { return map[string]string{"kind": "b"} }},
		} {
			b.Run(sizeName(n)+"/"+f.name, func(b *testing.B) {
				s := benchData(b, n)
				qs := s.qs[:min(len(s.qs), 200)]
				var truth [][]string
				for i, q := range qs {
					got, _ := s.flat.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: f.filter(i)})
					truth = append(truth, ids(got))
				}
				var lat []time.Duration
				hits := 0
				for b.Loop() {
					for i, q := range qs {
						start := time.Now()
						got, err := s.hnsw.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: f.filter(i)})
						lat = append(lat, time.Since(start))
						if err != nil {
							b.Fatal(err)
						}
						hits += overlap(ids(got), truth[i])
					}
				}
				slices.Sort(lat)
				b.ReportMetric(float64(percentile(lat, 0.5).Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(percentile(lat, 0.99).Nanoseconds())/1e3, "p99-µs")
				b.ReportMetric(float64(hits)/float64(10*len(lat)), "recall@10")
			})
		}
	}
}

// BenchmarkBuild measures inserting n vectors into an empty HNSW with the
// default parameters, in one batch.
func BenchmarkBuild(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		if n >= 1_000_000 {
			continue // BenchmarkQuery reports the 1M build time as build-s
		}
		b.Run(sizeName(n), func(b *testing.B) {
			vs, _ := dataset(uint64(n), n, 0, benchDims, benchClusters, benchRank)
			for b.Loop() {
				h := NewHNSW(benchDims, HNSWOptions{Seed: 1})
				if err := h.Upsert(ctx, "ns", vs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}
