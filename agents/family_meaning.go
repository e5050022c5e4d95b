package agents

import (
	"context"
	"slices"
	"strings"
	"sync"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file joins families by meaning when their words differ ("Is it
// going to rain in Oslo?" and "What is the weather in Paris today?"), and
// reads the past tasks that family joining and plan reuse decide on from
// the store, so that the builtin planner gives the same plan for the same
// request and stored state whether or not the vector index caught up.

// StoredRecall is a Memory that also reads from the store itself what
// the builtin planner decides on: what was stored, not what a vector index
// has indexed so far. Gather then decides the family, the reused plan and
// the pattern on these reads alone; the index's similar learnings still
// feed the prompts.
type StoredRecall interface {
	// RecentLearnings returns the caller's most recent learnings, most
	// recent first (by creation, then id).
	RecentLearnings(ctx context.Context, max int) ([]*agentsmcp.Learning, error)
	// FamilyPatterns returns the caller's plan patterns whose goal is
	// family and that succeeded at least half the time, in a stable
	// order.
	FamilyPatterns(ctx context.Context, family string, max int) ([]*agentsmcp.PlanPattern, error)
}

// familyPatterns are the plan patterns memory holds for k's family: from
// the store with a StoredRecall, else from the index's search.
func (g *Gatherer) familyPatterns(ctx context.Context, k *Knowledge) []*agentsmcp.PlanPattern {
	if sr, ok := g.Memory.(StoredRecall); ok {
		if ps, err := sr.FamilyPatterns(ctx, k.Family.Family, 10); err == nil {
			return ps
		}
	}
	ps, _ := g.Memory.SuccessfulPatterns(ctx, k.Request, 10)
	return ps
}

// recentLearnings is how many of the caller's latest learnings family
// joining and plan reuse weigh: the recent past of every family a caller
// uses often. A family last used before them starts afresh, as it would
// with an empty memory.
const recentLearnings = 200

// servedBy is own, unless a successful past task ran bestTool, the
// request's best search match, as its only tool and its request has the
// same entities as this one (see sameShape): then the request joins that
// task's family. The search ranks tools by the configured embedder's
// reading of the request's meaning against their descriptions, which
// holds where two short family keys share no word ("rain" and "weather");
// the entities and the intent (checked by resolve) keep a request that
// merely lands on the same tool in a small catalog out ("What time is it
// in Paris?" has no <date>, "Book a hotel …" another verb). sims are the
// embedding similarities of the keys, reported when known.
func servedBy(own FamilyMatch, want effect, past []*agentsmcp.Learning, bestTool string, sims map[string]float64) FamilyMatch {
	if bestTool == "" {
		return own
	}
	for _, l := range past {
		if l.Outcome != agentsmcp.OutcomeSuccess || len(l.Steps) != 1 || l.Steps[0] != bestTool {
			continue
		}
		key := LearningFamily(l)
		if !sameShape(own.Family, key) || !servesIntent(want, requestEffect(l.Query)) {
			continue
		}
		return FamilyMatch{Family: key, Joined: l.Query, Similarity: sims[key], Tool: bestTool}
	}
	return own
}

// sameShape reports whether two family keys have the same entities: the
// same placeholders, as many of each, a <date> aside (a date qualifies a
// request without changing what it asks: "rain in Oslo" and "weather in
// Paris today"). Keys without entities have no shape to compare and are
// not joined this way: nothing but words would then tie them.
func sameShape(a, b string) bool {
	pa, pb := placeholdersOf(a), placeholdersOf(b)
	return len(pa) > 0 && slices.Equal(pa, pb)
}

// placeholdersOf are the placeholders of a family key but <date>, sorted.
func placeholdersOf(key string) []string {
	var out []string
	for _, w := range strings.Fields(key) {
		if isPlaceholder(w) && w != placeholderDate {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// familyKeyCache bounds the embeddings of family keys that Families keeps:
// the keys of the recent learnings are embedded again on every plan, and a
// remote embedder would otherwise be asked for all of them each time.
const familyKeyCache = 4096

// embedKeys embeds keys with fs.Embedder, from its cache where it can;
// nil when the embedder fails or takes longer than familyEmbedTimeout.
func (fs *Families) embedKeys(ctx context.Context, keys []string) [][]float32 {
	out := make([][]float32, len(keys))
	var missing []string
	fs.mu.Lock()
	id := fs.Embedder.ID()
	if fs.cacheOf != id {
		fs.cache, fs.cacheOf = map[string][]float32{}, id
	}
	for i, k := range keys {
		if v, ok := fs.cache[k]; ok {
			out[i] = v
		} else if !slices.Contains(missing, k) {
			missing = append(missing, k)
		}
	}
	fs.mu.Unlock()
	if len(missing) > 0 {
		ctx, cancel := context.WithTimeout(ctx, familyEmbedTimeout)
		defer cancel()
		vs, err := fs.Embedder.Embed(ctx, missing)
		if err != nil || len(vs) != len(missing) {
			return nil
		}
		fs.mu.Lock()
		if len(fs.cache)+len(missing) > familyKeyCache {
			clear(fs.cache) // simplest bound: start over; the keys in use come back on the next plan
		}
		for i, k := range missing {
			fs.cache[k] = vs[i]
		}
		for i, k := range keys {
			if out[i] == nil {
				out[i] = vs[slices.Index(missing, k)]
			}
		}
		fs.mu.Unlock()
	}
	return out
}

// familyCache is the state of Families' key cache.
type familyCache struct {
	mu      sync.Mutex
	cache   map[string][]float32
	cacheOf string // the ID of the embedder the cache holds vectors of
}

// recallPast sets k.PastTasks and k.Family from memory: with a
// StoredRecall, the family and the family's past tasks come from the
// store's recent learnings alone (deterministic), and the index's similar
// learnings of other families follow them for the prompts; without one,
// from the index's similar learnings as before. It returns the learnings
// it decided on: the recent ones with a StoredRecall, else the similar
// ones.
func (g *Gatherer) recallPast(ctx context.Context, k *Knowledge) []*agentsmcp.Learning {
	similar, _ := g.Memory.SimilarLearnings(ctx, k.Request, 5)
	var best string
	if len(k.SubGoals) == 1 {
		if c := k.Candidates[k.SubGoals[0]]; len(c) > 0 {
			best = c[0].Name
		}
	}
	rl, ok := g.Memory.(StoredRecall)
	if !ok {
		k.PastTasks = similar
		k.Family = g.Families.resolve(ctx, k.Request, similar, best)
		return similar
	}
	recent, err := rl.RecentLearnings(ctx, recentLearnings)
	if err != nil {
		k.PastTasks = similar
		k.Family = g.Families.resolve(ctx, k.Request, similar, best)
		return similar
	}
	k.Family = g.Families.resolve(ctx, k.Request, recent, best)
	k.PastTasks = nil
	for _, l := range recent {
		if len(k.PastTasks) < 5 && k.inFamily(l.Goal) {
			k.PastTasks = append(k.PastTasks, l)
		}
	}
	for _, l := range similar {
		if len(k.PastTasks) < 5 && !k.inFamily(l.Goal) && LearningFamily(l) != k.Family.Family &&
			!slices.ContainsFunc(k.PastTasks, func(x *agentsmcp.Learning) bool { return x.ID == l.ID }) {
			k.PastTasks = append(k.PastTasks, l)
		}
	}
	return recent
}
