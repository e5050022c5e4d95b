package vectors

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/embed"
)

// realTextCorpus is one real-text corpus of the vector benchmarks: a
// gzip-compressed file of short texts, one per line, deduplicated
// (case-insensitively) and shuffled, whose last realQueries lines are held
// out as queries and never indexed.
type realTextCorpus struct {
	name   string
	path   string
	source string // what the texts are and how to write the file again
}

// realTextCorpora are three corpora of different sources, each written by
// scripts/vectorcorpus from what this machine's packages ship and
// committed, since the sources move with what is installed.
var realTextCorpora = []realTextCorpus{
	{"debian-go", realCorpusPath, "Debian package descriptions and Go doc sentences: apt-cache dumpavail | go run ./scripts/vectorcorpus"},
	{"man", "testdata/manpages.txt.gz", "manual pages' NAME lines and first sentences of their paragraphs: go run ./scripts/vectorcorpus -source man"},
	{"python", "testdata/pydocs.txt.gz", "first sentences of Python docstrings (standard library and installed packages): go run ./scripts/vectorcorpus -source python"},
}

// split returns the corpus's indexed documents and held-out queries.
func (c realTextCorpus) split() (docs, queries []string, err error) {
	lines, err := corpusLines(c.path)
	if err != nil {
		return nil, nil, err
	}
	if len(lines) <= realQueries {
		return nil, nil, errors.New(c.path + ": " + strconv.Itoa(len(lines)) + " lines, too few to hold out " + strconv.Itoa(realQueries) + " queries")
	}
	n := len(lines) - realQueries
	return lines[:n:n], lines[n:], nil
}

// semanticEmbedder is the default semantic embedder, [embed.Semantic].
func semanticEmbedder() realEmbedder {
	s := embed.Semantic{}
	return realEmbedder{"semantic", embed.SemanticDimensions, func(text string) []float32 {
		v, err := s.Embed(context.Background(), []string{text})
		if err != nil {
			panic(err)
		}
		return v[0]
	}}
}

// corporaSizeFromEnv is the index size of BenchmarkQueryRealCorpora:
// VECTORS_BENCH_CORPORA_N, default 100k. A corpus with fewer documents is
// indexed whole (the sub-benchmark's name and its docs metric say how many).
func corporaSizeFromEnv(b *testing.B) int {
	v := os.Getenv("VECTORS_BENCH_CORPORA_N")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("VECTORS_BENCH_CORPORA_N=%q: want a positive integer", v)
	}
	return n
}

// BenchmarkQueryRealCorpora is the vector index on three real-text corpora
// of different sources (realTextCorpora) × two embedders (the hash one and
// the default semantic one): the first n documents of each corpus
// (VECTORS_BENCH_CORPORA_N, default 100k, or all of a smaller corpus)
// indexed, its 1,000 held-out lines as queries, k = 10, one query at a
// time. Flat (exact) and HNSW are built on the same vectors in the same
// run; recall@10 is HNSW's against Flat's answer. "hnsw" is the default
// (tuned beam width, reported as ef), "hnsw-efN" a fixed one. One
// corpus × embedder is held in memory at a time, and each variant makes
// one pass over the queries (so run it with -benchtime 1x).
//
//	VECTORS_BENCH_CORPORA_N=20000 go test -run '^$' -bench QueryRealCorpora -benchtime 1x ./memory/vectors/
func BenchmarkQueryRealCorpora(b *testing.B) {
	n := corporaSizeFromEnv(b)
	for _, c := range realTextCorpora {
		docs, queries, err := c.split()
		if err != nil {
			b.Run(c.name, func(b *testing.B) {
				if errors.Is(err, fs.ErrNotExist) {
					b.Skipf("corpus %s is missing (%v); it holds %s", c.name, err, c.source)
				}
				b.Fatal(err)
			})
			continue
		}
		m := min(n, len(docs))
		for _, e := range []realEmbedder{hashEmbedder(), semanticEmbedder()} {
			b.Run(c.name+"/"+e.name+"/"+sizeName(m), func(b *testing.B) {
				vs, qs := embedCorpus(b, e, docs, queries, m)
				s := buildRealSet(b, e, c.name+"-"+e.name+"-"+strconv.Itoa(len(vs)), vs, qs)
				for _, ef := range benchEfs(b) {
					name := queryVariant(ef)
					b.Run(name, func(b *testing.B) { measureRealQueries(b, s, ef) })
				}
			})
		}
	}
}

