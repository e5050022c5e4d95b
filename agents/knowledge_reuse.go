package agents

import "slices"

// gatheredFor reports whether k is what Gatherer.Gather would gather for
// request and subGoals now, but for the moment it was gathered: the same
// request (trimmed, as Think and Plan trim it) and the same sub-goals (the
// request's own, SplitSubGoals, when subGoals is empty). A run_task
// thinks and then plans on the same request within milliseconds; gathering
// twice searched the catalog, recalled past tasks and read every
// candidate's record twice, for the same answer. Nil k: false.
func (k *Knowledge) gatheredFor(request string, subGoals []string) bool {
	if k == nil || k.Request != request {
		return false
	}
	if len(subGoals) == 0 {
		subGoals = SplitSubGoals(request)
	}
	return slices.Equal(k.SubGoals, subGoals)
}
