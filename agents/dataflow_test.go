package agents

import (
	"encoding/json"
	"slices"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
)

func flowFacts(name, desc, output string) *ToolFacts {
	f := &ToolFacts{}
	f.Name, f.Description = name, desc
	if output != "" {
		f.OutputSchema = json.RawMessage(output)
	}
	return f
}

// TestWireParamDecisions: which earlier output, by which reference,
// fills a required parameter the sub-goal does not give; and the cases
// where nothing must be wired, so that the user is asked.
func TestWireParamDecisions(t *testing.T) {
	str := func(desc string) schemaProperty { return schemaProperty{Type: "string", Description: desc} }
	num := schemaProperty{Type: "number"}
	integer := schemaProperty{Type: "integer"}
	text := flowFacts("add", "add two numbers", "")
	sum := flowFacts("add", "add two numbers", `{"type":"object","properties":{"sum":{"type":"number"}}}`)
	sumText := flowFacts("add", "add", `{"type":"object","properties":{"result":{"type":"string"}}}`)
	person := flowFacts("find_person", "look up a person", `{"type":"object","properties":{"email":{"type":"string","description":"their email address"},"name":{"type":"string"}}}`)
	weather := flowFacts("weather", "weather in a city", `{"type":"object","properties":{"city":{"type":"string"},"conditions":{"type":"string"}}}`)
	opaque := flowFacts("opaque", "an object", `{"type":"object"}`)
	issue := flowFacts("create_issue", "create an issue", `{"type":"object","properties":{"issue_id":{"type":"string"},"url":{"type":"string","format":"uri"}}}`)
	for _, c := range []struct {
		name  string
		param string
		prop  schemaProperty
		src   flowSource
		want  string
	}{
		// Wired.
		{"text output, the result, text param", "message", str("the message"), flowSource{step: "add", tool: text, refersBack: true}, "{{steps.add.output}}"},
		{"the one field, number to number", "amount", num, flowSource{step: "add", tool: sum, refersBack: true}, "{{steps.add.output.sum}}"},
		{"result-like string field to text", "message", str("the message"), flowSource{step: "add", tool: sumText, refersBack: true}, "{{steps.add.output.result}}"},
		{"same name", "city", str("the city"), flowSource{step: "w", tool: weather}, "{{steps.w.output.city}}"},
		{"same kind: email", "recipient", str("email address of the recipient"), flowSource{step: "p", tool: person}, "{{steps.p.output.email}}"},
		{"same kind: identifier", "id", str("the issue id"), flowSource{step: "c", tool: issue}, "{{steps.c.output.issue_id}}"},
		{"a lookup for this param, text output", "address", str("email address"), flowSource{step: "l", tool: text, provides: "address"}, "{{steps.l.output}}"},
		// Not wired: the user is asked.
		{"text output without pointing back", "message", str("the message"), flowSource{step: "add", tool: text}, ""},
		{"number field to a string-only param, passed as text", "message", str("the message"), flowSource{step: "add", tool: sum, refersBack: true}, "{{steps.add.output.sum}}"},
		{"number to integer", "count", integer, flowSource{step: "add", tool: sum, refersBack: true}, ""},
		{"text output to a number", "amount", num, flowSource{step: "add", tool: text, refersBack: true}, ""},
		{"object of unknown shape", "message", str("the message"), flowSource{step: "o", tool: opaque, refersBack: true}, ""},
		{"two fields fit the result", "message", str("the message"), flowSource{step: "w", tool: weather, refersBack: true}, ""},
		{"a name is no email", "address", str("email address"), flowSource{step: "w", tool: weather}, ""},
		{"no meaning in common", "path", str("file path"), flowSource{step: "p", tool: person}, ""},
		{"a secret is never wired", "password", str("the password"), flowSource{step: "add", tool: text, refersBack: true}, ""},
		{"no source", "message", str("the message"), flowSource{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := classifySlot(c.param, c.prop, true)
			var sources []flowSource
			if c.src.tool != nil {
				sources = []flowSource{c.src}
			}
			if got := wireParam(p, sources); got != c.want {
				t.Errorf("wireParam(%s %s) = %q, want %q", c.param, p.kind, got, c.want)
			}
		})
	}
}

