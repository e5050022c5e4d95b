package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file is the learning loop: what a finished task leaves in memory for
// the thought agent and the planner to read on the next request.

// Learner turns every finished task into memory: a learning (what was
// asked, which tools ran, how it ended), a use of the plan pattern (goal →
// tool sequence, with its success counter), and insights derived from the
// steps that failed or needed retries. Its Learn method is an
// [ExecutorOptions.OnEnd].
//
// Tool-performance counters are not touched here: the router counts every
// call the executor makes through it (latency, errors, error classes) as the
// call happens, so counting them again at the end of the task would count
// every call twice.
//
// Learnings, Patterns and Insights may each be nil, which turns that part of
// the loop off.
type Learner struct {
	Learnings agentsmcp.LearningService
	Patterns  agentsmcp.PatternService
	Insights  agentsmcp.InsightService
	// Catalog names the source of each tool (an upstream, or "local") for
	// Learning.Upstreams. Nil: the upstream of a tool is the prefix of its
	// name before "__", as the router names remote tools.
	Catalog agentsmcp.ToolCatalog
	// Written is called once after Learn has written anything, so that the
	// vector index learns about it (memory/vectorsync's Syncer.Notify);
	// may be nil.
	Written func()
	Logger  *slog.Logger
}

// Confidences of the insights the learner derives on its own, from one
// task: below what a user asserting an insight would give.
const (
	pitfallConfidence     = 0.6
	observationConfidence = 0.4
)

// InsightSourceAgent is the Source of the insights the learner derives.
const InsightSourceAgent = "agent"

// Bounds of what the learner writes.
const (
	// MaxErrorClassBytes bounds an error class as insights quote it.
	MaxErrorClassBytes = 200
	// MaxGoalTagBytes bounds the goal of a GoalTag.
	MaxGoalTagBytes = 200
	// maxLearnedErrorBytes bounds one entry of Learning.Errors.
	maxLearnedErrorBytes = 1 << 10
	// maxArgumentNameBytes bounds the argument name an insight quotes.
	maxArgumentNameBytes = 100
	// maxDedupPages bounds the pages of similar insights read to find a
	// duplicate.
	maxDedupPages = 5
)

// GoalTag is the AppliesTo entry that tied an insight to a goal: "goal:"
// and the goal, cut to MaxGoalTagBytes. The learner tagged the insights it
// derived with it before task families (it now tags them with FamilyTag);
// the agents still read it, for the exact goal of a request.
func GoalTag(goal string) string {
	return "goal:" + storedform.TruncateUTF8(goal, MaxGoalTagBytes)
}

