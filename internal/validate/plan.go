package validate

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Thought checks the invariants of a Thought (ID and CreatedAt may be
// empty: the store assigns them).
func Thought(th *agentsmcp.Thought) error {
	switch {
	case th == nil:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought is required")
	case strings.TrimSpace(th.Request) == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought request is required")
	case len(th.Request) > agentsmcp.MaxQueryTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought request is %d bytes; the limit is %d", len(th.Request), agentsmcp.MaxQueryTextBytes)
	case len(th.Reasoning) > agentsmcp.MaxThoughtTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought reasoning is %d bytes; the limit is %d", len(th.Reasoning), agentsmcp.MaxThoughtTextBytes)
	case th.Confidence < 0 || th.Confidence > 1 || math.IsNaN(th.Confidence):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought confidence %v is not in [0, 1]", th.Confidence)
	case len(th.RecommendedTools) > agentsmcp.MaxListItems:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought recommends %d tools; the limit is %d", len(th.RecommendedTools), agentsmcp.MaxListItems)
	case th.ID != "" && !validID(th.ID, agentsmcp.ThoughtIDPrefix):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "thought id %q is malformed", th.ID)
	}
	if err := checkPrincipal(th.Principal, nil, "thought"); err != nil {
		return err
	}
	for _, r := range th.RecommendedTools {
		switch {
		case r.Tool == "" || len(r.Tool) > agentsmcp.MaxListEntryBytes:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "a recommended tool has no name, or a name over %d bytes", agentsmcp.MaxListEntryBytes)
		case len(r.Reason) > agentsmcp.MaxListEntryBytes:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "the reason to use %q is %d bytes; the limit is %d", r.Tool, len(r.Reason), agentsmcp.MaxListEntryBytes)
		}
	}
	lists := map[string][]string{
		"subGoals": th.SubGoals, "approaches": th.Approaches, "constraints": th.Constraints,
		"assumptions": th.Assumptions, "uncertainties": th.Uncertainties,
	}
	if err := checkLists(lists); err != nil {
		return err
	}
	for name, list := range lists {
		for _, v := range list {
			if len(v) > agentsmcp.MaxListEntryBytes {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "an entry of %s is %d bytes; the limit is %d", name, len(v), agentsmcp.MaxListEntryBytes)
			}
		}
	}
	return nil
}

// Plan checks the invariants of a Plan (ID and CreatedAt may be empty:
// the store assigns them). A dependency cycle is reported with its path,
// "a → b → a".
func Plan(p *agentsmcp.Plan) error {
	switch {
	case p == nil:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan is required")
	case strings.TrimSpace(p.Request) == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan request is required")
	case len(p.Request) > agentsmcp.MaxQueryTextBytes || len(p.Goal) > agentsmcp.MaxQueryTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan request and goal are limited to %d bytes", agentsmcp.MaxQueryTextBytes)
	case p.ID != "" && !validID(p.ID, agentsmcp.PlanIDPrefix):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan id %q is malformed", p.ID)
	case p.ThoughtID != "" && !validID(p.ThoughtID, agentsmcp.ThoughtIDPrefix):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan thought id %q is malformed", p.ThoughtID)
	case len(p.Steps) == 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan has no steps")
	case len(p.Steps) > agentsmcp.MaxPlanSteps:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan has %d steps; the limit is %d", len(p.Steps), agentsmcp.MaxPlanSteps)
	}
	if err := checkJSONObject(p.Inputs, agentsmcp.MaxPlanInputsBytes, "plan inputs"); err != nil {
		return err
	}
	if err := checkPrincipal(p.Principal, nil, "plan"); err != nil {
		return err
	}
	index := make(map[string]int, len(p.Steps))
	for i := range p.Steps {
		s := &p.Steps[i]
		if err := planStep(s); err != nil {
			return err
		}
		if _, dup := index[s.ID]; dup {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step id %q is used twice", s.ID)
		}
		index[s.ID] = i
	}
	for _, s := range p.Steps {
		for _, d := range s.DependsOn {
			if _, ok := index[d]; !ok {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q depends on %q, which is not a step of the plan", s.ID, d)
			}
		}
	}
	if cycle := findCycle(p.Steps, index); cycle != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan steps depend on each other in a cycle: %s", strings.Join(cycle, " → "))
	}
	return nil
}

