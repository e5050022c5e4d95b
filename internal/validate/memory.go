package validate

import (
	"math"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Insight checks the invariants of an Insight (ID and CreatedAt may be
// empty: the store assigns them).
func Insight(in *agentsmcp.Insight) error {
	switch {
	case in == nil:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "insight is required")
	case len(in.Text) == 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "insight text is required")
	case len(in.Text) > agentsmcp.MaxInsightTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "insight text is %d bytes; the limit is %d", len(in.Text), agentsmcp.MaxInsightTextBytes)
	case !slices.Contains(agentsmcp.InsightTypes, in.Type):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "insight type %q is not one of %v", in.Type, agentsmcp.InsightTypes)
	case in.Confidence < 0 || in.Confidence > 1 || math.IsNaN(in.Confidence):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "insight confidence %v is not in [0, 1]", in.Confidence)
	case in.ID != "" && !agentsmcp.IDPattern.MatchString(in.ID):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "insight id %q is malformed", in.ID)
	}
	return checkLists(map[string][]string{"appliesTo": in.AppliesTo, "evidence": in.Evidence})
}

// Learning checks the invariants of a Learning (ID and CreatedAt may be
// empty: the store assigns them).
func Learning(l *agentsmcp.Learning) error {
	switch {
	case l == nil:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "learning is required")
	case len(l.Query) == 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "learning query is required")
	case len(l.Query) > agentsmcp.MaxQueryTextBytes || len(l.Goal) > agentsmcp.MaxQueryTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "learning query and goal are limited to %d bytes", agentsmcp.MaxQueryTextBytes)
	case !slices.Contains(agentsmcp.Outcomes, l.Outcome):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "learning outcome %q is not one of %v", l.Outcome, agentsmcp.Outcomes)
	case l.Duration < 0 || l.Retries < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "learning duration and retries must not be negative")
	case l.ID != "" && !agentsmcp.IDPattern.MatchString(l.ID):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "learning id %q is malformed", l.ID)
	}
	return checkLists(map[string][]string{"steps": l.Steps, "tools": l.Tools, "upstreams": l.Sources, "errors": l.Errors})
}

// PatternUse checks the arguments of RecordPatternUse: a goal that
// is not blank and at most MaxQueryTextBytes, and at most MaxListItems steps.
func PatternUse(goal string, steps []string) error {
	switch {
	case strings.TrimSpace(goal) == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pattern goal is required")
	case len(goal) > agentsmcp.MaxQueryTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pattern goal is %d bytes; the limit is %d", len(goal), agentsmcp.MaxQueryTextBytes)
	case len(steps) > agentsmcp.MaxListItems:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pattern has %d steps; the limit is %d", len(steps), agentsmcp.MaxListItems)
	}
	return nil
}

func checkLists(lists map[string][]string) error {
	for name, list := range lists {
		if len(list) > agentsmcp.MaxListItems {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "%s has %d entries; the limit is %d", name, len(list), agentsmcp.MaxListItems)
		}
	}
	return nil
}
