package vectors

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// HNSWOptions tunes an [HNSW] index. The zero value of every field selects
// its default.
type HNSWOptions struct {
	// M is the number of neighbours a node keeps on layers ≥ 1; layer 0
	// keeps 2·M. Default 16.
	M int
	// EfConstruction is the beam width used while inserting. Default 100.
	EfConstruction int
	// EfSearch is the beam width of a query (raised to TopK when smaller);
	// [HNSW.QueryEf] overrides it per query. 0 (the default) tunes it per
	// namespace to reach RecallTarget (see tune.go); a negative value is 0.
	EfSearch int
	// RecallTarget is the recall@10 that an automatically tuned EfSearch
	// aims at, measured on a sample of the namespace (see tune.go).
	// Default 0.955: a margin over 0.95 for the error of a 200-query
	// sample, whose measure read 0.003 to 0.015 below the recall of
	// held-out queries on real text. Ignored when EfSearch is fixed.
	RecallTarget float64
	// Seed makes level assignment, and so the whole graph, deterministic for
	// a given sequence of writes. 0 picks a random seed.
	Seed uint64
	// CompactRatio is the fraction of tombstoned nodes in a namespace that
	// triggers a rebuild of its graph from the live vectors at the end of an
	// Upsert or Delete. Default 0.25; a negative value disables automatic
	// compaction ([HNSW.Compact] still works).
	CompactRatio float64
	// ExactThreshold: a filtered query whose candidate set (the shortest
	// posting list among its filter's key=value pairs) holds at most this
	// many nodes, or for which a cost model predicts that scanning it is
	// cheaper than a filtered beam search, is answered by an exact scan of
	// that set. Default 2048. A negative value disables both, so that
	// filtered queries always try the graph first (for tests and
	// measurements).
	ExactThreshold int
}

func (o HNSWOptions) withDefaults() HNSWOptions {
	if o.M <= 0 {
		o.M = 16
	}
	if o.M < 2 {
		o.M = 2
	}
	if o.EfConstruction <= 0 {
		o.EfConstruction = 100
	}
	if o.EfSearch < 0 {
		o.EfSearch = 0
	}
	if o.RecallTarget <= 0 {
		o.RecallTarget = 0.955
	}
	if o.CompactRatio == 0 {
		o.CompactRatio = 0.25
	}
	if o.ExactThreshold == 0 {
		o.ExactThreshold = 2048
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64() | 1
	}
	return o
}

// HNSW is an approximate in-memory [agentsmcp.VectorIndex]: a hierarchical
// navigable small-world graph (Malkov & Yashunin, 2016) per namespace, with
// cosine similarity computed as the dot product of L2-normalised vectors,
// like [Flat].
//
// Layout. Nodes are numbered densely per namespace. Node i's vector is
// values[i*dims:(i+1)*dims], and again as int8 in qvals (see quant.go),
// which the beam searches walk on; its layer-0 neighbours live in one flat
// []uint32 with 2M+1 slots per node (a count, then the ids), and its upper
// layers in a per-node []uint32 of level×(M+1) slots. Searches use a
// generation-stamped visited array and heaps taken from a sync.Pool, so a
// query allocates little beyond its result.
//
// Search. Queries and inserts descend the upper layers with a beam of
// upperEf = 4 rather than the paper's greedy walk (see upperEf for the
// measurement), then run the beam search of Algorithm 2 on the lower layers
// with EfSearch (queries) or EfConstruction (inserts). Both score nodes on
// the quantised rows and prefetch the rows of a node's unvisited
// neighbours before scoring them; a query then re-scores the best of its
// beam on the float rows (see rerank), and an insert re-scores its
// candidates before choosing links, so scores and links are exact.
//
// Writes. Upsert of a new id inserts a node (Algorithm 1 of the paper, with
// the neighbour-diversity heuristic of Algorithm 4 both for the new node's
// links and for pruning an overfull neighbour). Upsert of an existing id
// with the same vector updates its metadata in place; with a different
// vector it tombstones the old node and inserts a new one. Delete
// tombstones. Tombstoned nodes stay in the graph as stepping stones for
// navigation but never appear in results. When tombstones reach
// CompactRatio (default 25 %) of a namespace's nodes, the write that
// crossed the line rebuilds that namespace's graph from its live vectors,
// holding that namespace's write lock meanwhile (a rebuild costs as much as
// inserting the live vectors again: about 20 s at 100k × 384).
//
// Filters. Every namespace keeps a posting list per metadata key=value
// pair. A filtered query's candidate set is the shortest list among its
// pairs. When that set is small (≤ ExactThreshold) or a cost model says
// scanning it beats a filtered beam search (see exactIsCheaper: below
// about 4.5 % of 1M nodes, 14 % of 100k), the set is scanned exactly.
// Otherwise the filter is checked inside the layer-0 beam search: ef
// counts only matching live nodes, so the beam keeps widening until it
// holds ef of them — an adaptive ef that needs no restarts. A budget
// bounds the widening: when the search has computed as many similarities
// as the candidate set holds, or when the graph yields fewer than TopK
// matches, the query falls back to the exact scan. Unfiltered queries fall
// back the same way when tombstones or unreachable nodes leave the beam
// short. A query is therefore never short while enough matching vectors
// exist, and selective filters get exact answers.
//
// Concurrency. Each namespace has its own RWMutex: queries run in
// parallel; writes to a namespace take its write lock.
type HNSW struct {
	dims int
	opts HNSWOptions

	mu         sync.RWMutex
	namespaces map[string]*hnswSpace
}