// Learn records what task t, run from plan p, taught. It fits
// ExecutorOptions.OnEnd and is meant to be called once, when t has ended; a
// task that has not ended is ignored. It writes, each step independent of
// the others failing:
//
//   - the learning: request, goal, the tools of the steps that ran in the
//     order they started, outcome, duration, step errors and retries. Its
//     id is derived from the task's, so a second Learn of the same task
//     finds it taken and stops there: nothing is learned twice;
//   - one use of the plan pattern (goal, steps), a success when the task
//     succeeded with every step, when at least one step ran and the task
//     was not cancelled (a cancelled task says nothing about its plan);
//   - pitfalls for the steps that failed and observations for those that
//     succeeded after retries, tagged with the tool and the task family
//     (FamilyTag), unless an insight with the same text, tool and family
//     exists already.
//
// Everything it writes belongs to the principal ctx carries
// (agentsmcp.MemoryOwnerFrom: the anonymous one when there is none), and
// the search for a known insight looks at that principal's only, so that
// each principal's memory is whole however memory is shared.
//
// Errors are logged, never returned: learning is best effort and must not
// change how the task ended. Learn stops when ctx ends.
func (l *Learner) Learn(ctx context.Context, t *agentsmcp.Task, p *agentsmcp.Plan) {
	log := l.logger()
	defer func() {
		if v := recover(); v != nil {
			log.Error("learning from a task panicked", "panic", fmt.Sprint(v))
		}
	}()
	if t == nil || !t.Status.Terminal() {
		return
	}
	if err := ctx.Err(); err != nil {
		log.Warn("not learning from a task: no time left", "task", t.ID, "error", err)
		return
	}
	wrote := false
	defer func() {
		if wrote && l.Written != nil {
			l.Written()
		}
	}()

	lr, steps := l.learningOf(ctx, t, p)
	lr.Principal = agentsmcp.MemoryOwnerFrom(ctx)
	log = log.With("task", t.ID, "goal", lr.Goal)
	if l.Learnings != nil {
		switch err := l.Learnings.CreateLearning(ctx, lr); {
		case agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT:
			log.Debug("task learned already")
			return
		case err != nil:
			log.Warn("storing the learning of a task failed", "error", err)
		default:
			wrote = true
		}
	}

	if l.Patterns != nil && ctx.Err() == nil {
		switch {
		case len(steps) == 0 || lr.Outcome == agentsmcp.OutcomeCancelled:
			// Nothing ran, or the user stopped it: no evidence about the plan.
		case len(steps) > agentsmcp.MaxListItems:
			// Patterns are limited to MaxListItems steps; cutting the
			// sequence would record a plan that never ran under the
			// counters of one that did.
			log.Debug("plan too long to record as a pattern", "steps", len(steps))
		default:
			_, err := l.Patterns.RecordPatternUse(ctx, lr.Principal, lr.Goal, lr.Steps, lr.Outcome == agentsmcp.OutcomeSuccess, t.EndedAt)
			if err != nil {
				log.Warn("recording the plan pattern of a task failed", "error", err)
			} else {
				wrote = true
			}
		}
	}

	if l.Insights != nil {
		for _, in := range insightsOf(t, p, lr.Goal) {
			in.Principal = lr.Principal
			if ctx.Err() != nil {
				log.Warn("stopped deriving insights: no time left", "error", ctx.Err())
				break
			}
			if l.storeInsight(ctx, log, in) {
				wrote = true
			}
		}
	}
}

func (l *Learner) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ranStep is a step of the task that ran (or was tried), with its tool;
// for a repaired step, plan is the step as repaired (its replacement tool
// and arguments).
type ranStep struct {
	state *agentsmcp.StepState
	plan  *agentsmcp.PlanStep // nil when the plan does not have it
	tool  string
}

// ranSteps returns the steps of t that ran, in the order they started: the
// steps that succeeded or failed (a step that failed before its call, on
// arguments that cannot be resolved, is ordered by when it ended) and the
// ones cancelled while running. Skipped steps, and steps that never started,
// are left out.
func ranSteps(t *agentsmcp.Task, p *agentsmcp.Plan) []ranStep {
	byID := map[string]*agentsmcp.PlanStep{}
	if p != nil {
		for i := range p.Steps {
			byID[p.Steps[i].ID] = &p.Steps[i]
		}
	}
	var out []ranStep
	for i := range t.Steps {
		s := &t.Steps[i]
		switch {
		case s.Status == agentsmcp.StepSucceeded || s.Status == agentsmcp.StepFailed:
		case s.Status == agentsmcp.StepCancelled && !s.StartedAt.IsZero():
		default:
			continue
		}
		ps := byID[s.StepID]
		if ps == nil {
			continue // no tool to name
		}
		if s.RepairedTool != "" {
			// The repair's tool is the one that ran last, and the one that
			// worked when the step succeeded: the family's next plan and
			// its pattern start with it (the failed tool's calls are in
			// its reliability record).
			repaired := *ps
			repaired.Tool, repaired.Arguments = s.RepairedTool, s.RepairedArguments
			ps = &repaired
		}
		out = append(out, ranStep{state: s, plan: ps, tool: ps.Tool})
	}
	startOf := func(r ranStep) time.Time {
		if !r.state.StartedAt.IsZero() {
			return r.state.StartedAt
		}
		return r.state.EndedAt
	}
	slices.SortStableFunc(out, func(a, b ranStep) int {
		x, y := startOf(a), startOf(b)
		switch {
		case x.IsZero() && y.IsZero():
			return 0
		case x.IsZero():
			return 1 // unknown times last, in plan order
		case y.IsZero():
			return -1
		}
		return x.Compare(y)
	})
	return out
}

