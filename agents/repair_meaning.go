package agents

import (
	"fmt"
	"slices"
	"strings"
)

// This file keeps a repair within the request's meaning. A value of the
// failed call moved onto a parameter of another name only because both
// take text (an address onto a glossary's "term") says nothing of what the
// replacement does: such a move is made only onto a tool that plainly
// serves the same need, one of the failed tool's upstream (see siblings),
// one that served the request's family, or one whose own words share what
// the request is about (see sharesObject). Else the replacement would
// "succeed" at another domain's job with the request's value.

// movedOffMeaning says why a candidate found by the search or by the
// sub-goal's values (origin) may not take the failed call's values as
// repair moved them, "" when it may: a move by type alone (see
// mapArguments), or onto a parameter of another name that takes free
// text or a value of no kind, onto a tool that shares no word with goal
// but a verb. failedSource is the failed tool's upstream: a tool of the
// same upstream serves the same need however it was found.
func movedOffMeaning(origin candidateOrigin, f *ToolFacts, repair *StepRepair, goal, failedSource string) string {
	sameUpstream := failedSource != "" && failedSource != localSource && f.Source == failedSource
	if origin == fromSibling || origin == fromFamily || sameUpstream || sharesObject(goal, f) {
		return ""
	}
	params, _ := schemaParams(f.InputSchema)
	for _, known := range repair.Known {
		to, from, ok := strings.Cut(known, " = ")
		if !ok || strings.HasSuffix(from, "(composed)") || to == from {
			continue
		}
		i := slices.IndexFunc(params, func(p slotParam) bool { return p.name == to })
		if i < 0 {
			continue
		}
		if repair.guessed || params[i].kind == slotText || params[i].kind == slotNone {
			return fmt.Sprintf("it would take the failed call's %s as its %s, a parameter of another meaning, and its name and description share no word with the request but a verb", from, to)
		}
	}
	return ""
}
