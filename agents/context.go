package agents

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

// Memory is what the agents recall before thinking and planning: past
// tasks, insights and plan patterns resembling a request. cmd/agents-mcp
// adapts the memory layer (semantic search with a lexical fallback) to it.
type Memory interface {
	// SimilarLearnings returns learnings whose request resembles text,
	// most similar first.
	SimilarLearnings(ctx context.Context, text string, max int) ([]*agentsmcp.Learning, error)
	// RelevantInsights returns insights about text or about one of tools.
	RelevantInsights(ctx context.Context, text string, tools []string, max int) ([]*agentsmcp.Insight, error)
	// SuccessfulPatterns returns plan patterns whose goal resembles text
	// and that succeeded more often than not, most similar first.
	SuccessfulPatterns(ctx context.Context, text string, max int) ([]*agentsmcp.PlanPattern, error)
}

// Knowledge is what the agents know that bears on one request: candidate
// tools with their performance, similar past tasks, insights, and the plan
// patterns that worked for its goal.
type Knowledge struct {
	Request    string
	SubGoals   []string
	Candidates map[string][]*agentsmcp.ToolMatch // per sub-goal, best first
	Tools      map[string]*ToolFacts             // every candidate, by name
	PastTasks  []*agentsmcp.Learning
	Insights   []*agentsmcp.Insight
	// Family is the request's task family (see FamilyOf and Families),
	// the key of plan reuse, patterns and pitfalls.
	Family FamilyMatch
	// Patterns are the successful plan patterns of the request's family
	// (or, stored before families, of its exact goal), best first.
	Patterns []*agentsmcp.PlanPattern
	// Related are known tools that are no sub-goal's candidate, with why
	// a plan may need them beside the candidates (see relatedTools).
	Related map[string]string

	prior float64 // the reliability estimate of a tool without a record
	// sameEntities are the candidates that served a recent one-step
	// request with the same entities (see addSameShapeTools), each with
	// that request.
	sameEntities map[string]string
}

// inPattern reports whether tool is a step of one of k's patterns.
func (k *Knowledge) inPattern(tool string) bool {
	for _, p := range k.Patterns {
		if slices.Contains(p.Steps, tool) {
			return true
		}
	}
	return false
}