// learningOf builds the learning of t, within the store's limits, and
// returns with it the tools of every step that ran (Learning.Steps holds at
// most MaxListItems of them).
func (l *Learner) learningOf(ctx context.Context, t *agentsmcp.Task, p *agentsmcp.Plan) (*agentsmcp.Learning, []string) {
	query := t.Request
	if strings.TrimSpace(query) == "" && p != nil {
		query = p.Request
	}
	// A learning is shared knowledge, served to every reader of memory
	// (query_memory, the admin API, the next plans): secrets the caller
	// typed into the request or that a tool echoed in an error stay out.
	// (The goal is the key of plan patterns and is left as the model gave
	// it.)
	lr := &agentsmcp.Learning{
		TaskID:  t.ID,
		Query:   redact.Text(query, agentsmcp.MaxQueryTextBytes),
		Goal:    goalOfTask(t, p),
		Outcome: outcomeOf(t),
	}
	// The plan is recorded only when it is what ran: repairs live in the
	// task, which tasks.retention may delete.
	if !slices.ContainsFunc(t.Steps, func(s agentsmcp.StepState) bool { return s.RepairedTool != "" }) {
		lr.PlanID = t.PlanID
	}
	if id, ok := strings.CutPrefix(t.ID, agentsmcp.TaskIDPrefix+"_"); ok && agentsmcp.IDPattern.MatchString(agentsmcp.LearningIDPrefix+"_"+id) {
		lr.ID = agentsmcp.LearningIDPrefix + "_" + id
	}
	sources := map[string]string{}
	for _, r := range ranSteps(t, p) {
		lr.Steps = append(lr.Steps, r.tool)
		if !slices.Contains(lr.Tools, r.tool) {
			lr.Tools = append(lr.Tools, r.tool)
			up := l.upstreamOf(ctx, r.tool, sources)
			if up != "" && !slices.Contains(lr.Sources, up) {
				lr.Sources = append(lr.Sources, up)
			}
		}
	}
	// The tools repairs left were used too, and failed: listed in Tools
	// (not in Steps, the plan as it ran), so that the family's record of
	// each tool counts them (see Gatherer.addFamilyRecord).
	for _, left := range repairedAway(t, p) {
		if !slices.Contains(lr.Tools, left.tool) {
			lr.Tools = append(lr.Tools, left.tool)
		}
	}
	for _, s := range t.Steps {
		lr.Retries += max(s.Attempts-1, 0)
		if s.Status == agentsmcp.StepFailed && s.Error != "" {
			e := redact.Text(s.Error, maxLearnedErrorBytes)
			if !slices.Contains(lr.Errors, e) {
				lr.Errors = append(lr.Errors, e)
			}
		}
	}
	if len(lr.Errors) == 0 && t.Status == agentsmcp.TaskFailed && t.Error != "" {
		lr.Errors = []string{redact.Text(t.Error, maxLearnedErrorBytes)}
	}
	end := t.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	if !t.CreatedAt.IsZero() {
		lr.Duration = max(end.Sub(t.CreatedAt), 0)
	}
	steps := lr.Steps
	lr.Steps = capList(lr.Steps)
	lr.Tools = capList(lr.Tools)
	lr.Sources = capList(lr.Sources)
	lr.Errors = capList(lr.Errors)
	return lr, steps
}

func capList(list []string) []string {
	if len(list) > agentsmcp.MaxListItems {
		return list[:agentsmcp.MaxListItems]
	}
	return list
}

// goalOfTask is the plan's goal (the planner sets its task family) when
// it has one, else the family of the request.
func goalOfTask(t *agentsmcp.Task, p *agentsmcp.Plan) string {
	goal := ""
	if p != nil {
		goal = strings.TrimSpace(p.Goal)
	}
	if goal == "" {
		goal = FamilyOf(t.Request)
	}
	if goal == "" && p != nil {
		goal = FamilyOf(p.Request)
	}
	return storedform.TruncateUTF8(goal, agentsmcp.MaxQueryTextBytes)
}

