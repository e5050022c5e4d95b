package toolsearch

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

// This file is the ranking that learns from outcomes: [Learned] wraps a
// [Ranker] and weighs each candidate's reliability and the caller's
// evidence for this kind of request, which [Outcomes] keeps.

// ToolReliability is what a [Learned] ranking knew of a tool, as
// find_tools and search_tools show it.
type ToolReliability struct {
	// Estimate is the chance of success the outcomes give, in (0, 1)
	// (0.5 with none; toolperf.DefaultReliabilityPolicy).
	Estimate float64 `json:"estimate"`
	// Outcomes is how many outcomes (weighed by age) it is made of.
	Outcomes float64 `json:"outcomes"`
	// CoolingDown: it failed several times in a row lately; it ranks lower
	// until its cool-down ends.
	CoolingDown bool `json:"coolingDown,omitempty"`
	// FamilySuccesses and FamilyFailures are its outcomes for requests of
	// the same kind as this one.
	FamilySuccesses float64 `json:"familySuccesses,omitempty"`
	FamilyFailures  float64 `json:"familyFailures,omitempty"`
	// Scope is whose outcomes these are: "yours" (memory confined to each
	// principal) or "everyone" (memory.visibility shared).
	Scope string `json:"scope"`
}

// Evidence is what a [Learned] ranking weighs: the outcomes of tools that
// the caller in ctx may know of. An implementation must give only the
// caller's own outcomes when memory is confined to each principal
// (agentsmcp.MemoryVisibility), never another principal's.
type Evidence interface {
	// ToolEvidence returns, for the tools named, what is known of them
	// for the caller in ctx and a request worded as query; a tool with
	// no outcome may be left out.
	ToolEvidence(ctx context.Context, query string, tools []string) map[string]ToolReliability
}

// Learned is a [Ranker] that re-orders its inner ranker's candidates by
// what worked: each candidate's score is multiplied by
//
//   - 1 + ½·c·(estimate − ½), c = n/(n+2) the confidence of n outcomes:
//     between ×0.75 (always failed) and ×1.25 (always worked);
//   - 1 + f·(familyEstimate − ½), f = m/(m+1) for m outcomes of this kind
//     of request: between ×0.5 and ×1.5, so that what served this caller
//     for this kind of request before comes first;
//   - ×0.5 while the tool cools down after failures in a row,
//
// and Why says so ("learned: …"). The words still decide among tools with
// no outcomes, and a tool nobody matched is never brought in. It reads the
// caller from ctx, as the [Evidence] does.
type Learned struct {
	Inner    Ranker
	Evidence Evidence
	// Candidates is how many of the inner ranking's best are re-ordered
	// when fewer are asked for (0: 50).
	Candidates int
}

var _ Ranker = (*Learned)(nil)

// Search implements [Ranker].
func (l *Learned) Search(ctx context.Context, query, scope string, limit int) *Result {
	candidates := cmp.Or(l.Candidates, 50)
	var res *Result
	if x, ok := l.Inner.(*Index); ok {
		// Ranked without the Whys: only the page returned is explained.
		res = x.search(ctx, query, scope, max(limit, candidates))
	} else {
		res = l.Inner.Search(ctx, query, scope, max(limit, candidates))
	}
	learnedWhy := map[string]string{}
	if l.Evidence != nil && len(res.Tools) > 0 {
		names := make([]string, len(res.Tools))
		for i, m := range res.Tools {
			names[i] = m.Name
		}
		ev := l.Evidence.ToolEvidence(ctx, query, names)
		for i := range res.Tools {
			m := &res.Tools[i]
			r, ok := ev[m.Name]
			if !ok {
				continue
			}
			factor, why := learnedFactor(r)
			m.Score = roundScore(m.Score * factor)
			m.Reliability = &r
			learnedWhy[m.Name] = why
		}
		slices.SortStableFunc(res.Tools, func(a, b Match) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.Name, b.Name)
		})
	}
	res.Tools = res.Tools[:min(limit, len(res.Tools))]
	for i := range res.Tools {
		m := &res.Tools[i]
		if res.explain != nil {
			m.Why = res.explain(m.Name)
		}
		if why := learnedWhy[m.Name]; why != "" {
			m.Why = strings.TrimPrefix(m.Why+"; learned: "+why, "; ")
		}
	}
	res.explain = nil
	return res
}