type hnswSpace struct {
	mu sync.RWMutex
	g  *graph

	// ef is the tuned beam width, 0 until the namespace is first tuned.
	ef atomic.Int64
	// tuneMu serialises tunings; it guards tunedGraph and tunedAt, the
	// graph and its live count at the last tuning.
	tuneMu     sync.Mutex
	tunedGraph *graph
	tunedAt    int
}

// graph is one namespace's HNSW graph. It is replaced wholesale by a
// compaction, so readers always see a consistent one under the space lock.
type graph struct {
	dims, m, m0, efC int
	qstride          int     // quantStride(dims)
	ml               float64 // level multiplier 1/ln(M)

	ids    []string
	meta   []map[string]string
	values []float32  // node × dims, row-major
	qvals  []int8     // node × qstride: values quantised (quant.go), what searches walk on
	qscale []float32  // node → scale of its quantised row
	levels []uint8    // top layer of each node
	dead   []bool     // tombstones
	links0 []uint32   // node × (m0+1): count, then neighbours
	upper  [][]uint32 // node → (level)×(m+1): per layer ≥ 1, count then neighbours

	index    map[string]uint32   // id → live node
	postings map[string][]uint32 // "key\x00value" → nodes in ascending order (may include tombstones)

	entry    uint32
	maxLevel int
	hasEntry bool
	ndead    int

	src *rand.PCG
	rng *rand.Rand

	// advised holds the arrays of the hot slabs last given the huge-page
	// advice (see adviseSlabs).
	advised [3]advisedSlab
}

// maxLevelCap bounds the level of a node; with M=16 reaching it is
// astronomically unlikely, it only keeps a node's level in a byte.
const maxLevelCap = 32

// NewHNSW returns an empty approximate index of vectors with dims
// dimensions.
func NewHNSW(dims int, opts HNSWOptions) *HNSW {
	return &HNSW{dims: dims, opts: opts.withDefaults(), namespaces: map[string]*hnswSpace{}}
}

func (h *HNSW) String() string {
	efS := fmt.Sprint(h.opts.EfSearch)
	if h.opts.EfSearch == 0 {
		efS = fmt.Sprintf("auto@%.2f", h.opts.RecallTarget)
	}
	return fmt.Sprintf("vectors.HNSW(%d dims, M=%d, efC=%d, efS=%s)", h.dims, h.opts.M, h.opts.EfConstruction, efS)
}

// Options returns the options in effect, defaults filled in.
func (h *HNSW) Options() HNSWOptions { return h.opts }

func (h *HNSW) newGraph(namespace string) *graph {
	f := fnv.New64a()
	f.Write([]byte(namespace))
	src := rand.NewPCG(h.opts.Seed, f.Sum64())
	return &graph{
		dims: h.dims, m: h.opts.M, m0: layer0Links(h.opts.M), efC: h.opts.EfConstruction, qstride: quantStride(h.dims),
		ml:    1 / math.Log(float64(h.opts.M)),
		index: map[string]uint32{}, postings: map[string][]uint32{},
		src: src, rng: rand.New(src),
	}
}