// TestRequestIdentifierDecisions: a string identifier the request names
// after the tool's noun, "#" or "id"; never a number after another word.
func TestRequestIdentifierDecisions(t *testing.T) {
	deletePost := &agentsmcp.ToolInfo{Name: "up__delete_post", Description: "delete a blog post"}
	closeIssue := &agentsmcp.ToolInfo{Name: "close_issue", Description: "close an issue of a repository"}
	id := classifySlot("id", schemaProperty{Type: "string", Description: "the id"}, true)
	intID := classifySlot("id", schemaProperty{Type: "integer"}, true)
	message := classifySlot("message", schemaProperty{Type: "string"}, true)
	setPriority := &agentsmcp.ToolInfo{Name: "set_priority", Description: "set the priority of a post"}
	if got, ok := requestIdentifier("Set post 7 priority 3", id, setPriority, json.Number("3")); got != "7" || !ok {
		t.Errorf("with 3 taken by another parameter: %q, %v; want 7", got, ok)
	}
	for _, c := range []struct {
		text string
		tool *agentsmcp.ToolInfo
		p    slotParam
		want string
	}{
		{"Set post 7 priority 3", setPriority, id, ""}, // which one, when 3 is no other parameter's
		{"Delete post 7", deletePost, id, "7"},
		{"Delete the post 7", deletePost, id, "7"},
		{"Delete posts 7", deletePost, id, "7"},
		{"Close issue #12", closeIssue, id, "12"},
		{"Close #12 please", closeIssue, id, "12"},
		{"Delete the post with id abc-12", deletePost, id, "abc-12"},
		{"Delete the 3 oldest posts", deletePost, id, ""},
		{"Delete post 7 and post 8", deletePost, id, ""},
		{"Delete post seven", deletePost, id, ""},
		{"Delete post 7", nil, id, ""},
		{"Delete post 7", deletePost, intID, ""},   // numbers are slot filling's
		{"Delete post 7", deletePost, message, ""}, // not an identifier
		{"Delete post 7 with token: ab12cd", deletePost, id, "7"},
	} {
		got, ok := requestIdentifier(c.text, c.p, c.tool)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("requestIdentifier(%q, %s) = %q, %v; want %q", c.text, c.p.name, got, ok, c.want)
		}
	}
}

// TestSaysItReturns: a lookup tool is one that says it returns the value,
// in its output schema or its description.
func TestSaysItReturns(t *testing.T) {
	email := classifySlot("address", schemaProperty{Type: "string", Description: "the email address to send to"}, true)
	url := classifySlot("url", schemaProperty{Type: "string"}, true)
	for _, c := range []struct {
		tool agentsmcp.ToolInfo
		p    slotParam
		want bool
	}{
		{agentsmcp.ToolInfo{Description: "look up a person by name and return their email address"}, email, true},
		{agentsmcp.ToolInfo{Description: "find a person", OutputSchema: json.RawMessage(`{"type":"object","properties":{"email":{"type":"string"}}}`)}, email, true},
		{agentsmcp.ToolInfo{Description: "send an email to a person"}, email, false},
		{agentsmcp.ToolInfo{Description: "look up a person and return their phone number"}, email, false},
		{agentsmcp.ToolInfo{Description: "shorten a link and return the short url"}, url, true},
		{agentsmcp.ToolInfo{Description: "return the weather for a city"}, url, false},
	} {
		if got := saysItReturns(&c.tool, c.p); got != c.want {
			t.Errorf("saysItReturns(%q, %s) = %v, want %v", c.tool.Description, c.p.name, got, c.want)
		}
	}
}