// outcomeOf says how t ended: success when it succeeded with every step,
// partial when it succeeded with steps skipped or rejected, or failed after
// some steps succeeded, failure when no step succeeded.
func outcomeOf(t *agentsmcp.Task) agentsmcp.Outcome {
	switch t.Status {
	case agentsmcp.TaskCancelled:
		return agentsmcp.OutcomeCancelled
	case agentsmcp.TaskSucceeded:
		for _, s := range t.Steps {
			if s.Status != agentsmcp.StepSucceeded {
				return agentsmcp.OutcomePartial
			}
		}
		return agentsmcp.OutcomeSuccess
	}
	for _, s := range t.Steps {
		if s.Status == agentsmcp.StepSucceeded {
			return agentsmcp.OutcomePartial
		}
	}
	return agentsmcp.OutcomeFailure
}

// upstreamOf is the upstream serving tool, "" for a local tool; cache
// keeps the answers of one Learn.
func (l *Learner) upstreamOf(ctx context.Context, tool string, cache map[string]string) string {
	if up, ok := cache[tool]; ok {
		return up
	}
	up := ""
	known := false
	if l.Catalog != nil {
		if info, err := l.Catalog.Tool(ctx, tool); err == nil && info != nil {
			known = true
			if info.Source != localSource {
				up = info.Source
			}
		}
	}
	if !known {
		// No catalog, or the tool is gone from it: the router names remote
		// tools <upstream>__<tool>.
		if i := strings.Index(tool, "__"); i > 0 {
			up = tool[:i]
		}
	}
	cache[tool] = up
	return up
}

// insightsOf derives the insights of t: a pitfall per failed step, an
// observation per step that succeeded after retries, each once.
func insightsOf(t *agentsmcp.Task, p *agentsmcp.Plan, goal string) []*agentsmcp.Insight {
	var out []*agentsmcp.Insight
	seen := map[string]bool{}
	add := func(typ agentsmcp.InsightType, tool, text string, confidence float64) {
		if seen[tool+"\x00"+text] {
			return
		}
		seen[tool+"\x00"+text] = true
		in := &agentsmcp.Insight{
			Text:       storedform.TruncateUTF8(text, agentsmcp.MaxInsightTextBytes),
			Type:       typ,
			AppliesTo:  []string{tool},
			Confidence: confidence,
			Evidence:   []string{},
			Source:     InsightSourceAgent,
		}
		if goal != "" {
			in.AppliesTo = append(in.AppliesTo, FamilyTag(goal))
		}
		if t.ID != "" {
			in.Evidence = append(in.Evidence, t.ID)
		}
		out = append(out, in)
	}
	for _, r := range repairedAway(t, p) {
		// The step went on with another tool, so the task may have
		// succeeded; the tool it left still failed on this family's
		// request, which is what the next plan of the family must know.
		add(agentsmcp.InsightPitfall, r.tool, fmt.Sprintf("%s failed with %q; the step was repaired with %s", r.tool, r.class, r.replacement), pitfallConfidence)
	}
	for _, r := range ranSteps(t, p) {
		switch s := r.state; {
		case s.Status == agentsmcp.StepFailed:
			class := ErrorClass(stripGaveUp(s.Error))
			if arg := emptyArgument(r.plan.Arguments, t.Inputs); arg != "" {
				add(agentsmcp.InsightPitfall, r.tool, fmt.Sprintf("%s fails with %q when argument %s is empty", r.tool, class, arg), pitfallConfidence)
			} else {
				add(agentsmcp.InsightPitfall, r.tool, fmt.Sprintf("%s failed with %q", r.tool, class), pitfallConfidence)
			}
		case s.Status == agentsmcp.StepSucceeded && s.Attempts >= 2:
			if why := retryError(t, s.StepID); why != "" {
				add(agentsmcp.InsightObservation, r.tool, fmt.Sprintf("%s needed %d attempts (transient: %s)", r.tool, s.Attempts, ErrorClass(why)), observationConfidence)
			} else {
				add(agentsmcp.InsightObservation, r.tool, fmt.Sprintf("%s needed %d attempts", r.tool, s.Attempts), observationConfidence)
			}
		}
	}
	return out
}