func (h *HNSW) space(namespace string, create bool) *hnswSpace {
	h.mu.RLock()
	sp := h.namespaces[namespace]
	h.mu.RUnlock()
	if sp != nil || !create {
		return sp
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if sp = h.namespaces[namespace]; sp == nil {
		sp = &hnswSpace{g: h.newGraph(namespace)}
		h.namespaces[namespace] = sp
	}
	return sp
}

// Upsert implements agentsmcp.VectorIndex. A vector of the wrong size is
// EINVALID and nothing of the batch is stored. A long batch is applied in
// chunks of upsertChunk vectors, releasing the namespace's lock between
// them: concurrent queries may see part of the batch, and a cancelled ctx
// stops it before the next chunk, keeping the chunks already applied and
// returning ctx.Err().
func (h *HNSW) Upsert(ctx context.Context, namespace string, vs []agentsmcp.Vector) error {
	norm := make([]float32, len(vs)*h.dims)
	for i, v := range vs {
		if len(v.Values) != h.dims {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "vector %q has %d dimensions; the index has %d", v.ID, len(v.Values), h.dims)
		}
		if v.ID == "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "vector id is required")
		}
		row := norm[i*h.dims : (i+1)*h.dims]
		copy(row, v.Values)
		normalize(row)
	}
	if len(vs) == 0 {
		return nil
	}
	sp := h.space(namespace, true)
	s := getScratch()
	defer putScratch(s)
	for start := 0; start < len(vs); start += upsertChunk {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		end := min(len(vs), start+upsertChunk)
		sp.mu.Lock()
		g := sp.g // a compaction between chunks replaces it
		g.reserve(len(vs) - start)
		g.adviseSlabs(false) // queries wait on the lock: no collapsing
		for i := start; i < end; i++ {
			v := vs[i]
			row := norm[i*h.dims : (i+1)*h.dims]
			if old, ok := g.index[v.ID]; ok {
				if slices.Equal(g.vec(old), row) {
					g.setMeta(old, cloneMeta(v.Metadata))
					continue
				}
				g.kill(old)
			}
			g.insert(v.ID, row, cloneMeta(v.Metadata), s)
		}
		h.maybeCompact(sp)
		sp.mu.Unlock()
	}
	h.maybeTune(sp)
	return nil
}

// upsertChunk is how many vectors an Upsert inserts per hold of the
// namespace's write lock, so that queries interleave with a long batch
// (256 inserts at 384 dimensions hold it about 50 ms at 100k vectors and
// 150 ms at 1M).
const upsertChunk = 256

// Delete implements agentsmcp.VectorIndex; unknown ids are ignored.
func (h *HNSW) Delete(_ context.Context, namespace string, ids []string) error {
	sp := h.space(namespace, false)
	if sp == nil {
		return nil
	}
	sp.mu.Lock()
	for _, id := range ids {
		if node, ok := sp.g.index[id]; ok {
			sp.g.kill(node)
		}
	}
	h.maybeCompact(sp)
	sp.mu.Unlock()
	h.maybeTune(sp) // after a compaction
	return nil
}

// Compact rebuilds a namespace's graph from its live vectors now, dropping
// every tombstone.
func (h *HNSW) Compact(namespace string) {
	sp := h.space(namespace, false)
	if sp == nil {
		return
	}
	sp.mu.Lock()
	if sp.g.ndead > 0 {
		sp.g = sp.g.rebuilt()
	}
	sp.mu.Unlock()
	h.maybeTune(sp)
}

func (h *HNSW) maybeCompact(sp *hnswSpace) {
	g := sp.g
	if g.ndead == 0 || h.opts.CompactRatio < 0 {
		return
	}
	if float64(g.ndead) >= h.opts.CompactRatio*float64(len(g.ids)) {
		sp.g = g.rebuilt()
	}
}

// Len reports how many live vectors a namespace holds.
func (h *HNSW) Len(namespace string) int {
	sp := h.space(namespace, false)
	if sp == nil {
		return 0
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	return len(sp.g.index)
}

// Query implements agentsmcp.VectorIndex with the namespace's beam width:
// the index's EfSearch, or the tuned one (see [HNSW.EfSearch]).
func (h *HNSW) Query(ctx context.Context, namespace string, q agentsmcp.VectorQuery) ([]agentsmcp.VectorMatch, error) {
	return h.QueryEf(ctx, namespace, q, 0)
}

// QueryEf is Query with the beam width ef instead of the namespace's (ef ≤ 0
// selects the namespace's; ef below TopK is raised to TopK). A wider beam
// buys recall with latency.
func (h *HNSW) QueryEf(ctx context.Context, namespace string, q agentsmcp.VectorQuery, ef int) ([]agentsmcp.VectorMatch, error) {
	return h.queryCounting(ctx, namespace, q, ef, nil)
}

// queryCounting is QueryEf that, when computed is not nil, adds to it the
// number of quantised similarities the beam search computed.
func (h *HNSW) queryCounting(ctx context.Context, namespace string, q agentsmcp.VectorQuery, ef int, computed *int) ([]agentsmcp.VectorMatch, error) {
	if len(q.Values) != h.dims {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "query has %d dimensions; the index has %d", len(q.Values), h.dims)
	}
	if q.TopK <= 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "topK must be positive, got %d", q.TopK)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	query := append([]float32(nil), q.Values...)
	normalize(query)
	sp := h.space(namespace, false)
	if sp == nil {
		return []agentsmcp.VectorMatch{}, nil
	}
	if ef <= 0 {
		ef = h.queryEf(sp)
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	s := getScratch()
	defer putScratch(s)
	s.computed = 0
	top, err := sp.g.search(ctx, query, q.TopK, ef, q.Filter, h.opts.ExactThreshold, s)
	if err != nil {
		return nil, err
	}
	if computed != nil {
		*computed += s.computed
	}
	g := sp.g
	out := make([]agentsmcp.VectorMatch, len(top))
	for i, c := range top {
		out[i] = agentsmcp.VectorMatch{ID: g.ids[c.id], Score: c.sim, Metadata: cloneMeta(g.meta[c.id])}
	}
	return out, nil
}