// learnedFactor is the multiplier of a tool's score for r, and how it
// came about.
func learnedFactor(r ToolReliability) (float64, string) {
	factor := 1.0
	var why []string
	if r.Outcomes > 0 {
		c := r.Outcomes / (r.Outcomes + 2)
		f := 1 + 0.5*c*(r.Estimate-0.5)
		factor *= f
		why = append(why, fmt.Sprintf("%s reliability %.2f over %.1f outcomes ×%.2f", r.Scope, r.Estimate, r.Outcomes, f))
	}
	if m := r.FamilySuccesses + r.FamilyFailures; m > 0 {
		est := (r.FamilySuccesses + 1) / (m + 2)
		f := 1 + m/(m+1)*(est-0.5)
		factor *= f
		why = append(why, fmt.Sprintf("%s outcomes for this kind of request %.0f✓ %.0f✗ ×%.2f", r.Scope, r.FamilySuccesses, r.FamilyFailures, f))
	}
	if r.CoolingDown {
		factor *= 0.5
		why = append(why, "cooling down after failures ×0.50")
	}
	return factor, strings.Join(why, ", ")
}

// Outcomes is an [Evidence] kept in memory from the calls a server sees:
// per principal (and for everyone), each tool's outcomes weighed by age
// (agentsmcp.DecayedCounts) and its failure streak, and the outcomes of
// the tools a caller called after finding them for a need, under the
// need's family (what "this kind of request" is: Family). It is per
// process: replicas learn each on its own, and a restart forgets.
type Outcomes struct {
	// Family maps a request to its family (agents.FamilyOf); nil: the
	// request's lower-cased words.
	Family func(string) string
	// Visibility decides whose outcomes a caller's ranking weighs: its
	// own (the default) or everyone's (agentsmcp.VisibilityShared).
	Visibility agentsmcp.MemoryVisibility
	// Policy estimates reliability (zero: the default policy).
	Policy toolperf.ReliabilityPolicy
	// MaxKeys bounds what is kept (0: 100,000 tool records); past it the
	// least recently updated tenth is forgotten.
	MaxKeys int
	// Now is the clock (nil: time.Now), for tests.
	Now func() time.Time

	mu    sync.Mutex
	tools map[outcomeKey]*toolOutcome
	finds map[string][]recentFind // owner → newest last
}

// outcomeKey is a tool's record for an owner ("" for everyone) and a
// family ("" for every request).
type outcomeKey struct{ owner, family, tool string }

type toolOutcome struct {
	evidence toolperf.ReliabilityEvidence
	updated  time.Time
}

// recentFind is what a find returned a caller, to credit the family of its
// need with the outcome of a tool it then called.
type recentFind struct {
	family string
	tools  []string
	at     time.Time
}

// findMemory is how long after a find a call of one of its tools counts
// for the find's family, and how many finds per caller are remembered.
const (
	findMemory   = 15 * time.Minute
	findsPerUser = 8
)

var _ Evidence = (*Outcomes)(nil)

func (o *Outcomes) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Outcomes) family(q string) string {
	if o.Family != nil {
		return o.Family(q)
	}
	return strings.Join(strings.Fields(strings.ToLower(q)), " ")
}

