package vectors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// BenchmarkQueryRealScale grows one index past the real corpus, towards
// 1M, and measures it at each size of VECTORS_BENCH_SCALE (comma-separated,
// e.g. 250000,500000,1000000; the benchmark is skipped when it is unset).
//
// The corpus has about 161k documents, so beyond it the documents are
// generated from it: the first half of the words of one random real
// description followed by the second half of another's. They keep the
// corpus's vocabulary, lengths and word statistics, and every generated
// text shares words with two real ones, so neighbourhoods overlap as in
// real text rather than forming tight clusters; they are not real
// descriptions. The real documents come first, then the generated ones.
// Embedded with the dense stand-in (256 dims) unless
// VECTORS_BENCH_SCALE_EMBEDDER names another (hash, semantic); the queries
// are the 1,000 held-out real descriptions. Flat and HNSW grow together; at
// each size both answer every query (Flat for the truth and its latency),
// HNSW at its tuned ef and at fixed ones.
//
// VECTORS_BENCH_SCALE_CACHE, a directory, keeps the HNSW index built at
// each size there (the build dominates the run: half an hour at 1M) and
// loads it instead of building when a file of that embedder, size and
// graph setting is already there; Flat is still filled, from the same
// texts in the same order.
//
//	VECTORS_BENCH_SCALE=250000,500000,1000000 go test -run '^$' -bench QueryRealScale -benchtime 1x -timeout 3h ./memory/vectors/
func BenchmarkQueryRealScale(b *testing.B) {
	env := os.Getenv("VECTORS_BENCH_SCALE")
	if env == "" {
		b.Skip("set VECTORS_BENCH_SCALE, e.g. 250000,500000,1000000")
	}
	var sizes []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			b.Fatalf("VECTORS_BENCH_SCALE=%q: want positive integers", env)
		}
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	ctx := context.Background()
	e := scaleEmbedder(b)
	cacheDir := os.Getenv("VECTORS_BENCH_SCALE_CACHE")
	docs, queries := realCorpus(b)
	qs := make([][]float32, len(queries))
	for i, q := range queries {
		qs[i] = e.fn(q)
	}
	words := make([][]string, len(docs))
	for i, d := range docs {
		words[i] = strings.Fields(d)
	}
	r := rand.New(rand.NewPCG(17, 1))
	text := func(j int) string {
		if j < len(docs) {
			return docs[j]
		}
		a, c := words[r.IntN(len(words))], words[r.IntN(len(words))]
		return strings.Join(append(slices.Clip(a[:(len(a)+1)/2]), c[len(c)/2:]...), " ")
	}
	opts := benchHNSWOptions(b)
	flat, h := NewFlat(e.dims), NewHNSW(e.dims, opts)
	next := 0
	var build time.Duration
	for _, n := range sizes {
		cached := ""
		if cacheDir != "" {
			cached = filepath.Join(cacheDir, scaleCacheName(e.name, n, h.Options()))
		}
		loaded := false
		if cached != "" {
			switch l, err := LoadHNSW(cached); {
			case err == nil:
				h, loaded = l, true
				b.Logf("n=%d: HNSW loaded from %s", n, cached)
			case !errors.Is(err, fs.ErrNotExist):
				b.Fatal(err)
			}
		}
		for next < n {
			chunk := min(10_000, n-next)
			texts := make([]string, chunk)
			for i := range texts {
				texts[i] = text(next + i)
			}
			vs := make([]agentsmcp.Vector, chunk)
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Go(func() {
					for i := w; i < chunk; i += 2 {
						vs[i] = agentsmcp.Vector{ID: "d" + strconv.Itoa(next+i), Values: e.fn(texts[i])}
					}
				})
			}
			wg.Wait()
			if err := flat.Upsert(ctx, "ns", vs); err != nil {
				b.Fatal(err)
			}
			if !loaded {
				start := time.Now()
				if err := h.Upsert(ctx, "ns", vs); err != nil {
					b.Fatal(err)
				}
				build += time.Since(start)
			}
			next += chunk
			if next%50_000 == 0 && !loaded {
				// Progress for a run of hours, as it happens (b.Logf
				// prints only at the end).
				fmt.Fprintf(os.Stderr, "%s: %d inserted, build %v\n", time.Now().UTC().Format(time.TimeOnly), next, build.Round(time.Second))
			}
		}
		if cached != "" && !loaded {
			if err := h.Save(cached); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		h.Tune()
		tune := time.Since(start)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		indexMB := float64(h.sizeBytes("ns")) / 1e6
		b.Logf("n=%d: HNSW build so far %v, tune %v, tuned ef %d; HNSW arrays %.0f MB, Go heap in use %.0f MB (Flat and HNSW)",
			n, build, tune, h.EfSearch("ns"), indexMB, float64(ms.HeapInuse)/1e6)
		truth := make([][]agentsmcp.VectorMatch, len(qs))
		var flatP50 time.Duration
		efs := []int{-1, 0, 64, 128, 192, 256}
		if os.Getenv("VECTORS_BENCH_EFS") != "" {
			efs = benchEfs(b)
		}
		for _, ef := range efs {
			name := queryVariant(ef)
			b.Run(e.name+"-mix/"+sizeName(n)+"/"+name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var lat, cpu []time.Duration
				hits, sims := 0, 0
				for b.Loop() {
					for i, q := range qs {
						c0, start := threadCPU(), time.Now()
						var got []agentsmcp.VectorMatch
						var err error
						if ef < 0 {
							got, err = flat.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
							truth[i] = got
						} else {
							got, err = h.queryCounting(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}, ef, &sims)
						}
						lat, cpu = append(lat, time.Since(start)), append(cpu, threadCPU()-c0)
						if err != nil {
							b.Fatal(err)
						}
						hits += realHits(got, truth[i])
					}
				}
				slices.Sort(lat)
				slices.Sort(cpu)
				p50 := percentile(lat, 0.5)
				b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(percentile(lat, 0.99).Nanoseconds())/1e3, "p99-µs")
				b.ReportMetric(float64(percentile(cpu, 0.5).Nanoseconds())/1e3, "cpu-p50-µs")
				b.ReportMetric(float64(hits)/float64(10*len(lat)), "recall@10")
				if ef >= 0 {
					b.ReportMetric(float64(sims)/float64(len(lat)), "sims/query")
				}
				switch {
				case ef < 0:
					flatP50 = p50
				case ef == 0:
					b.ReportMetric(float64(h.EfSearch("ns")), "ef")
					b.ReportMetric(build.Seconds(), "build-s")
					b.ReportMetric(tune.Seconds(), "tune-s")
					b.ReportMetric(indexMB, "index-MB")
				}
				if ef >= 0 && flatP50 > 0 {
					b.ReportMetric(float64(p50)/float64(flatP50), "p50/flat")
				}
			})
		}
	}
}

