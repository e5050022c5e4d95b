package agents

import (
	"context"
	"strings"
	"unicode"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is the intent of a request and of a tool, as far as their verbs
// tell it: what a call does to the world. Plan reuse, family joining and
// repairs check it, so that a request is never served by a tool of another
// effect because the two share their other words ("store an insight about
// X" and "query insights about X").

// effect is a set of the effects a request asks for or a tool has.
type effect uint8

// The effects. They are the ways a call can act on the world, which is
// what a user's verb commits to and what no other word of a request can
// stand in for: a call that reads changes nothing (a request to store is
// not served by it, whatever it answers), one that writes makes or changes
// a record (a request to look something up is not served by it, it would
// change what it should read), one that removes destroys a record, and one
// that sends delivers something to someone. Create and update are one
// effect: "save the settings" is served by update_settings.
const (
	effectRead effect = 1 << iota
	effectWrite
	effectRemove
	effectSend
)

// effectVerbs are the verbs whose effect is beyond doubt, in requests and
// in tool names alike. Verbs of two effects are left out on purpose: "add"
// (add two numbers, add a note), "post" (an HTTP POST, a blog post),
// "tell" (tell me, tell Bob), "note", "book" (a book, to book), "load"
// (load a page, load data into a table), "log" (log in, log an event),
// "keep", "text", "drop" (drop a table, drop a line, drop it in a channel). A request or tool whose verb is not here has an unknown
// effect, which conflicts with nothing.
var effectVerbs = map[string]effect{}

func init() {
	for class, words := range map[effect]string{
		effectRead: `get fetch find search query lookup look list show read retrieve view browse display inspect count
			recall describe download check see`,
		effectWrite: `store save create record remember insert write put update edit modify change set rename patch
			upsert register upload append persist memorize memorise`,
		effectRemove: `delete remove erase forget clear purge destroy unset unlink revoke`,
		effectSend:   `send email mail notify message publish share dm forward reply broadcast tweet`,
	} {
		for _, w := range strings.Fields(words) {
			effectVerbs[w] = class
		}
	}
}

// requestEffect is the effect a request (or sub-goal) asks for: that of
// its leading verb, the first word left once politeness and stop words are
// dropped ("Please store …", "Can you look up …"); 0 when that word is no
// verb of effectVerbs ("What is the weather …", "Is it going to rain …").
func requestEffect(text string) effect {
	if sendsByIdiom(text) {
		return effectSend
	}
	words := strings.Fields(GoalOf(text))
	for _, w := range words {
		if politeness[w] {
			continue
		}
		return effectVerbs[w]
	}
	return 0
}

// toolEffects are the effects of a tool: those of the verbs of its name
// (its part after the upstream's prefix, split at _, - and case changes:
// query_memory, storeInsight), else that of the first word of its
// description; 0 when none is known (echo, add).
func toolEffects(name, description string) effect {
	if i := strings.LastIndex(name, agentsmcp.NamespaceSeparator); i >= 0 {
		name = name[i+len(agentsmcp.NamespaceSeparator):]
	}
	var e effect
	for _, w := range nameWords(name) {
		e |= effectVerbs[w]
	}
	if e != 0 {
		return e
	}
	if words := strings.Fields(strings.ToLower(description)); len(words) > 0 {
		return effectVerbs[strings.Trim(words[0], goalTrim)]
	}
	return 0
}

// nameWords splits an identifier into lower-case words: "query_memory",
// "storeInsight", "get-forecast".
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// servesIntent reports whether a tool of effects e can serve a request of
// effect want: either is unknown, or the tool has it.
func servesIntent(want, e effect) bool {
	return want == 0 || e == 0 || want&e != 0
}

// effectName names an effect for messages.
func effectName(e effect) string {
	var names []string
	for _, n := range []struct {
		e    effect
		name string
	}{{effectRead, "reads"}, {effectWrite, "writes"}, {effectRemove, "removes"}, {effectSend, "sends"}} {
		if e&n.e != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, "/")
}

// intentMismatch says why steps (tools with their descriptions, by
// step) do not serve the sub-goals of a request, or "" when they do. Each
// sub-goal whose effect is known must be served by a step of that effect
// or of unknown effect: by the step at its index when the steps line up
// with the sub-goals, else by any step.
func intentMismatch(goals []string, steps []toolIntent) string {
	for i, g := range goals {
		want := requestEffect(g)
		if want == 0 {
			continue
		}
		served := false
		if len(goals) == len(steps) {
			served = servesIntent(want, steps[i].effects)
		} else {
			for _, s := range steps {
				served = served || servesIntent(want, s.effects)
			}
		}
		if !served {
			var tools []string
			for _, s := range steps {
				tools = append(tools, s.tool+" "+effectName(s.effects))
			}
			return "the request asks to " + strings.Fields(GoalOf(g))[0] + " (a tool that " + effectName(want) + "); " + strings.Join(tools, ", ")
		}
	}
	return ""
}

// toolIntent is a step's tool and its effects.
type toolIntent struct {
	tool    string
	effects effect
}

// changesIntent says why a plan's steps (a past plan, or a pattern's
// tools) would not do what k's request asks, or "" when they would: the
// builtin planner then composes afresh rather than reuse them.
func (p *Planner) changesIntent(ctx context.Context, k *Knowledge, steps []agentsmcp.PlanStep) string {
	intents := make([]toolIntent, 0, len(steps))
	for _, s := range steps {
		ti := toolIntent{tool: s.Tool}
		if f := p.toolFacts(ctx, k, s.Tool); f != nil {
			ti.effects = toolEffects(f.Name, f.Description)
		} else {
			ti.effects = toolEffects(s.Tool, "")
		}
		intents = append(intents, ti)
	}
	return intentMismatch(k.SubGoals, intents)
}