// measureRealQueries runs s's queries through Flat (ef < 0) or HNSW at beam
// width ef (0: the tuned default) and reports recall@10 against Flat's
// answer, p50/p95/p99 wall time, the median CPU time of the querying thread
// (which waiting for a core on a loaded machine does not inflate) and, for
// HNSW, p50 as a fraction of Flat's when Flat ran first.
func measureRealQueries(b *testing.B, s *realSet, ef int) {
	ctx := context.Background()
	runtime.LockOSThread() // for threadCPU
	defer runtime.UnlockOSThread()
	var lat, cpu []time.Duration
	hits, sims := 0, 0
	for b.Loop() {
		for i, q := range s.qs {
			c0, start := threadCPU(), time.Now()
			var got []agentsmcp.VectorMatch
			var err error
			if ef < 0 {
				got, err = s.flat.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
			} else {
				got, err = s.hnsw.queryCounting(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}, ef, &sims)
			}
			lat, cpu = append(lat, time.Since(start)), append(cpu, threadCPU()-c0)
			if err != nil {
				b.Fatal(err)
			}
			hits += realHits(got, s.truth[i])
		}
	}
	slices.Sort(lat)
	slices.Sort(cpu)
	p50 := percentile(lat, 0.5)
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.95).Nanoseconds())/1e3, "p95-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(percentile(cpu, 0.5).Nanoseconds())/1e3, "cpu-p50-µs")
	b.ReportMetric(float64(hits)/float64(10*len(lat)), "recall@10")
	b.ReportMetric(float64(s.n), "docs")
	if ef >= 0 {
		b.ReportMetric(float64(sims)/float64(len(lat)), "sims/query")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ef < 0 {
		s.flatP50 = p50
		return
	}
	if ef == 0 {
		b.ReportMetric(float64(s.hnsw.EfSearch("ns")), "ef")
		b.ReportMetric(s.build.Seconds(), "build-s")
		b.ReportMetric(s.tune.Seconds(), "tune-s")
	}
	if s.flatP50 > 0 {
		b.ReportMetric(float64(p50)/float64(s.flatP50), "p50/flat")
	}
	if ef > 0 {
		// What the tuner's sample reads at this ef, beside the held-out
		// recall above.
		if s.proxy == nil {
			s.proxy = s.hnsw.space("ns", false).g.newTuneSample()
		}
		b.ReportMetric(s.proxy.recall(ef), "tune-recall")
	}
}

// TestRealTextCorpora checks the committed corpora that the benchmarks
// read: each has enough lines for its held-out queries and a 10k index, no
// line is blank, and no held-out query is also an indexed document (up to
// case), so that the queries are text the index has not seen.
func TestRealTextCorpora(t *testing.T) {
	for _, c := range realTextCorpora {
		t.Run(c.name, func(t *testing.T) {
			docs, queries, err := c.split()
			if err != nil {
				t.Fatalf("%v (the corpus holds %s)", err, c.source)
			}
			if len(docs) < 10_000 {
				t.Errorf("%d documents, want at least 10,000", len(docs))
			}
			held := make(map[string]bool, len(queries))
			for _, q := range queries {
				held[strings.ToLower(q)] = true
			}
			for i, l := range slices.Concat(docs, queries) {
				if strings.TrimSpace(l) == "" {
					t.Fatalf("line %d is blank", i+1)
				}
				if i < len(docs) && held[strings.ToLower(l)] {
					t.Fatalf("indexed line %d is also a held-out query: %q", i+1, l)
				}
			}
		})
	}
}