// search returns the k best live matches of the filter, best first. The
// slice belongs to s.
func (g *graph) search(ctx context.Context, q []float32, k, ef int, filter map[string]string, exactThreshold int, s *scratch) ([]cand, error) {
	live := len(g.index)
	if live == 0 {
		return nil, nil
	}
	var candidates []uint32 // the filter's candidate set; nil means every node
	budget := len(g.ids)
	if len(filter) > 0 {
		list, ok := g.smallestPosting(filter)
		if !ok {
			return nil, nil
		}
		ef = max(ef, k)
		if list != nil { // else only pairs without a posting list: the beam checks them
			if exactThreshold >= 0 && (len(list) <= exactThreshold || exactIsCheaper(len(list), len(g.ids), ef, g.m0)) {
				return g.exact(ctx, q, k, filter, list, s)
			}
			candidates, budget = list, len(list)
		}
	}
	want := min(k, live)
	ef = max(ef, k)
	accept := func(i uint32) bool { return !g.dead[i] }
	if len(filter) > 0 {
		accept = func(i uint32) bool { return !g.dead[i] && matches(g.meta[i], filter) }
	}
	p := g.setProbe(q, s)
	eps := g.descend(p, 0, s)
	if g.searchLayer(p, eps, ef, 0, s, accept, budget) && len(s.res) >= want {
		return g.rerank(q, k, s), nil
	}
	// The graph ran out of matches or the beam cost as much as a scan.
	return g.exact(ctx, q, k, filter, candidates, s)
}

// A query re-scores exactly only the max(rerankMin, rerankFactor·k) best
// nodes of its quantised beam, not all ef: the rest are ranked too low for
// the rounding to lift them into the top k. On real text at 100k (ef 96 to
// 160, both embedders) recall was the same to four decimals as re-scoring
// the whole beam, and the hash embedder's queries were 20-25 % faster at
// ef=128, each re-scored row being a cache miss on a 1.5 KB float row.
const rerankMin, rerankFactor = 32, 3

// rerank empties s.res (a beam scored on quantised rows) and returns the k
// best of its best max(rerankMin, rerankFactor·k) by exact similarity to
// q, best first. The slice belongs to s.
func (g *graph) rerank(q []float32, k int, s *scratch) []cand {
	out := s.res.drainBest(max(rerankMin, rerankFactor*k), &s.sorted)
	const ahead = 4 // rows prefetched ahead of the one being scored
	for j := range min(ahead, len(out)) {
		prefetchF(g.vec(out[j].id))
	}
	for j := range out {
		if j+ahead < len(out) {
			prefetchF(g.vec(out[j+ahead].id))
		}
		out[j].sim = dot(q, g.vec(out[j].id))
	}
	slices.SortFunc(out, byBest)
	s.sorted = out
	return out[:min(k, len(out))]
}

// exactIsCheaper estimates whether scanning a filter's m candidates costs
// less than a filtered beam search over n nodes: the scan wins when
// m² ≤ ef·m0·n, i.e. below about 45 % of 10k nodes, 14 % of 100k and 4.5 %
// of 1M with the defaults. The rule assumes that a beam which only counts
// matches of a filter of selectivity m/n computes n/m times the ~ef·m0
// similarities of an unfiltered one; that overestimates it. Measured on 1M
// × 384 clustered vectors (ef=64): unfiltered 1,040 similarities; a 2 %
// filter 5,300 on average, budget fallbacks included; a 33 % filter 1,950.
// Both sides pay random row reads (about 330 ns a row at 1M, against 42 ns
// in a sequential scan), and at 2 % they were level: 6.5 ms to scan the
// 20k-node posting list, 7.0 ms graph-first. So the rule leans to the
// exact scan, which also gives exact answers, near the crossover.
func exactIsCheaper(m, n, ef, m0 int) bool {
	return float64(m)*float64(m) <= float64(ef)*float64(m0)*float64(n)
}