func planStep(s *agentsmcp.PlanStep) error {
	switch {
	case !agentsmcp.IsStepID(s.ID):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step id %q does not match %v", s.ID, agentsmcp.StepIDPattern)
	case !agentsmcp.ToolNamePattern.MatchString(s.Tool):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q: tool %q does not match %v", s.ID, s.Tool, agentsmcp.ToolNamePattern)
	case s.Timeout < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q: timeout %v is negative", s.ID, s.Timeout)
	case len(s.Description) > agentsmcp.MaxQueryTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q: description is %d bytes; the limit is %d", s.ID, len(s.Description), agentsmcp.MaxQueryTextBytes)
	case len(s.DependsOn) > agentsmcp.MaxListItems:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q has %d dependencies; the limit is %d", s.ID, len(s.DependsOn), agentsmcp.MaxListItems)
	}
	for i, d := range s.DependsOn {
		if slices.Contains(s.DependsOn[:i], d) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q depends on %q twice", s.ID, d)
		}
	}
	if r := s.Retry; r != nil {
		switch {
		case r.MaxAttempts < 1 || r.MaxAttempts > agentsmcp.MaxRetryAttempts:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q: retry maxAttempts %d is not in [1, %d]", s.ID, r.MaxAttempts, agentsmcp.MaxRetryAttempts)
		case r.InitialBackoff < 0 || r.MaxBackoff < 0:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q: retry backoffs must not be negative", s.ID)
		case r.MaxBackoff > 0 && r.MaxBackoff < r.InitialBackoff:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "plan step %q: retry maxBackoff %v is below initialBackoff %v", s.ID, r.MaxBackoff, r.InitialBackoff)
		}
	}
	return checkJSONObject(s.Arguments, agentsmcp.MaxStepArgumentsBytes, "plan step "+s.ID+" arguments")
}

// findCycle returns a dependency cycle of steps as the ids along it, the
// first repeated at the end ("a", "b", "a"), or nil when there is none.
// Every dependency must be in index. Depth-first search, iterative so that
// no input can exhaust the stack; steps are visited in plan order, so the
// cycle reported is deterministic.
func findCycle(steps []agentsmcp.PlanStep, index map[string]int) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]int, len(steps))
	type frame struct{ step, next int } // next: the next dependency to follow
	for root := range steps {
		if state[root] != unvisited {
			continue
		}
		path := []frame{{root, 0}}
		state[root] = onPath
		for len(path) > 0 {
			top := &path[len(path)-1]
			deps := steps[top.step].DependsOn
			if top.next == len(deps) {
				state[top.step] = done
				path = path[:len(path)-1]
				continue
			}
			d := index[deps[top.next]]
			top.next++
			switch state[d] {
			case onPath:
				var cycle []string
				start := slices.IndexFunc(path, func(f frame) bool { return f.step == d })
				for _, f := range path[start:] {
					cycle = append(cycle, steps[f.step].ID)
				}
				return append(cycle, steps[d].ID)
			case unvisited:
				state[d] = onPath
				path = append(path, frame{d, 0})
			}
		}
	}
	return nil
}

// checkPrincipal checks the creator recorded with a thought, a plan or a
// task.
func checkPrincipal(id string, tools []string, what string) error {
	switch {
	case len(id) > agentsmcp.MaxPrincipalIDBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s principal is %d bytes; the limit is %d", what, len(id), agentsmcp.MaxPrincipalIDBytes)
	case len(tools) > agentsmcp.MaxListItems:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s principal allowlist has %d patterns; the limit is %d", what, len(tools), agentsmcp.MaxListItems)
	}
	for _, t := range tools {
		if t == "" || len(t) > agentsmcp.MaxListEntryBytes {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "%s principal allowlist has an empty pattern or one over %d bytes", what, agentsmcp.MaxListEntryBytes)
		}
	}
	return nil
}

// validID reports whether id is a well-formed id of the aggregate with the
// given prefix.
func validID(id, prefix string) bool {
	return agentsmcp.IDPattern.MatchString(id) && strings.HasPrefix(id, prefix+"_")
}

// checkJSONObject accepts an empty raw, or a JSON object of at most limit
// bytes.
func checkJSONObject(raw json.RawMessage, limit int, what string) error {
	if len(raw) == 0 {
		return nil
	}
	if len(raw) > limit {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s is %d bytes; the limit is %d", what, len(raw), limit)
	}
	if !json.Valid(raw) || !utf8.Valid(raw) {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s is not valid JSON", what)
	}
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); trimmed[0] != '{' {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s is not a JSON object", what)
	}
	return nil
}