// scaleEmbedder is BenchmarkQueryRealScale's embedder:
// VECTORS_BENCH_SCALE_EMBEDDER (dense, hash or semantic), default dense.
func scaleEmbedder(b *testing.B) realEmbedder {
	switch v := os.Getenv("VECTORS_BENCH_SCALE_EMBEDDER"); v {
	case "", "dense":
		return denseEmbedder()
	case "hash":
		return hashEmbedder()
	case "semantic":
		return semanticEmbedder()
	default:
		b.Fatalf("VECTORS_BENCH_SCALE_EMBEDDER=%q: want dense, hash or semantic", v)
		return realEmbedder{}
	}
}

// scaleCacheName names the cached index of BenchmarkQueryRealScale at n
// documents: every input of the build is in it, so a file is reused only
// for the same graph.
func scaleCacheName(embedder string, n int, o HNSWOptions) string {
	return fmt.Sprintf("scale-%s-%d-m%d-efc%d-%s.hnsw", embedder, n, o.M, o.EfConstruction, benchGraphVariant())
}

// benchGraphVariant names the experiment switches of benchHNSWOptions that
// change the graph: "default" when none is set.
func benchGraphVariant() string {
	v := ""
	if pruneAlpha != 1 {
		v += fmt.Sprintf("alpha%g", pruneAlpha)
	}
	if keepPruned {
		v += "kp"
	}
	if fullLayer0 {
		v += "l0"
	}
	if layer0Cap > 0 {
		v += fmt.Sprintf("m0-%d", layer0Cap)
	}
	if v == "" {
		return "default"
	}
	return v
}

// sizeBytes is the size of a namespace's graph arrays (vectors in both
// forms, links, levels, tombstones), without ids, metadata and maps.
func (h *HNSW) sizeBytes(namespace string) int {
	sp := h.space(namespace, false)
	if sp == nil {
		return 0
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	g := sp.g
	n := 4*len(g.values) + len(g.qvals) + 4*len(g.qscale) + 4*len(g.links0) + len(g.levels) + len(g.dead)
	for _, up := range g.upper {
		n += 4 * len(up)
	}
	return n
}