// leftTool is the tool a repaired step left: the plan's, which failed for
// good, with the class of its error and the tool that replaced it.
type leftTool struct {
	tool, class, replacement string
}

// repairedAway returns the tools t's repairs left, in plan order. The
// error is the one the step_repaired event of the step quotes (the step's
// own Error is the replacement's, or empty once it succeeded).
func repairedAway(t *agentsmcp.Task, p *agentsmcp.Plan) []leftTool {
	if p == nil {
		return nil
	}
	var out []leftTool
	for _, s := range t.Steps {
		if s.RepairedTool == "" {
			continue
		}
		i := slices.IndexFunc(p.Steps, func(ps agentsmcp.PlanStep) bool { return ps.ID == s.StepID })
		if i < 0 || p.Steps[i].Tool == s.RepairedTool {
			continue
		}
		class := "an error"
		for _, e := range t.History {
			if e.Type == eventStepRepaired && e.StepID == s.StepID {
				if _, after, ok := strings.Cut(e.Message, repairedErrorNote); ok {
					class = ErrorClass(after)
				}
			}
		}
		out = append(out, leftTool{tool: p.Steps[i].Tool, class: class, replacement: s.RepairedTool})
	}
	return out
}

// storeInsight stores in unless an insight of its principal with the same
// text applies to all it applies to (the same tool, the same family)
// already; it reports whether it wrote. Two replicas learning at
// once may both store it: deduplication is a lookup, not a constraint.
func (l *Learner) storeInsight(ctx context.Context, log *slog.Logger, in *agentsmcp.Insight) bool {
	tool := in.AppliesTo[0]
	f := agentsmcp.InsightFilter{AppliesTo: tool, Text: storedform.TruncateUTF8(in.Text, agentsmcp.MaxQueryTextBytes), Principal: in.Principal, Limit: agentsmcp.MaxPageSize}
	for range maxDedupPages {
		items, next, err := l.Insights.FindInsights(ctx, f)
		if err != nil {
			// Storing blind could repeat an insight; it will come again.
			log.Warn("looking for a known insight failed", "tool", tool, "error", err)
			return false
		}
		for _, have := range items {
			// The same lesson learned in another family does not tell
			// this family's plans to avoid the tool: it is stored again,
			// with this family's tag.
			if have.Text == in.Text && !slices.ContainsFunc(in.AppliesTo, func(tag string) bool { return !slices.Contains(have.AppliesTo, tag) }) {
				return false
			}
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if err := l.Insights.CreateInsight(ctx, in); err != nil {
		log.Warn("storing an insight failed", "tool", tool, "error", err)
		return false
	}
	return true
}

// gaveUp is the note step.go appends to the error of a step that ran out of
// attempts: the executor's fact, not part of the tool's error.
var gaveUp = regexp.MustCompile(`\s*\(gave up after \d+ attempts[^()]*\)\s*$`)

func stripGaveUp(s string) string { return gaveUp.ReplaceAllString(s, "") }

// retryError is the error of the last failed attempt of a step that was
// retried, read from the task's "step_retrying" events ("attempt N failed:
// <error>; retrying in <wait>", as runner.go writes them); "" when the
// history no longer holds one.
func retryError(t *agentsmcp.Task, stepID string) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		e := t.History[i]
		if e.Type != "step_retrying" || e.StepID != stepID {
			continue
		}
		msg := e.Message
		if _, rest, ok := strings.Cut(msg, " failed: "); ok && strings.HasPrefix(msg, "attempt ") {
			msg = rest
		}
		if j := strings.LastIndex(msg, "; retrying in "); j >= 0 {
			msg = msg[:j]
		}
		return msg
	}
	return ""
}

