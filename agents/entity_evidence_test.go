package agents

import (
	"encoding/json"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestToolThatServedTheSameEntitiesOutranksAVerbMatch: "Say 'welcome
// home' in Turkish" shares no word with any tool; the search's reading of
// its verb ranks a mail tool first, whose address the request does not
// give. A tool that served a request with the same entities (a quoted text
// and a name) serves it instead, however far below the search ranked it;
// without that evidence, or when the first candidate shares a word with
// the request, the ranking stands; and the evidence of a tool of another
// effect, or of one on cool-down, outranks nothing, nor does that of a
// request with one entity only (one name).
func TestToolThatServedTheSameEntitiesOutranksAVerbMatch(t *testing.T) {
	sendEmail := &agentsmcp.ToolInfo{Name: "directory__send_email", Description: "send an email message to an address", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","description":"the recipient's email address"},"body":{"type":"string","description":"the message"}},"required":["to","body"]}`)}
	postToChannel := &agentsmcp.ToolInfo{Name: "links__post_to_channel", Description: "post a message to a chat channel", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"channel":{"type":"string","description":"the channel, such as #general"},"text":{"type":"string","description":"what to post"}},"required":["channel","text"]}`)}
	renderPhrase := &agentsmcp.ToolInfo{Name: "translate__render_phrase", Description: "render a phrase in a chosen tongue", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"phrase":{"type":"string","description":"the phrase"},"tongue":{"type":"string","description":"the tongue, such as Japanese"}},"required":["phrase","tongue"]}`)}
	archive := &agentsmcp.ToolInfo{Name: "notes__delete_note", Description: "delete a saved note", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string","description":"the note"}},"required":["note"]}`)}
	const past = "Render 'happy birthday' in German"
	for _, c := range []struct {
		name, goal string
		ranked     []*agentsmcp.ToolInfo
		evidence   []string // the candidates that served a request with the same entities
		coolingOff bool     // the evidenced tool is on cool-down
		want       string
	}{
		{"verb match below the evidence", "Say 'welcome home' in Turkish", []*agentsmcp.ToolInfo{sendEmail, postToChannel, renderPhrase}, []string{renderPhrase.Name}, false, renderPhrase.Name},
		{"evidence found by the search too", "Put 'where is the station' into Spanish", []*agentsmcp.ToolInfo{postToChannel, renderPhrase}, []string{renderPhrase.Name}, false, renderPhrase.Name},
		{"no evidence", "Say 'welcome home' in Turkish", []*agentsmcp.ToolInfo{sendEmail, renderPhrase}, nil, false, sendEmail.Name},
		{"a word in common", "Put 'where is the station' into the chat channel", []*agentsmcp.ToolInfo{postToChannel, renderPhrase}, []string{renderPhrase.Name}, false, postToChannel.Name},
		{"evidence of another effect", "Put 'where is the station' into Spanish", []*agentsmcp.ToolInfo{postToChannel, archive}, []string{archive.Name}, false, postToChannel.Name},
		// The request's verb names what the mail tool does: no match by
		// meaning alone, though a lookup must give its address.
		{"the verb names its effect", "Send 'welcome home' to Marco Rossi", []*agentsmcp.ToolInfo{sendEmail, renderPhrase}, []string{renderPhrase.Name}, false, sendEmail.Name},
		// One name is the shape of too many requests to be evidence.
		{"one entity", "Tell Helena Berg by mail that the badge is ready", []*agentsmcp.ToolInfo{sendEmail, renderPhrase}, []string{renderPhrase.Name}, false, sendEmail.Name},
		{"evidence on cool-down", "Say 'welcome home' in Turkish", []*agentsmcp.ToolInfo{sendEmail, renderPhrase}, []string{renderPhrase.Name}, true, sendEmail.Name},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &Knowledge{Request: c.goal, SubGoals: []string{c.goal}, Candidates: map[string][]*agentsmcp.ToolMatch{}, Tools: map[string]*ToolFacts{}}
			score := 0.8
			for _, info := range c.ranked {
				k.Tools[info.Name] = &ToolFacts{ToolInfo: *info, SuccessRate: 0.9}
				k.Candidates[c.goal] = append(k.Candidates[c.goal], &agentsmcp.ToolMatch{ToolInfo: *info, Score: score})
				score /= 4
			}
			for _, name := range c.evidence {
				k.servedSameEntities(name, past)
				k.Tools[name].Reliability.CoolingDown = c.coolingOff
			}
			got, _ := bestTool(k, c.goal)
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != c.want {
				t.Errorf("%q: picked %q, want %q", c.goal, name, c.want)
			}
		})
	}
}