// exact scans nodes (every node when nodes is nil) for the k best live
// matches of filter.
func (g *graph) exact(ctx context.Context, q []float32, k int, filter map[string]string, nodes []uint32, s *scratch) ([]cand, error) {
	s.res = s.res[:0]
	if nodes != nil && len(filter) == 1 {
		filter = nil // nodes is the filter's posting list: every node matches
	}
	consider := func(i uint32) {
		if g.dead[i] || i == s.skip || !matches(g.meta[i], filter) {
			return
		}
		sim := dot(q, g.vec(i))
		if len(s.res) < k {
			s.res.push(cand{sim, i})
		} else if sim > s.res[0].sim {
			s.res[0] = cand{sim, i}
			s.res.fix0()
		}
	}
	if nodes == nil {
		for i := range g.ids {
			if i%4096 == 4095 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			consider(uint32(i))
		}
	} else {
		for j, i := range nodes {
			if j%4096 == 4095 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			consider(i)
		}
	}
	return s.res.drainBest(k, &s.sorted), nil
}

// smallestPosting returns the shortest posting list among the filter's
// pairs with a value, nil when no pair has one (every node is a
// candidate), and false when some such pair has no node at all.
func (g *graph) smallestPosting(filter map[string]string) ([]uint32, bool) {
	var best []uint32
	first := true
	for k, v := range filter {
		if v == "" {
			// An empty value matches a vector without the key (as Flat's
			// matches and Pinecone's $exists: false do), which no posting
			// list holds: the pair is checked node by node.
			continue
		}
		list := g.postings[postingKey(k, v)]
		if len(list) == 0 {
			return nil, false
		}
		if first || len(list) < len(best) {
			best, first = list, false
		}
	}
	return best, true
}

func postingKey(k, v string) string { return k + "\x00" + v }

func (g *graph) vec(i uint32) []float32 {
	return g.values[int(i)*g.dims : (int(i)+1)*g.dims : (int(i)+1)*g.dims]
}

// qvec is node i's quantised row.
func (g *graph) qvec(i uint32) []int8 {
	return g.qvals[int(i)*g.qstride : (int(i)+1)*g.qstride : (int(i)+1)*g.qstride]
}

// appendQuant appends the quantised form of the next node's row.
func (g *graph) appendQuant(vec []float32) {
	n := len(g.qvals)
	g.qvals = append(g.qvals, make([]int8, g.qstride)...)
	g.qscale = append(g.qscale, quantize(vec, g.qvals[n:]))
}

// probe is a search's query in both forms: f for exact similarities, q
// and scale for the quantised ones that the beam search walks on.
type probe struct {
	f     []float32
	q     []int8
	scale float32
}

// setProbe makes s.probe the query v (normalised, len dims).
func (g *graph) setProbe(v []float32, s *scratch) *probe {
	p := &s.probe
	p.f = v
	p.q = slices.Grow(p.q[:0], g.qstride)[:g.qstride]
	p.scale = quantize(v, p.q)
	return p
}

// approx is the quantised similarity of the probe to node i.
func (g *graph) approx(p *probe, i uint32) float32 {
	return p.scale * g.qscale[i] * float32(dot8(p.q, g.qvec(i)))
}

// slot returns node i's neighbour row on layer l: the count, then capacity
// slots.
func (g *graph) slot(i uint32, l int) []uint32 {
	if l == 0 {
		base := int(i) * (g.m0 + 1)
		return g.links0[base : base+g.m0+1 : base+g.m0+1]
	}
	base := (l - 1) * (g.m + 1)
	return g.upper[i][base : base+g.m+1 : base+g.m+1]
}

// links returns node i's neighbours on layer l.
func (g *graph) links(i uint32, l int) []uint32 {
	row := g.slot(i, l)
	return row[1 : 1+row[0]]
}

func (g *graph) reserve(n int) {
	g.ids = slices.Grow(g.ids, n)
	g.meta = slices.Grow(g.meta, n)
	g.values = slices.Grow(g.values, n*g.dims)
	g.qvals = slices.Grow(g.qvals, n*g.qstride)
	g.qscale = slices.Grow(g.qscale, n)
	g.levels = slices.Grow(g.levels, n)
	g.dead = slices.Grow(g.dead, n)
	g.links0 = slices.Grow(g.links0, n*(g.m0+1))
	g.upper = slices.Grow(g.upper, n)
}

func (g *graph) randomLevel() int {
	l := int(-math.Log(1-g.rng.Float64()) * g.ml)
	return min(l, maxLevelCap)
}