// emptyArgument names an argument of a step that was empty when it ran:
// written as "", null, [] or {} in the plan, or a whole reference to a task
// input that the task lacks or holds empty. Arguments nested in objects are
// named by their path ("options.path"). The first in name order, "" when
// none is empty.
func emptyArgument(args json.RawMessage, inputs json.RawMessage) string {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(args, &top); err != nil {
		return ""
	}
	var empty []string
	for name, v := range top {
		if isEmptyJSON(v) {
			empty = append(empty, name)
		}
	}
	if refs, err := planlang.FindRefs(args); err == nil {
		for _, ref := range refs {
			if ref.Kind != planlang.RefInput || !ref.Whole {
				continue
			}
			if v, err := ref.Lookup(planlang.RefValues{Inputs: inputs}); err != nil || isEmptyJSON(v) {
				empty = append(empty, pointerName(ref.Pointer))
			}
		}
	}
	if len(empty) == 0 {
		return ""
	}
	return storedform.TruncateUTF8(slices.Min(empty), maxArgumentNameBytes)
}

// isEmptyJSON reports whether v is "", a blank string, null, [] or {}.
func isEmptyJSON(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return true
	case v[0] == '"':
		var s string
		return json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) == ""
	case v[0] == '[' || v[0] == '{':
		var buf bytes.Buffer
		return json.Compact(&buf, v) == nil && buf.Len() == 2
	}
	return false
}

// pointerName turns a JSON pointer into a dotted argument path:
// "/options/path" → "options.path".
func pointerName(ptr string) string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return strings.Join(parts, ".")
}

// Placeholders of GoalOf and ErrorClass for the values that vary from one
// request or error to the next.
const (
	placeholderText  = "<text>"
	placeholderNum   = "<num>"
	placeholderPath  = "<path>"
	placeholderURL   = "<url>"
	placeholderEmail = "<email>"
	placeholderID    = "<id>"
	// placeholderSecret stands for what redact.Text removes
	// from a request (a password, a token): see withoutSecrets.
	placeholderSecret = "<secret>"
)

// withoutSecrets is a request as GoalOf and FamilyOf read it: through the
// redaction the stored request goes through (redact.Text, whole),
// each secret it removed a placeholderSecret. So a goal or a family, which
// are stored, shown and shared as keys, never holds what the request's own
// redaction hides, whatever the wording ("password=x", "my password is
// x", "api key x"), and the family of a stored (redacted) request is the
// family of the request it was.
func withoutSecrets(request string) string {
	s := redact.Text(request, 2*len(request)+64)
	if !strings.Contains(s, redact.Marker) {
		return s
	}
	// A space before, none after: punctuation that follows stays on the
	// placeholder's token ("password=<secret>," ends a clause).
	return strings.ReplaceAll(s, redact.Marker, " "+placeholderSecret)
}

// secretToken reports whether tok is the placeholder of a secret, with
// only the punctuation in goalTrim after it, which it returns.
func secretToken(tok string) (tail string, ok bool) {
	tail, ok = strings.CutPrefix(tok, placeholderSecret)
	return tail, ok && strings.Trim(tail, goalTrim) == ""
}