// TestSplitSubGoalsReferringBack: "and" before a clause acting on the
// result splits; other "and"s do not.
func TestSplitSubGoalsReferringBack(t *testing.T) {
	for request, want := range map[string][]string{
		"Fetch the weather in Oslo and send it to Bob":   {"Fetch the weather in Oslo", "send it to Bob"},
		"Add 3 and 4 and echo the result":                {"Add 3 and 4", "echo the result"},
		"Add 3 and 4, then echo the result":              {"Add 3 and 4", "echo the result"},
		"Compare apples and oranges":                     {"Compare apples and oranges"},
		"Tell Ann and Bob that the build is green":       {"Tell Ann and Bob that the build is green"},
		"Look up Ada's email and use that to invite her": {"Look up Ada's email", "use that to invite her"},
	} {
		if got := SplitSubGoals(request); !slices.Equal(got, want) {
			t.Errorf("SplitSubGoals(%q) = %q, want %q", request, got, want)
		}
	}
}

// TestTextForStringParams: a number or boolean that a whole step
// reference gives to a string-only parameter is passed as its text;
// nothing else changes.
func TestTextForStringParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"count":{"type":"integer"},"either":{"type":["string","number"]}}}`)
	for _, c := range []struct{ planned, resolved, want string }{
		{`{"message":"{{steps.add.output.sum}}"}`, `{"message":7}`, `{"message":"7"}`},
		{`{"message":"{{steps.add.output.sum}}"}`, `{"message":-1.5e3}`, `{"message":"-1.5e3"}`},
		{`{"z":1,"message":"{{steps.check.output.ok}}","a":2}`, `{"z":1,"message":true,"a":2}`, `{"z":1,"message":"true","a":2}`},
		{`{"message":"{{steps.add.output}}"}`, `{"message":"7"}`, `{"message":"7"}`},                    // a string already
		{`{"count":"{{steps.add.output.sum}}"}`, `{"count":7}`, `{"count":7}`},                          // not a string param
		{`{"either":"{{steps.add.output.sum}}"}`, `{"either":7}`, `{"either":7}`},                       // takes a number too
		{`{"message":"{{inputs.n}}"}`, `{"message":7}`, `{"message":7}`},                                // the user's value, as given
		{`{"message":"{{steps.add.output.list}}"}`, `{"message":[1,2]}`, `{"message":[1,2]}`},           // no scalar
		{`{"message":"sum: {{steps.add.output.sum}}"}`, `{"message":"sum: 7"}`, `{"message":"sum: 7"}`}, // embedded: text already
	} {
		refs, err := planlang.FindRefs(json.RawMessage(c.planned))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(textForStringParams(refs, json.RawMessage(c.resolved), schema)); got != c.want {
			t.Errorf("textForStringParams(%s, %s) = %s, want %s", c.planned, c.resolved, got, c.want)
		}
	}
}

// TestNameNeverFillsAnAddress: a recipient described as an email address
// takes an address; a person's name the request gives is no value for it.
func TestNameNeverFillsAnAddress(t *testing.T) {
	p := classifySlot("recipient", schemaProperty{Type: "string", Description: "email address of the recipient"}, true)
	if p.kind != slotEmail {
		t.Fatalf("recipient described as an email address is %s", p.kind)
	}
	if got := fillSlots("Send the report to Ada Lovelace", []slotParam{p}); len(got) != 0 {
		t.Errorf("filled %v from a person's name", got)
	}
	if got := fillSlots("Send the report to ada@example.org", []slotParam{p}); got["recipient"].value != "ada@example.org" {
		t.Errorf("recipient = %v, want the address the request gives", got["recipient"].value)
	}
}

// TestGivesEveryInput: a lookup's keys come from the request; a query
// that would take the whole request is none.
func TestGivesEveryInput(t *testing.T) {
	person := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the full name of the person"}},"required":["name"]}`)
	search := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)
	none := json.RawMessage(`{"type":"object","properties":{}}`)
	for _, c := range []struct {
		schema json.RawMessage
		text   string
		want   bool
	}{
		{person, `Send "hi" to Ada Lovelace`, true},
		{person, `Send "hi"`, false},
		{search, "Get the status of my order", false},
		{none, "Send hi to Ada", false},
	} {
		if got := givesEveryInput(c.schema, c.text); got != c.want {
			t.Errorf("givesEveryInput(%s, %q) = %v, want %v", c.schema, c.text, got, c.want)
		}
	}
}