// kill tombstones a live node.
func (g *graph) kill(i uint32) {
	delete(g.index, g.ids[i])
	g.dead[i] = true
	g.ndead++
}

// addNode appends a node without linking it.
func (g *graph) addNode(id string, vec []float32, meta map[string]string, level int) uint32 {
	i := uint32(len(g.ids))
	g.ids = append(g.ids, id)
	g.meta = append(g.meta, meta)
	g.values = append(g.values, vec...)
	g.appendQuant(vec)
	g.levels = append(g.levels, uint8(level))
	g.dead = append(g.dead, false)
	g.links0 = append(g.links0, make([]uint32, g.m0+1)...)
	var up []uint32
	if level > 0 {
		up = make([]uint32, level*(g.m+1))
	}
	g.upper = append(g.upper, up)
	g.index[id] = i
	for k, v := range meta {
		key := postingKey(k, v)
		g.postings[key] = append(g.postings[key], i)
	}
	return i
}

// setMeta replaces node i's metadata and keeps the posting lists sorted.
func (g *graph) setMeta(i uint32, meta map[string]string) {
	for k, v := range g.meta[i] {
		if nv, ok := meta[k]; ok && nv == v {
			continue
		}
		key := postingKey(k, v)
		list := g.postings[key]
		if j, ok := slices.BinarySearch(list, i); ok {
			list = slices.Delete(list, j, j+1)
		}
		if len(list) == 0 {
			delete(g.postings, key)
		} else {
			g.postings[key] = list
		}
	}
	for k, v := range meta {
		if ov, ok := g.meta[i][k]; ok && ov == v {
			continue
		}
		key := postingKey(k, v)
		list := g.postings[key]
		if j, ok := slices.BinarySearch(list, i); !ok {
			g.postings[key] = slices.Insert(list, j, i)
		}
	}
	g.meta[i] = meta
}

// insert adds a live node and links it into the graph (Algorithm 1).
func (g *graph) insert(id string, vec []float32, meta map[string]string, s *scratch) {
	level := g.randomLevel()
	i := g.addNode(id, vec, meta, level)
	if !g.hasEntry {
		g.entry, g.maxLevel, g.hasEntry = i, level, true
		return
	}
	q := g.vec(i)
	p := &probe{f: q, q: g.qvec(i), scale: g.qscale[i]}
	eps := g.descend(p, level, s)
	for l := min(level, g.maxLevel); l >= 0; l-- {
		g.searchLayer(p, eps, g.efC, l, s, nil, 0)
		found := s.res.drainBest(len(s.res), &s.sorted)
		eps = append(eps[:0], found...) // the next layer starts from all of them
		s.eps = eps
		// Links are chosen on exact similarities: the beam found the
		// candidates on quantised ones.
		exact := append(s.found[:0], found...)
		for j := range exact {
			exact[j].sim = dot(q, g.vec(exact[j].id))
		}
		slices.SortFunc(exact, byBest)
		s.found = exact
		links := g.m
		if l == 0 && fullLayer0 {
			links = g.m0
		}
		s.sel = g.selectNeighbours(exact, links, s.sel[:0])
		row := g.slot(i, l)
		row[0] = uint32(len(s.sel))
		for j, c := range s.sel {
			row[1+j] = c.id
		}
		for _, c := range s.sel {
			g.addLink(c.id, i, l, c.sim, s)
		}
	}
	if level > g.maxLevel {
		g.entry, g.maxLevel = i, level
	}
}

// addLink adds the edge from→to on layer l, pruning from's list with the
// diversity heuristic when it is full. sim is the similarity of the two.
func (g *graph) addLink(from, to uint32, l int, sim float32, s *scratch) {
	row := g.slot(from, l)
	capacity := len(row) - 1
	n := int(row[0])
	if n < capacity {
		row[1+n] = to
		row[0]++
		return
	}
	base := g.vec(from)
	c := append(s.prune[:0], cand{sim, to})
	for _, nb := range row[1 : 1+n] {
		c = append(c, cand{dot(base, g.vec(nb)), nb})
	}
	slices.SortFunc(c, byBest)
	s.prune = c
	s.keep = g.selectNeighbours(c, capacity, s.keep[:0])
	row[0] = uint32(len(s.keep))
	for j, k := range s.keep {
		row[1+j] = k.id
	}
}

func byBest(a, b cand) int {
	switch {
	case a.sim > b.sim:
		return -1
	case a.sim < b.sim:
		return 1
	}
	return int(a.id) - int(b.id)
}

