package vectors

import (
	"context"
	"math/rand/v2"
	"slices"
)

// Auto-tuned beam width. A fixed ef is right for one distribution only: on
// synthetic clustered vectors ef=64 finds 99 % of the true neighbours at
// 1M, but on real text embedded with the hash embedder it finds 93 % at
// 100k (85 % on a harder corpus), while ef=128 costs twice as much where 64
// was plenty. So when [HNSWOptions.EfSearch] is 0 (the default), each
// namespace measures its own recall and keeps the smallest ef of efLadder
// that reaches [HNSWOptions.RecallTarget].
//
// The measurement: tuneSample live nodes, chosen at random, are each used
// as a query against the graph with the node itself made unreachable (marked
// visited before the search starts). That stands in for a query the index
// has never seen: a plain self-query is optimistic, because the node's own
// links lead straight to its neighbours (on the real-text corpus at 50k it
// measured 0.97 where held-out queries got 0.955). Made unreachable, it
// reads a little low instead: at 10k to 160k it rejected beam widths whose
// held-out recall was 0.003 to 0.015 above the target. Truth is an exact scan of
// every live node. A result counts when its similarity is at least the
// tuneK-th exact one, so duplicate vectors (ties) count either way.
//
// When: at the end of an Upsert whose namespace has at least tuneMin live
// vectors and has grown by half since its last tuning (recall at a fixed ef
// fell by about 0.01 per doubling on real text), after a compaction,
// and when an index is read from a file that did not save the tuned width
// (format version 1). Tuning holds the namespace's read
// lock (queries continue; its writers wait) and costs tuneSample exact
// scans plus five measurements of the ladder, paid once per growth by half
// (so all tunings of a growing namespace cost about three times its last
// one; see BenchmarkQueryReal's tune-s). Below tuneMin vectors, and before
// the first tuning, queries use untunedEf.
const (
	tuneSample = 200
	tuneK      = 10
	tuneMin    = 1000
	untunedEf  = 64
)

// efLadder holds the beam widths tuning chooses from, cheapest first.
// Steps of at most an eighth from 64 up keep the chosen ef close to the
// least that reaches the target: with steps of a quarter (64, 80, 96 …
// 160, 192, 224) the tuner chose 80 on a corpus where 64 already gave
// 0.955 on held-out queries, a fifth more time per query than needed.
var efLadder = []int{16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 448, 512}

// queryEf is the beam width of a query that names none.
func (h *HNSW) queryEf(sp *hnswSpace) int {
	if h.opts.EfSearch > 0 {
		return h.opts.EfSearch
	}
	if ef := sp.ef.Load(); ef > 0 {
		return int(ef)
	}
	return untunedEf
}

// EfSearch reports the beam width that Query uses for a namespace: the
// fixed [HNSWOptions.EfSearch], or the tuned one.
func (h *HNSW) EfSearch(namespace string) int {
	sp := h.space(namespace, false)
	if sp == nil {
		if h.opts.EfSearch > 0 {
			return h.opts.EfSearch
		}
		return untunedEf
	}
	return h.queryEf(sp)
}

// Tune measures every namespace now and sets its beam width, whatever its
// size (a namespace below tuneMin vectors keeps untunedEf). It does nothing
// when EfSearch is fixed.
func (h *HNSW) Tune() {
	h.mu.RLock()
	spaces := make([]*hnswSpace, 0, len(h.namespaces))
	for _, sp := range h.namespaces {
		spaces = append(spaces, sp)
	}
	h.mu.RUnlock()
	for _, sp := range spaces {
		h.tune(sp, true)
	}
}

// maybeTune tunes a namespace that has grown by half since its last tuning or
// whose graph a compaction replaced. It must be called without sp.mu held.
func (h *HNSW) maybeTune(sp *hnswSpace) { h.tune(sp, false) }

func (h *HNSW) tune(sp *hnswSpace, force bool) {
	if h.opts.EfSearch > 0 {
		return
	}
	if !force && !sp.tuneMu.TryLock() {
		return // another writer is tuning this namespace
	} else if force {
		sp.tuneMu.Lock()
	}
	defer sp.tuneMu.Unlock()
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	g := sp.g
	n := len(g.index)
	if n < tuneMin {
		sp.ef.Store(0)
		return
	}
	if !force && g == sp.tunedGraph && 2*n < 3*sp.tunedAt {
		return
	}
	sp.ef.Store(int64(g.tuneEf(h.opts.RecallTarget)))
	sp.tunedGraph, sp.tunedAt = g, n
}

// tuneEf returns the smallest ef of efLadder whose measured recall@tuneK
// reaches target (see the comment on tuneSample), or the largest one.
func (g *graph) tuneEf(target float64) int {
	t := g.newTuneSample()
	defer t.close()
	// Recall grows with ef, so a binary search needs five measurements of
	// the ladder's 29 steps.
	lo, hi := 0, len(efLadder)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if t.recall(efLadder[mid]) >= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return efLadder[lo]
}

// tuneSampler measures recall@tuneK on a sample of a graph's own nodes,
// each queried with itself made unreachable.
type tuneSampler struct {
	g      *graph
	s      *scratch
	sample []uint32
	kth    []float32
}

func (g *graph) newTuneSample() *tuneSampler {
	r := rand.New(rand.NewPCG(uint64(len(g.ids)), 0x74756e65))
	sample := make([]uint32, 0, tuneSample)
	for tries := 0; len(sample) < tuneSample && tries < 50*tuneSample; tries++ {
		i := uint32(r.IntN(len(g.ids)))
		if !g.dead[i] && i != g.entry && !slices.Contains(sample, i) {
			sample = append(sample, i)
		}
	}
	return &tuneSampler{g: g, s: getScratch(), sample: sample, kth: g.kthSimilarity(sample, tuneK)}
}

func (t *tuneSampler) close() {
	t.s.skip = noSkip
	putScratch(t.s)
}

// recall is the sample's recall@tuneK at beam width ef.
func (t *tuneSampler) recall(ef int) float64 {
	hits := 0
	for j, i := range t.sample {
		t.s.skip = i
		top, _ := t.g.search(context.Background(), t.g.vec(i), tuneK, ef, nil, -1, t.s)
		for _, c := range top {
			if c.sim >= t.kth[j]-1e-6 {
				hits++
			}
		}
	}
	t.s.skip = noSkip
	return float64(hits) / float64(tuneK*len(t.sample))
}

// kthSimilarity returns, for each sampled node, the k-th highest similarity
// between it and the other live nodes (the lowest one when fewer exist), in
// one pass over the vectors.
func (g *graph) kthSimilarity(sample []uint32, k int) []float32 {
	heaps := make([]candHeap, len(sample))
	for i := range g.ids {
		if g.dead[i] {
			continue
		}
		v := g.vec(uint32(i))
		for j, q := range sample {
			if uint32(i) == q {
				continue
			}
			sim := dot(g.vec(q), v)
			h := &heaps[j]
			if len(*h) < k {
				h.push(cand{sim, uint32(i)})
			} else if sim > (*h)[0].sim {
				(*h)[0] = cand{sim, uint32(i)}
				h.fix0()
			}
		}
	}
	out := make([]float32, len(sample))
	for j, h := range heaps {
		if len(h) > 0 {
			out[j] = h[0].sim
		}
	}
	return out
}