// Found records that the caller in ctx was shown tools for need, so that
// its next calls of them count for the need's family.
func (o *Outcomes) Found(ctx context.Context, need string, tools []string) {
	if len(tools) == 0 {
		return
	}
	owner := agentsmcp.MemoryOwnerFrom(ctx)
	f := recentFind{family: o.family(need), tools: slices.Clone(tools), at: o.now()}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.finds == nil {
		o.finds = map[string][]recentFind{}
	}
	fs := append(o.finds[owner], f)
	if len(fs) > findsPerUser {
		fs = fs[len(fs)-findsPerUser:]
	}
	o.finds[owner] = fs
}

// Record counts an outcome of tool called by principal (its ID; "" for
// in-process calls without one): for the principal and for everyone, and
// for the family of the caller's latest find that showed the tool, if
// within findMemory.
func (o *Outcomes) Record(principal, tool string, failed bool) {
	owner := agentsmcp.MemoryOwner(principal)
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tools == nil {
		o.tools = map[outcomeKey]*toolOutcome{}
	}
	keys := []outcomeKey{{owner, "", tool}, {"", "", tool}}
	fs := o.finds[owner]
	for i := len(fs) - 1; i >= 0; i-- {
		if now.Sub(fs[i].at) > findMemory {
			break
		}
		if slices.Contains(fs[i].tools, tool) {
			keys = append(keys, outcomeKey{owner, fs[i].family, tool}, outcomeKey{"", fs[i].family, tool})
			break
		}
	}
	for _, k := range keys {
		t := o.tools[k]
		if t == nil {
			t = &toolOutcome{}
			o.tools[k] = t
		}
		e := &t.evidence
		e.Recent = toolperf.AddOutcome(e.Recent, now, failed)
		if failed {
			e.ConsecutiveFailures++
			e.LastFailureAt = now
		} else {
			e.ConsecutiveFailures = 0
			e.LastSuccessAt = now
		}
		t.updated = now
	}
	o.evictLocked()
}

// evictLocked forgets the least recently updated tenth of the records
// past MaxKeys.
func (o *Outcomes) evictLocked() {
	limit := cmp.Or(o.MaxKeys, 100_000)
	if len(o.tools) <= limit {
		return
	}
	type aged struct {
		k  outcomeKey
		at time.Time
	}
	all := make([]aged, 0, len(o.tools))
	for k, t := range o.tools {
		all = append(all, aged{k, t.updated})
	}
	slices.SortFunc(all, func(a, b aged) int { return a.at.Compare(b.at) })
	for _, a := range all[:max(len(all)-limit*9/10, 1)] {
		delete(o.tools, a.k)
	}
}

// ToolEvidence implements [Evidence]: the caller's own outcomes, or
// everyone's under agentsmcp.VisibilityShared.
func (o *Outcomes) ToolEvidence(ctx context.Context, query string, tools []string) map[string]ToolReliability {
	owner, scope := agentsmcp.MemoryOwnerFrom(ctx), "yours"
	if o.Visibility == agentsmcp.VisibilityShared {
		owner, scope = "", "everyone"
	}
	family := o.family(query)
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]ToolReliability{}
	for _, tool := range tools {
		all, okAll := o.tools[outcomeKey{owner, "", tool}]
		fam, okFam := o.tools[outcomeKey{owner, family, tool}]
		if !okAll && !okFam {
			continue
		}
		r := ToolReliability{Scope: scope, Estimate: toolperf.Prior(o.Policy)}
		if okAll {
			est := toolperf.Estimate(o.Policy, all.evidence, now)
			r.Estimate, r.Outcomes, r.CoolingDown = roundScore(est.Estimate), roundScore(est.Successes+est.Failures), est.CoolingDown
		}
		if okFam {
			c := toolperf.DecayedAs(fam.evidence.Recent, now)
			r.FamilySuccesses, r.FamilyFailures = roundScore(c.Successes), roundScore(c.Failures)
		}
		if math.IsNaN(r.Estimate) {
			r.Estimate = 0.5
		}
		out[tool] = r
	}
	return out
}