// selectNeighbours is the heuristic of Algorithm 4: walking the candidates
// from the most similar to the base element, keep one only if it is more
// similar to the base than to every candidate kept so far. Clusters thus
// get one edge each instead of M, and the graph stays navigable between
// them. cands must be sorted best first; their sims are to the base.
func (g *graph) selectNeighbours(cands []cand, m int, out []cand) []cand {
	if len(cands) <= m {
		return append(out, cands...)
	}
	start := len(out)
	for _, c := range cands {
		if len(out)-start >= m {
			break
		}
		v := g.vec(c.id)
		// With alpha a: c is dropped when a kept r is closer to it than
		// the base is, by the factor a (distance 1 - similarity).
		limit := c.sim
		if pruneAlpha != 1 {
			limit = 1 - (1-c.sim)/pruneAlpha
		}
		keep := true
		for _, r := range out[start:] {
			if dot(v, g.vec(r.id)) > limit {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	if keepPruned && len(out)-start < m {
		for _, c := range cands {
			if len(out)-start >= m {
				break
			}
			if !slices.ContainsFunc(out[start:], func(r cand) bool { return r.id == c.id }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Variants of the neighbour selection, for the real-text benchmarks'
// experiments (VECTORS_BENCH_ALPHA, VECTORS_BENCH_KEEP_PRUNED, VECTORS_BENCH_M0,
// VECTORS_BENCH_FULL_L0); nothing else sets them, and they must not change
// while an index is being written. docs/benchmarks.md has what each
// measured on real text.
var (
	// pruneAlpha relaxes the diversity rule as DiskANN's α does: a
	// candidate is dropped only when a kept neighbour is closer to it than
	// the base by this factor (distance 1 − similarity). 1 is Algorithm 4.
	pruneAlpha float32 = 1
	// keepPruned tops a selected list up to its size with the best
	// candidates the heuristic dropped (the paper's keepPrunedConnections).
	keepPruned = false
	// fullLayer0 gives a new node up to m0 = 2M links on layer 0 instead
	// of M (as FAISS does); its neighbours' lists hold m0 either way.
	fullLayer0 = false
	// layer0Cap, when positive, replaces 2M as the capacity m0 of the
	// layer-0 lists. Index files do not record it: a file loads with the
	// capacity in effect, so only a process that keeps it fixed may read
	// back what it wrote.
	layer0Cap = 0
)

// layer0Links is the capacity of a node's layer-0 list in a graph of M
// links per upper layer: 2M, as in the paper, unless layer0Cap is set.
func layer0Links(m int) int {
	if layer0Cap > 0 {
		return layer0Cap
	}
	return 2 * m
}

// upperEf is the beam width on the layers above the target one. The paper
// and hnswlib descend greedily (a beam of 1); on 1M clustered vectors that
// stranded 3 queries in 200 in the wrong cluster (recall 0 for them; 0.9685
// overall at ef=64), and a beam of 4 rescued all of them (0.9835) at no
// measurable cost. At 200k it raised recall at ef=32 from 0.959 to 0.983.
const upperEf = 4

// descend runs the search from the entry point down to layer to+1 and
// returns the entry points for layer to. The slice belongs to s.
func (g *graph) descend(q *probe, to int, s *scratch) []cand {
	eps := append(s.eps[:0], cand{g.approx(q, g.entry), g.entry})
	for l := g.maxLevel; l > to; l-- {
		g.searchLayer(q, eps, upperEf, l, s, nil, 0)
		eps = append(eps[:0], s.res.drainBest(len(s.res), &s.sorted)...)
	}
	s.eps = eps
	return eps
}

// searchLayer is the beam search of Algorithm 2 on layer l from the entry
// points eps (whose sims must be quantised ones to q, see [graph.approx]).
// It leaves in s.res, scored the same way, the ef most similar nodes that accept admits (all nodes
// when accept is nil); other nodes are still walked through. The beam only
// stops widening once it holds ef admitted nodes, so budget (when > 0)
// bounds the similarities computed: past it searchLayer gives up and
// returns false.
func (g *graph) searchLayer(q *probe, eps []cand, ef, l int, s *scratch, accept func(uint32) bool, budget int) bool {
	s.visited.reset(len(g.ids), s.skip)
	s.cands = s.cands[:0]
	s.res = s.res[:0]
	for _, ep := range eps {
		if !s.visited.visit(ep.id) {
			continue
		}
		s.cands.push(cand{-ep.sim, ep.id}) // negated: the min-heap pops the best
		if accept == nil || accept(ep.id) {
			s.res.push(ep)
			if len(s.res) > ef {
				s.res.pop()
			}
		}
	}
	computed := 0
	for len(s.cands) > 0 {
		c := s.cands.pop()
		if len(s.res) >= ef && -c.sim < s.res[0].sim {
			break // the best unexpanded candidate is worse than the worst result
		}
		if len(s.cands) > 0 {
			prefetchL(g.slot(s.cands[0].id, l)) // likely the next one expanded
		}
		// Gather the unvisited neighbours and prefetch their rows first,
		// so that their cache misses overlap.
		fresh := s.fresh[:0]
		for _, nb := range g.links(c.id, l) {
			if s.visited.visit(nb) {
				fresh = append(fresh, nb)
				prefetchQ(g.qvec(nb))
			}
		}
		s.fresh = fresh
		for _, nb := range fresh {
			sim := g.approx(q, nb)
			computed++
			s.computed++
			if len(s.res) < ef || sim > s.res[0].sim {
				s.cands.push(cand{-sim, nb})
				if accept == nil || accept(nb) {
					s.res.push(cand{sim, nb})
					if len(s.res) > ef {
						s.res.pop()
					}
				}
			}
		}
		if budget > 0 && computed > budget {
			return false
		}
	}
	return true
}

// rebuilt returns a fresh graph of the live nodes, in their current order.
func (g *graph) rebuilt() *graph {
	n := &graph{
		dims: g.dims, m: g.m, m0: g.m0, efC: g.efC, ml: g.ml, qstride: g.qstride,
		index: make(map[string]uint32, len(g.index)), postings: map[string][]uint32{},
		src: g.src, rng: g.rng,
	}
	n.reserve(len(g.index))
	n.adviseSlabs(false) // before the inserts fault the pages in
	s := getScratch()
	defer putScratch(s)
	for i := range g.ids {
		if !g.dead[i] {
			n.insert(g.ids[i], g.vec(uint32(i)), g.meta[i], s)
		}
	}
	return n
}

// cand is a node with its similarity to the current query.
type cand struct {
	sim float32
	id  uint32
}

// candHeap is a binary min-heap on sim: res[0] is the worst kept result.
// The candidate queue stores negated sims in the same type so that its
// top is the best candidate.
type candHeap []cand

func (h *candHeap) push(c cand) {
	*h = append(*h, c)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].sim <= a[i].sim {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

// pop removes and returns the minimum.
func (h *candHeap) pop() cand {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	*h = a[:last]
	h.fix0()
	return top
}

// fix0 restores the heap after a[0] changed.
func (h candHeap) fix0() {
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h[r].sim < h[l].sim {
			j = r
		}
		if h[i].sim <= h[j].sim {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// drainBest empties the heap into *buf, best first, and returns its first
// k entries.
func (h *candHeap) drainBest(k int, buf *[]cand) []cand {
	n := len(*h)
	out := slices.Grow((*buf)[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	*buf = out
	return out[:min(k, n)]
}

// visitedSet marks nodes with the current generation, so that clearing it
// between searches is one increment.
type visitedSet struct {
	gen   uint32
	marks []uint32
}

func (v *visitedSet) reset(n int, skip uint32) {
	if len(v.marks) < n {
		v.marks = make([]uint32, max(n, 2*len(v.marks)))
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 { // wrapped: stale marks could collide
		clear(v.marks)
		v.gen = 1
	}
	if skip != noSkip {
		v.marks[skip] = v.gen
	}
}

// visit marks i and reports whether it was unmarked.
func (v *visitedSet) visit(i uint32) bool {
	if v.marks[i] == v.gen {
		return false
	}
	v.marks[i] = v.gen
	return true
}

// scratch is the reusable working memory of one search or insert.
type scratch struct {
	// skip is a node that searches treat as already visited, so they never
	// reach it (tuning uses it to query with a node as if it were absent);
	// noSkip when none.
	skip        uint32
	visited     visitedSet
	cands, res  candHeap
	sorted, sel []cand
	eps, found  []cand
	fresh       []uint32
	prune, keep []cand
	probe       probe
	// computed counts the quantised similarities the searches made with
	// this scratch since it was last zeroed (a machine-independent measure
	// of a query's cost for the benchmarks).
	computed int
}

// noSkip is the skip of a scratch that skips no node.
const noSkip = math.MaxUint32

var scratchPool = sync.Pool{New: func() any { return &scratch{skip: noSkip} }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	// A scratch that served a huge namespace keeps its big visited array;
	// that is the point, since the next search likely hits the same one.
	scratchPool.Put(s)
}

// IDs returns the ids of a namespace's live vectors, in no particular
// order: what a reconciliation against the store compares.
func (h *HNSW) IDs(namespace string) []string {
	sp := h.space(namespace, false)
	if sp == nil {
		return nil
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	ids := make([]string, 0, len(sp.g.index))
	for id := range sp.g.index {
		ids = append(ids, id)
	}
	return ids
}