// ErrorClass normalises an error text to what insights quote: its first
// line, with the values that vary from one call to the next (quoted values,
// URLs, paths, long ids, numbers) replaced by placeholders, space
// collapsed, cut to MaxErrorClassBytes; "error" when nothing is left. So
// `open "/a/b.txt": 3 retries` and `open "/c.txt": 5 retries` are one class.
// Secrets (by redact.Text's patterns) are redacted first.
func ErrorClass(text string) string {
	line, _, _ := strings.Cut(strings.ToValidUTF8(text, "\uFFFD"), "\n")
	line = redact.Text(line, len(line)+8) // insights are shared: no secret a tool echoed (8: room for the cut marker, never used)
	line = replaceQuoted(strings.TrimSpace(line), placeholderText)
	line = classURL.ReplaceAllString(line, placeholderURL)
	line = classPath.ReplaceAllString(line, "${1}"+placeholderPath)
	line = classID.ReplaceAllStringFunc(line, func(s string) string {
		if countDigits(s) >= 3 { // a generated id, not a word
			return placeholderID
		}
		return s
	})
	line = classNum.ReplaceAllString(line, placeholderNum+"$1") // a unit stays: 30s is <num>s
	line = strings.Join(strings.Fields(line), " ")
	// Cutting must not leave half a placeholder; cut at a space when one is
	// near.
	if len(line) > MaxErrorClassBytes {
		line = storedform.TruncateUTF8(line, MaxErrorClassBytes)
		if i := strings.LastIndexByte(line, ' '); i > MaxErrorClassBytes/2 {
			line = line[:i]
		}
	}
	if line == "" {
		return "error"
	}
	return line
}

var (
	classURL  = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s,;)\]]*`)
	classPath = regexp.MustCompile(`(^|[\s=:(\[,])(?:~|\.{1,2})?/[^\s,;:)\]]*`)
	classID   = regexp.MustCompile(`[A-Za-z0-9_-]{12,}`)
	classNum  = regexp.MustCompile(`\b\d+(?:[.,:]\d+)*([A-Za-z%]{0,3})\b`)
)

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// replaceQuoted replaces every quoted value of s ("…", `…`, “…”, ‘…’, and
// '…' when the quote opens a word and closes one, so that apostrophes stay)
// with repl. An opening quote without its closing one stays as it is.
func replaceQuoted(s, repl string) string {
	if !strings.ContainsAny(s, "\"'`“‘") {
		return s
	}
	var b strings.Builder
	prev := ' '
	// A quote that finds no closer from one place finds none from any
	// later one: looking again would make the scan quadratic.
	unclosed := map[rune]bool{}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		closer := rune(0)
		switch r {
		case '"', '`':
			closer = r
		case '“':
			closer = '”'
		case '‘':
			closer = '’'
		case '\'':
			if !unicode.IsLetter(prev) && !unicode.IsDigit(prev) {
				closer = '\''
			}
		}
		if closer != 0 && !unclosed[closer] {
			if end := closingQuote(s, i+size, closer); end >= 0 {
				b.WriteString(repl)
				i = end
				prev = ' '
				continue
			}
			unclosed[closer] = true
		}
		b.WriteString(s[i : i+size])
		prev = r
		i += size
	}
	return b.String()
}

// closingQuote returns the index just past the quote that closes a value
// started at from, or -1. A single quote closes only when no letter or digit
// follows it ("it's" does not).
func closingQuote(s string, from int, closer rune) int {
	for j := from; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if r != closer {
			continue
		}
		if closer == '\'' {
			if next, _ := utf8.DecodeRuneInString(s[j:]); j < len(s) && (unicode.IsLetter(next) || unicode.IsDigit(next)) {
				continue
			}
		}
		return j
	}
	return -1
}

// goalStopWords are dropped from goals: articles, pronouns, auxiliaries,
// politeness and the prepositions that only locate a value. Words that
// change what is asked (not, without, all, only, up, out, off…) stay.
var goalStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the this that these those there here
		i me my mine we us our you your it its he she they them their
		is are was were be been being am do does did done
		can could would will shall should may might please kindly
		want wanna need let lets like help just also then so very really
		and or but of to in on at for from by with into onto under within inside via as
		what which who whom whose how some any`) {
		goalStopWords[w] = true
	}
}

var (
	goalURL   = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`)
	goalEmail = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[a-z]{2,}$`)
	goalNum   = regexp.MustCompile(`^[-+#]?\d[\d,.:/_-]*[a-z%]{0,3}$`)
	goalFile  = regexp.MustCompile(`^[\p{L}\d_-]{2,}(?:\.[\p{L}\d_-]+)*\.[a-z][a-z0-9]{0,4}$`)
	goalDrive = regexp.MustCompile(`^[a-z]:[\\/]`)
)

