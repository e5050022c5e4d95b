package pineconetest

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
)

// defaultNamespace is where Pinecone keeps vectors written with no
// namespace.
const defaultNamespace = "__default__"

// record is one stored vector.
type record struct {
	values   []float32
	metadata *structpb.Struct
}

// store is an exact in-memory vector index: every query scores every
// vector of its namespace, so results are the true top k. Writes are
// visible to the next read (Pinecone itself is eventually consistent).
type store struct {
	dim    int
	metric string

	mu         sync.Mutex
	namespaces map[string]map[string]record
}

func newStore(dim int, metric string) *store {
	return &store{dim: dim, metric: metric, namespaces: map[string]map[string]record{}}
}

func nsName(ns string) string { return cmp.Or(ns, defaultNamespace) }

func (s *store) upsert(ns string, id string, r record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.namespaces[nsName(ns)]
	if m == nil {
		m = map[string]record{}
		s.namespaces[nsName(ns)] = m
	}
	m[id] = r
}

// get returns the record of id in ns.
func (s *store) get(ns, id string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.namespaces[nsName(ns)][id]
	return r, ok
}

func (s *store) hasNamespace(ns string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.namespaces[nsName(ns)]
	return ok
}

// remove deletes the vectors of ns that keep selects; a namespace left
// empty disappears, as in Pinecone's serverless indexes.
func (s *store) remove(ns string, keep func(id string, r record) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.namespaces[nsName(ns)]
	n := 0
	for id, r := range m {
		if keep(id, r) {
			delete(m, id)
			n++
		}
	}
	if len(m) == 0 {
		delete(s.namespaces, nsName(ns))
	}
	return n
}

func (s *store) dropNamespace(ns string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.namespaces[nsName(ns)]
	delete(s.namespaces, nsName(ns))
	return ok
}

// scored is one query match.
type scored struct {
	id    string
	score float32
	rec   record
}

// query returns the k best vectors of ns that pass match, best first.
// Ties are broken by descending id: Pinecone promises no order among equal
// scores, and an order opposite to the obvious one shows whether a client
// relies on one.
func (s *store) query(ns string, q []float32, k int, match func(record) bool) []scored {
	s.mu.Lock()
	var all []scored
	for id, r := range s.namespaces[nsName(ns)] {
		if match(r) {
			all = append(all, scored{id: id, score: s.score(q, r.values), rec: r})
		}
	}
	s.mu.Unlock()
	lowerIsBetter := s.metric == "euclidean"
	slices.SortFunc(all, func(a, b scored) int {
		c := cmp.Compare(b.score, a.score)
		if lowerIsBetter {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	return all[:min(k, len(all))]
}

// counts returns the number of vectors per namespace that pass match.
func (s *store) counts(match func(record) bool) map[string]uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]uint32{}
	for ns, m := range s.namespaces {
		for _, r := range m {
			if match(r) {
				out[ns]++
			}
		}
	}
	return out
}

// score is the similarity Pinecone reports for the index's metric: the
// cosine, the dot product, or the squared Euclidean distance.
func (s *store) score(q, v []float32) float32 {
	var dot, qq, vv, d2 float64
	for i := range q {
		a, b := float64(q[i]), float64(v[i])
		dot += a * b
		qq += a * a
		vv += b * b
		d2 += (a - b) * (a - b)
	}
	switch s.metric {
	case "dotproduct":
		return float32(dot)
	case "euclidean":
		return float32(d2)
	}
	return float32(dot / math.Sqrt(qq*vv))
}
