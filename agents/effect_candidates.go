package agents

import (
	"regexp"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file widens a sub-goal's candidates by what the request does, when
// its words say it beyond doubt and the search cannot: "Drop Samuel Okafor
// a line", "Shoot Chloe a note", "Write to Aiko" send a message, and share
// no word with "send an email message to an address". The catalog's tools
// that send are then candidates, below the search's best match: few tools
// send, and the request's values decide among them and the others (see
// requestFit).

// sendIdiom finds the phrasings of sending a message that no verb of
// effectVerbs says: write to someone, drop or shoot someone a line or a
// note, let someone know.
var sendIdiom = regexp.MustCompile(`^(?:write\s+(?:to|back\s+to)\s|(?:drop|shoot|send)\s+\S+(?:\s+\S+){0,3}?\s+an?\s+(?:line|note|message|mail|email|e-mail)\b|let\s+\S+(?:\s+\S+){0,3}?\s+know\b)`)

// sendsByIdiom reports whether text, its politeness aside, starts with a
// phrasing of sending a message (see sendIdiom).
func sendsByIdiom(text string) bool {
	words := strings.Fields(strings.ToLower(text))
	for len(words) > 0 && politeness[strings.Trim(words[0], goalTrim)] {
		words = words[1:]
	}
	return sendIdiom.MatchString(strings.Join(words, " "))
}

// sendingTools are the tools of all, beyond have, whose name or
// description says they send (see toolEffects), when goal asks to send;
// scored as have's best match, since the request's verb is the strongest
// evidence there is of what it wants; at most max. Nil for a goal of
// another effect.
func sendingTools(all []*agentsmcp.ToolInfo, goal string, have []*agentsmcp.ToolMatch, max int) []*agentsmcp.ToolMatch {
	if requestEffect(goal) != effectSend {
		return nil
	}
	score := 0.01
	if len(have) > 0 {
		score = have[0].Score
	}
	var out []*agentsmcp.ToolMatch
	for _, t := range all {
		if len(out) == max {
			break
		}
		if isAgentTool(t.Name) || toolEffects(t.Name, t.Description)&effectSend == 0 ||
			slices.ContainsFunc(have, func(m *agentsmcp.ToolMatch) bool { return m.Name == t.Name }) {
			continue
		}
		out = append(out, &agentsmcp.ToolMatch{ToolInfo: *t, Score: score, Why: "the request asks to send a message, and this tool sends"})
	}
	return out
}

// sendersOnly reports whether the best tool of goal must be one that
// sends: goal asks to send, and a usable candidate sends. A tool whose
// effect is unknown may read or write anything, and sends nothing the
// request can rely on; reading and writing are too common in tools'
// names for the same rule ("Find the lat/long of …" is no lookup of a
// person).
func sendersOnly(k *Knowledge, goal string) bool {
	if requestEffect(goal) != effectSend {
		return false
	}
	return slices.ContainsFunc(k.Candidates[goal], func(m *agentsmcp.ToolMatch) bool {
		f := k.Tools[m.Name]
		return f != nil && f.Usable() && toolEffects(f.Name, f.Description)&effectSend != 0
	})
}