// alternativesTo names the usable candidates, not on cool-down, of the
// sub-goals tool is a candidate of (of every sub-goal when it is none's),
// best first: what could serve instead of tool.
func (k *Knowledge) alternativesTo(tool string) []string {
	var goals []string
	for _, g := range k.SubGoals {
		if slices.ContainsFunc(k.Candidates[g], func(m *agentsmcp.ToolMatch) bool { return m.Name == tool }) {
			goals = append(goals, g)
		}
	}
	if len(goals) == 0 {
		goals = k.SubGoals
	}
	var out []string
	for _, g := range goals {
		for _, m := range k.Candidates[g] {
			f := k.Tools[m.Name]
			if m.Name != tool && f != nil && f.Usable() && !f.Reliability.CoolingDown && !slices.Contains(out, m.Name) {
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// provenPattern is the pattern of k's goal with the best record whose
// tools can all be planned on now, or nil.
func (k *Knowledge) provenPattern(ctx context.Context, catalog agentsmcp.ToolCatalog) *agentsmcp.PlanPattern {
	for _, p := range k.Patterns {
		usable := len(p.Steps) > 0
		for _, tool := range p.Steps {
			if info, err := catalog.Tool(ctx, tool); err != nil || info.Health == agentsmcp.HealthDown {
				usable = false
				break
			}
		}
		if usable {
			return p
		}
	}
	return nil
}

// ToolFacts is a candidate tool with what is known about its record.
type ToolFacts struct {
	agentsmcp.ToolInfo
	Calls int64
	// SuccessRate is Reliability.Estimate: the prior for a tool never
	// called, so that unknown tools are neither trusted nor shunned.
	SuccessRate float64
	Reliability toolperf.Reliability
	P95         time.Duration
	Pitfalls    []string // insights about failures of this tool
	// FailedInFamily is a pitfall recorded for this tool on a request of
	// the same task family: the strongest reason to prefer another tool.
	FailedInFamily string
	// InFamily is the estimate from the recent tasks of the request's
	// family that used the tool (see Gatherer.addFamilyRecord), by the
	// same policy as Reliability; nil when none did.
	InFamily *toolperf.Reliability

	lastFailureAt time.Time // which failure a probe follows (see Gatherer.claimProbe)
}

// Performance renders the record for a prompt: the estimate, the decayed
// outcomes it weighs, the failure streak with the last error, and whether
// the tool is on cool-down.
func (f *ToolFacts) Performance() string {
	if f.Calls == 0 {
		return fmt.Sprintf("no calls recorded (estimated %.0f%% success)", 100*f.SuccessRate)
	}
	r := f.Reliability
	s := fmt.Sprintf("estimated %.0f%% success (recent: %.1f succeeded, %.1f failed; %d calls in all), p95 %v",
		100*f.SuccessRate, r.Successes, r.Failures, f.Calls, f.P95)
	if r.ConsecutiveFailures > 0 {
		s += fmt.Sprintf("; failed the last %d call(s)", r.ConsecutiveFailures)
		if r.LastErrorClass != "" {
			s += ", last error: " + storedform.TruncateUTF8(r.LastErrorClass, 120)
		}
	}
	if fr := f.InFamily; fr != nil {
		s += fmt.Sprintf("; in this task family: %.0f%% (%.1f succeeded, %.1f failed)", 100*fr.Estimate, fr.Successes, fr.Failures)
	}
	if f.FailedInFamily != "" {
		s += "; FAILED on a request of this task family (" + storedform.TruncateUTF8(f.FailedInFamily, 200) + "): prefer another tool that can serve"
	}
	switch {
	case r.CoolingDown:
		s += fmt.Sprintf("; ON COOL-DOWN until %s: do not use it while another tool can serve", r.CoolDownUntil.UTC().Format(time.RFC3339))
	case r.ProbeDue:
		s += "; cool-down over: may be tried once to see whether it recovered"
	}
	return s
}

// Usable reports whether the tool can be planned on now.
func (f *ToolFacts) Usable() bool { return f.Health != agentsmcp.HealthDown }

// Gatherer collects Knowledge. Catalog is required; the others may be nil.
type Gatherer struct {
	Catalog     agentsmcp.ToolCatalog
	Memory      Memory
	Performance agentsmcp.ToolPerformanceService
	// Reliability turns each tool's record into its estimate and
	// cool-down; zero fields take toolperf.DefaultReliabilityPolicy's.
	Reliability toolperf.ReliabilityPolicy
	// Now is the clock of the estimates; default time.Now.
	Now func() time.Time
	// PerGoal is how many candidate tools are kept per sub-goal; default 5.
	PerGoal int
	// Families joins a request to the family of a similar past one; nil:
	// a request's family is its own key.
	Families *Families
	// ServerTools names the server's own tools besides the agents' (memory,
	// insights, tool search), which take any text: they are candidates only
	// for a goal that shares a word with their name or title (see
	// offTopicServerTool). cmd lists them; nil treats every tool alike.
	ServerTools []string

	probesMu sync.Mutex
	probes   map[string]time.Time // tool → the last failure a probe was granted after
}

// claimProbe grants the one probe of f after its last failure: true the
// first time for that failure, false after. A failed probe records a new
// last failure (and a longer cool-down), a successful one ends the streak,
// so each cool-down lets one probe through.
func (g *Gatherer) claimProbe(f *ToolFacts) bool {
	g.probesMu.Lock()
	defer g.probesMu.Unlock()
	if g.probes == nil {
		g.probes = map[string]time.Time{}
	}
	if granted, ok := g.probes[f.Name]; ok && !f.lastFailureAt.After(granted) {
		return false
	}
	g.probes[f.Name] = f.lastFailureAt
	return true
}

// newFacts are the facts of info before its record is read.
func (g *Gatherer) newFacts(info agentsmcp.ToolInfo) *ToolFacts {
	prior := toolperf.Prior(g.Reliability)
	return &ToolFacts{ToolInfo: info, SuccessRate: prior, Reliability: toolperf.Reliability{Estimate: prior}}
}

// addRecord adds what tool performance knows of f's tool: its calls,
// latency and reliability estimate as of now. A tool never recorded keeps
// the prior.
func (g *Gatherer) addRecord(ctx context.Context, f *ToolFacts) {
	if g.Performance == nil {
		return
	}
	p, err := g.Performance.FindToolPerformance(ctx, f.Name)
	if err != nil {
		return
	}
	f.Calls = p.Calls
	f.Reliability = toolperf.Estimate(g.Reliability, toolperf.Evidence(p), g.now(ctx))
	f.SuccessRate = f.Reliability.Estimate
	f.lastFailureAt = p.LastFailureAt
	f.P95 = toolperf.Percentile(p, 0.95)
}

// now is the clock of the estimates under ctx: the instant
// withEstimatesAt pinned, else Now.
func (g *Gatherer) now(ctx context.Context) time.Time {
	if at, ok := ctx.Value(estimatesAtKey{}).(time.Time); ok {
		return at
	}
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

type estimatesAtKey struct{}

// withEstimatesAt pins the clock of the estimates that Gather makes under
// ctx to at. A call that asks the client's model through MRTR gathers
// again on each round (see agents/mcptools' mrtrLLM), and its prompts
// must not change with the time a round took: reliability decays with
// age, and the prompts show it.
func withEstimatesAt(ctx context.Context, at time.Time) context.Context {
	return context.WithValue(ctx, estimatesAtKey{}, at)
}

// Gather searches tools for each sub-goal of request (adding, when the
// search finds fewer than PerGoal, the catalog tools whose every required
// parameter the sub-goal gives: see fittingTools) and recalls what
// memory holds about it. Memory failures leave their part empty: planning
// without memory is worse, not impossible.
func (g *Gatherer) Gather(ctx context.Context, request string, subGoals []string) (*Knowledge, error) {
	if len(subGoals) == 0 {
		subGoals = SplitSubGoals(request)
	}
	per := g.PerGoal
	if per <= 0 {
		per = 5
	}
	k := &Knowledge{Request: request, SubGoals: subGoals, Candidates: map[string][]*agentsmcp.ToolMatch{}, Tools: map[string]*ToolFacts{}, prior: toolperf.Prior(g.Reliability)}
	var all []*agentsmcp.ToolInfo // the catalog, listed when a sub-goal needs it
	for _, goal := range subGoals {
		matches, err := g.Catalog.SearchTools(ctx, goal, per+3)
		if err != nil {
			return nil, err
		}
		var kept []*agentsmcp.ToolMatch
		for _, m := range matches {
			if isAgentTool(m.Name) || g.offTopicServerTool(goal, m.ToolInfo) {
				continue // the agents do not plan on themselves
			}
			kept = append(kept, m)
			if len(kept) == per {
				break
			}
		}
		// The catalog's tools that the sub-goal can drive whatever their
		// words are candidates too, below the search's matches (see
		// appendFitting).
		if all == nil {
			if all, err = g.Catalog.ListTools(ctx); err != nil {
				return nil, err
			}
		}
		kept = appendFitting(all, goal, kept, per)
		if requestEffect(goal) == effectSend { // the tools that send, whatever their words (see effect_candidates.go)
			if all == nil {
				if all, err = g.Catalog.ListTools(ctx); err != nil {
					return nil, err
				}
			}
			kept = append(kept, sendingTools(all, goal, kept, 3)...)
		}
		k.Candidates[goal] = kept
		for _, m := range kept {
			if _, seen := k.Tools[m.Name]; !seen {
				k.Tools[m.Name] = g.newFacts(m.ToolInfo)
			}
		}
	}
	if all == nil {
		var err error
		if all, err = g.Catalog.ListTools(ctx); err != nil {
			return nil, err
		}
	}
	g.relatedTools(k, all)
	k.Family = FamilyMatch{Family: FamilyOf(request)}
	if g.Memory != nil {
		recalled := g.recallPast(ctx, k)
		g.addReplacements(ctx, k, recalled)
		g.addSameShapeTools(ctx, k, recalled)
		patterns := g.familyPatterns(ctx, k)
		for _, p := range patterns {
			if k.inFamily(p.Goal) {
				k.Patterns = append(k.Patterns, p)
			}
		}
		slices.SortStableFunc(k.Patterns, func(a, b *agentsmcp.PlanPattern) int {
			return cmp.Or(cmp.Compare(b.SuccessRate(), a.SuccessRate()), cmp.Compare(b.Successes, a.Successes))
		})
		g.addPatternTools(ctx, k)
	}
	for _, f := range k.Tools {
		g.addRecord(ctx, f)
	}
	g.addFamilyRecord(ctx, k)
	if g.Memory != nil {
		names := make([]string, 0, len(k.Tools))
		for name := range k.Tools {
			names = append(names, name)
		}
		slices.Sort(names)
		k.Insights, _ = g.Memory.RelevantInsights(ctx, request, names, 10)
		for _, in := range k.Insights {
			if in.Type != agentsmcp.InsightPitfall {
				continue
			}
			sameFamily := k.familyInsight(in)
			for _, t := range in.AppliesTo {
				if f := k.Tools[t]; f != nil {
					f.Pitfalls = append(f.Pitfalls, in.Text)
					if sameFamily {
						f.FailedInFamily = in.Text
					}
				}
			}
		}
	}
	return k, nil
}

// addFamilyRecord estimates each candidate's reliability within the
// request's family, from the recalled past tasks of the family: a tool the
// plan ran in a task that succeeded counts a success; one it ran in a task
// that failed, or one a repair left (Learning.Tools without Learning.Steps),
// a failure; partial and cancelled tasks count nothing, their outcome
// says nothing of one tool. Weighted by age like the overall record. A tool
// that fails only for some requests (some arguments) can keep a good
// overall record while its family's says otherwise.
func (g *Gatherer) addFamilyRecord(ctx context.Context, k *Knowledge) {
	evidence := map[string]*toolperf.ReliabilityEvidence{}
	for _, l := range k.PastTasks {
		if !k.inFamily(l.Goal) || (l.Outcome != agentsmcp.OutcomeSuccess && l.Outcome != agentsmcp.OutcomeFailure) {
			continue
		}
		for _, tool := range l.Tools {
			if k.Tools[tool] == nil {
				continue
			}
			e := evidence[tool]
			if e == nil {
				e = &toolperf.ReliabilityEvidence{}
				evidence[tool] = e
			}
			failed := l.Outcome == agentsmcp.OutcomeFailure || !slices.Contains(l.Steps, tool)
			e.Recent = toolperf.AddOutcome(e.Recent, l.CreatedAt, failed)
		}
	}
	for tool, e := range evidence {
		r := toolperf.Estimate(g.Reliability, *e, g.now(ctx))
		k.Tools[tool].InFamily = &r
	}
}

// addPatternTools makes the tools of k's patterns candidates, found by
// the search or not: a tool that served this family is worth weighing for
// its next request however its description is worded. A pattern with one
// tool per sub-goal adds each tool to its sub-goal; scored below the
// sub-goal's other candidates, it wins by its record and the pattern bonus,
// not by its words.
func (g *Gatherer) addPatternTools(ctx context.Context, k *Knowledge) {
	for _, p := range k.Patterns {
		if len(p.Steps) != len(k.SubGoals) {
			continue
		}
		for i, tool := range p.Steps {
			goal := k.SubGoals[i]
			if isAgentTool(tool) || slices.ContainsFunc(k.Candidates[goal], func(m *agentsmcp.ToolMatch) bool { return m.Name == tool }) {
				continue
			}
			info, err := g.Catalog.Tool(ctx, tool)
			if err != nil {
				continue // gone since
			}
			score := 0.01
			if kept := k.Candidates[goal]; len(kept) > 0 {
				score = kept[len(kept)-1].Score / 2
			}
			k.Candidates[goal] = append(k.Candidates[goal], &agentsmcp.ToolMatch{ToolInfo: *info, Score: score, Why: "served this task family before"})
			if _, seen := k.Tools[tool]; !seen {
				k.Tools[tool] = g.newFacts(*info)
			}
		}
	}
}

// agentToolNames are the tools of the agents themselves.
var agentToolNames = []string{"generate_thoughts", "generate_plan", "execute_task", "run_task", "get_task", "list_tasks", "resume_task", "cancel_task"}

func isAgentTool(name string) bool { return slices.Contains(agentToolNames, name) }

// offTopicServerTool reports whether info is one of g.ServerTools that
// goal is not about, for want of a word in common with its name or title.
// Those tools take any text, so a match by meaning alone ("What does
// ephemeral mean?" and get_similar_tasks) ran them in place of the tool
// the request wanted, and the task reported success with nothing done.
// They are planned only for a goal that names what they hold ("store an
// insight …", "query memory for …").
func (g *Gatherer) offTopicServerTool(goal string, info agentsmcp.ToolInfo) bool {
	// The name and title, not the description: a description's many
	// words meet almost any goal ("How do you say …" and "mode says …").
	named := agentsmcp.ToolInfo{Name: info.Name, Description: info.Title}
	return slices.Contains(g.ServerTools, info.Name) && !sharesObject(goal, &ToolFacts{ToolInfo: named})
}

// subGoalSplit separates the parts of a request: sentences, ";", "then",
// "and then", "and also", "afterwards".
var subGoalSplit = regexp.MustCompile(`(?i)\s*(?:;|\.\s+|,?\s+and then\s+|,?\s+then\s+|,?\s+and also\s+|,?\s+afterwards,?\s+|,\s+and\s+)\s*`)

// SplitSubGoals splits a request into its sub-goals, in order: at
// sentences, ";", "then" and the like, and at an "and" before a clause
// that acts on the result of the one before ("… and send it to …"). A
// request without separators is one sub-goal.
func SplitSubGoals(request string) []string {
	var goals []string
	for _, part := range subGoalSplit.Split(strings.TrimSpace(request), -1) {
		for _, part := range splitReferringBack(part) { // "… and send it to …"
			part = strings.Trim(strings.TrimSpace(part), ".")
			if part != "" {
				goals = append(goals, part)
			}
		}
	}
	if len(goals) > agentsmcp.MaxListItems {
		goals = goals[:agentsmcp.MaxListItems]
	}
	return goals
}

// sequentialAfter reports whether sub-goal i of request continues from the
// one before it ("… then …"), rather than standing on its own.
func sequentialAfter(request string, goals []string, i int) bool {
	if i == 0 {
		return false
	}
	prev, cur := goals[i-1], goals[i]
	a, b := strings.Index(request, prev), strings.Index(request, cur)
	if a < 0 || b < 0 || b < a {
		return true
	}
	between := strings.ToLower(request[a+len(prev) : b])
	return strings.Contains(between, "then") || strings.Contains(between, "afterwards") ||
		referencesEarlier.MatchString(cur)
}

// referencesEarlier finds words that point back at an earlier result.
var referencesEarlier = regexp.MustCompile(`(?i)\b(it|them|its|their|the result|the results|those|these|that)\b`)
