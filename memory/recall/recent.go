package recall

import (
	"cmp"
	"context"
	"slices"
	"sync"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// LearningsMarker is a learning store whose learnings are only ever added
// (never updated or deleted), each under a mark that grows: it can say
// which were stored since a mark, in one cheap read. The embedded store's
// mark is the row id.
type LearningsMarker interface {
	// LearningsMark is the mark of the last learning stored, 0 with none.
	LearningsMark(ctx context.Context) (int64, error)
	// LearningsAfter returns up to limit learnings stored after mark, in
	// the order stored, and the mark of the last one (mark when none).
	LearningsAfter(ctx context.Context, mark int64, limit int) ([]*agentsmcp.Learning, int64, error)
}

// recentCache keeps the answer of [AgentMemory.RecentLearnings] per reader
// scope and size, with the store's mark it is complete up to. Every plan
// reads the caller's recent learnings, a couple of hundred rows decoded,
// while one task adds one learning: the next read takes the learnings
// stored since the mark (usually that one) and merges them in, in the
// store's order (newest first by creation, then id), which gives what a
// full read would. Without a [LearningsMarker] (MongoDB) every call reads
// the store, as before.
type recentCache struct {
	mu      sync.Mutex
	entries map[recentKey]recentEntry
}

type recentKey struct {
	scope string
	max   int
}

type recentEntry struct {
	mark      int64
	learnings []*agentsmcp.Learning
}

// maxRecentScopes bounds the cache: past it, it starts over.
const maxRecentScopes = 256

func (c *recentCache) get(key recentKey) (recentEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e, ok
}

func (c *recentCache) put(key recentKey, e recentEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxRecentScopes {
		c.entries = map[recentKey]recentEntry{}
	}
	c.entries[key] = e
}

// recentLearnings is RecentLearnings over a LearningsMarker.
func (m *AgentMemory) recentLearnings(ctx context.Context, store LearningsMarker, f agentsmcp.LearningFilter) ([]*agentsmcp.Learning, error) {
	key := recentKey{scope: f.Principal, max: f.Limit}
	size := min(f.Limit, agentsmcp.MaxPageSize) // a page is at most that long
	if e, ok := m.recent.get(key); ok {
		added, mark, err := store.LearningsAfter(ctx, e.mark, size+1)
		if err == nil && len(added) <= size {
			if len(added) > 0 {
				e = recentEntry{mark: mark, learnings: mergeRecent(e.learnings, added, f.Principal, size)}
				m.recent.put(key, e)
			}
			return slices.Clone(e.learnings), nil
		}
		// More than a page stored since, or an error: read afresh.
	}
	// The mark is read first: whatever is stored after it, even if the
	// page below holds it, is merged again next time (by id, once).
	mark, err := store.LearningsMark(ctx)
	if err != nil {
		ls, _, err := m.Searcher.Learnings.FindLearnings(ctx, f)
		return ls, err
	}
	ls, _, err := m.Searcher.Learnings.FindLearnings(ctx, f)
	if err != nil {
		return ls, err
	}
	m.recent.put(key, recentEntry{mark: mark, learnings: slices.Clone(ls)})
	return ls, nil
}

// mergeRecent is the newest max of kept and of the learnings of added that
// scope may read ("" reads all), each once, newest first by creation
// then id: the store's order of a page of learnings.
func mergeRecent(kept, added []*agentsmcp.Learning, scope string, max int) []*agentsmcp.Learning {
	out := slices.Clone(kept)
	for _, l := range added {
		if (scope == "" || l.Principal == scope) && !slices.ContainsFunc(out, func(x *agentsmcp.Learning) bool { return x.ID == l.ID }) {
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b *agentsmcp.Learning) int {
		return cmp.Or(cmp.Compare(b.CreatedAt.UnixMilli(), a.CreatedAt.UnixMilli()), cmp.Compare(b.ID, a.ID))
	})
	return out[:min(len(out), max)]
}