// goalTrim is what surrounds a word without being part of it;
// goalTrimLeft the same but the dot.
const (
	goalTrim     = ".,;:!?()[]{}<>\"'`“”‘’"
	goalTrimLeft = ",;:!?()[]{}<>\"'`“”‘’"
)

// GoalOf generalises a request into the goal it serves, the key of plan
// patterns before task families (FamilyOf builds on it): lower-cased, stop words dropped, and the values that vary from
// one request of a kind to the next replaced by placeholders: quoted
// strings by <text>, URLs by <url>, e-mail addresses by <email>, numbers
// (with a unit, a date, a time) by <num>, paths and file names by <path>,
// and what redact.Text removes (a password, a token, whatever the
// wording) by <secret>, so that no goal holds a secret.
// So "find the 3 largest files under /data" and "Find the 5 largest files
// under /srv" both give "find <num> largest files <path>". Word order is
// kept: "convert csv to json" and "convert json to csv" differ. A request
// made of stop words only gives its own words, lower-cased. The goal is at
// most MaxQueryTextBytes.
func GoalOf(request string) string { return goalMemo.of(request, goalOf) }

func goalOf(request string) string {
	lower := strings.ToLower(withoutSecrets(strings.ToValidUTF8(request, "\uFFFD")))
	s := replaceQuoted(lower, " "+placeholderText+" ")
	var words []string
	for _, tok := range strings.Fields(s) {
		if tok == placeholderText {
			words = append(words, tok)
			continue
		}
		if _, ok := secretToken(tok); ok {
			words = append(words, placeholderSecret)
			continue
		}
		// A leading dot belongs to ./relative and ../paths and .hidden
		// files; a trailing one ends a sentence.
		trimmed := strings.TrimRight(strings.TrimLeft(tok, goalTrimLeft), goalTrim)
		if trimmed == "" {
			continue
		}
		switch {
		case goalURL.MatchString(trimmed):
			words = append(words, placeholderURL)
		case goalEmail.MatchString(trimmed):
			words = append(words, placeholderEmail)
		case goalNum.MatchString(trimmed):
			words = append(words, placeholderNum)
		case isGoalPath(trimmed):
			words = append(words, placeholderPath)
		default:
			words = appendGoalWords(words, trimmed)
		}
	}
	goal := strings.Join(words, " ")
	if goal == "" {
		goal = strings.Join(strings.Fields(lower), " ")
	}
	return storedform.TruncateUTF8(goal, agentsmcp.MaxQueryTextBytes)
}

// isGoalPath recognises a path (absolute, relative with ./ or ../, under ~,
// a Windows drive, or with a separator and a file name) or a file name
// ("report.csv").
func isGoalPath(w string) bool {
	switch {
	case strings.HasPrefix(w, "/"), strings.HasPrefix(w, "~"), strings.HasPrefix(w, "./"), strings.HasPrefix(w, "../"),
		goalDrive.MatchString(w), strings.Contains(w, `\`):
		return true
	case strings.Contains(w, "/"):
		last := w[strings.LastIndexByte(w, '/')+1:]
		return strings.Contains(last, ".") || last == ""
	case strings.HasPrefix(w, ".") && len(w) > 1:
		return true // a hidden file: .env, .bashrc
	}
	return goalFile.MatchString(w)
}

// apostrophes removes the apostrophes of a word ("don't" is "dont"); a
// Replacer is built once, on first use, and is safe for concurrent use.
var apostrophes = strings.NewReplacer("'", "", "’", "")

// appendGoalWords appends the words of w (runs of letters and digits,
// apostrophes dropped: "don't" is "dont"), without stop words, numbers
// made placeholders.
func appendGoalWords(words []string, w string) []string {
	w = apostrophes.Replace(w)
	for _, run := range strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		switch {
		case goalStopWords[run]:
		case strings.IndexFunc(run, func(r rune) bool { return !unicode.IsDigit(r) }) < 0:
			words = append(words, placeholderNum)
		default:
			words = append(words, run)
		}
	}
	return words
}
