package agents

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The input schemas of `make demo`'s upstreams (scripts/demo/run.sh), as
// they list them: server-everything's echo, server-memory's
// create_entities, server-filesystem's read tools, the blog's list_posts
// (http_tools) and the server's own store_insight.
const (
	demoEcho           = `{"type":"object","properties":{"message":{"description":"Message to echo","type":"string"}},"required":["message"]}`
	demoCreateEntities = `{"type":"object","properties":{"entities":{"items":{"properties":{"entityType":{"description":"The type of the entity","type":"string"},"name":{"description":"The name of the entity","type":"string"},"observations":{"description":"An array of observation contents associated with the entity","items":{"type":"string"},"type":"array"}},"required":["name","entityType","observations"],"type":"object"},"type":"array"}},"required":["entities"]}`
	demoReadText       = `{"type":"object","properties":{"head":{"description":"If provided, returns only the first N lines of the file","type":"number"},"path":{"type":"string"},"tail":{"description":"If provided, returns only the last N lines of the file","type":"number"}},"required":["path"]}`
	demoReadMany       = `{"type":"object","properties":{"paths":{"description":"Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.","items":{"type":"string"},"minItems":1,"type":"array"}},"required":["paths"]}`
	demoListPosts      = `{"type":"object","properties":{"author":{"description":"author name","type":"string"}},"additionalProperties":false}`
	demoStoreInsight   = `{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":16384,"description":"The insight, at most 16 KiB"},"type":{"enum":["observation","best_practice","pitfall","preference"],"description":"Default observation"},"appliesTo":{"type":"array","items":{"type":"string","minLength":1,"maxLength":200},"maxItems":100,"description":"Tools, upstreams or tags it is about"},"confidence":{"type":"number","minimum":0,"maximum":1,"description":"Default 0.5"},"evidence":{"type":"array","items":{"type":"string","minLength":1,"maxLength":200},"maxItems":100,"description":"Ids of supporting tasks or learnings"}},"required":["text"],"additionalProperties":false}`
)

// wordingCase is a request, a tool's input schema, and what its arguments
// must be: want holds each parameter that must get a value (as JSON);
// asked the parameters the user must be asked for ({{inputs.…}}); every
// other parameter must stay absent.
type wordingCase struct {
	name    string
	request string
	schema  string
	want    map[string]string
	asked   []string
}

func props(s string) string { return `{"type":"object","properties":{` + s + `}}` }

func propsReq(s string, required ...string) string {
	r, _ := json.Marshal(required)
	return `{"type":"object","properties":{` + s + `},"required":` + string(r) + `}`
}

var wordingCases = []wordingCase{
	// make demo's example tasks.
	{name: "demo: echo the words", request: "Echo the words hello from the agents-mcp demo", schema: demoEcho,
		want: map[string]string{"message": `"hello from the agents-mcp demo"`}},
	{name: "demo: an entity named, of type", request: "Create an entity named demo-project of type project in the knowledge graph", schema: demoCreateEntities,
		want: map[string]string{"entities": `[{"entityType":"project","name":"demo-project","observations":[]}]`}},
	{name: "demo: read the file", request: "Read the file todo.md", schema: demoReadText, want: map[string]string{"path": `"todo.md"`}},
	{name: "demo: posts by the author", request: "List the blog posts by the author ada", schema: demoListPosts, want: map[string]string{"author": `"ada"`}},
	{name: "demo: store an insight", request: "Store an insight: the filesystem upstream serves only the demo folder", schema: demoStoreInsight,
		want: map[string]string{"text": `"the filesystem upstream serves only the demo folder"`}},

	// Free text.
	{name: "the word, one", request: "Say the word banana", schema: demoEcho, want: map[string]string{"message": `"banana"`}},
	{name: "the phrase, to its clause's end", request: "Echo the phrase all systems go, then stop", schema: demoEcho, want: map[string]string{"message": `"all systems go"`}},
	{name: "text after the colon", request: "Post to the team: the build is green", schema: propsReq(`"message":{"type":"string"}`, "message"),
		want: map[string]string{"message": `"the build is green"`}},
	{name: "message after that", request: "Email Dana that the lab is booked", schema: propsReq(`"body":{"type":"string","description":"the message"}`, "body"),
		want: map[string]string{"body": `"the lab is booked"`}},
	{name: "quoted text beats the colon", request: `Reminder: send "ship it" now`, schema: demoEcho, want: map[string]string{"message": `"ship it"`}},
	{name: "a query takes the text after the colon", request: "Search the docs: TLS client certificates", schema: propsReq(`"query":{"type":"string"}`, "query"),
		want: map[string]string{"query": `"TLS client certificates"`}},

	// Free text must not fill what is not free text, nor be invented.
	{name: "must not: echo without words", request: "Echo something for me", schema: demoEcho, asked: []string{"message"}},
	{name: "must not: the words into an id", request: "Delete the words hello there", schema: propsReq(`"id":{"type":"string","description":"the record id"}`, "id"), asked: []string{"id"}},
	{name: "must not: the words into an enum", request: "Echo the words loud please", schema: propsReq(`"mode":{"type":"string","enum":["quiet","silent"]}`, "mode"), asked: []string{"mode"}},
	{name: "must not: the colon's text into a number", request: "Set the limit: about twenty", schema: propsReq(`"count":{"type":"integer","description":"how many"}`, "count"), asked: []string{"count"}},
	{name: "must not: a URL after the colon is no message", request: "Share the link: https://example.org/a", schema: propsReq(`"message":{"type":"string"}`, "message"), asked: []string{"message"}},
	{name: "must not: that is no query", request: "Find the files that changed", schema: propsReq(`"query":{"type":"string","description":"what to look for"}`, "query"),
		want: map[string]string{"query": `"Find the files that changed"`}},
	{name: "must not: the colon of a named value is the value's", request: "Send to city: Paris the words hi", schema: propsReq(`"city":{"type":"string"},"message":{"type":"string"}`, "city", "message"),
		want: map[string]string{"city": `"Paris"`, "message": `"hi"`}},

	// File names and paths.
	{name: "a file in a folder", request: "Open docs/api.yaml", schema: demoReadText, want: map[string]string{"path": `"docs/api.yaml"`}},
	{name: "an absolute path still", request: "Read /etc/hosts", schema: demoReadText, want: map[string]string{"path": `"/etc/hosts"`}},
	{name: "a file name at the sentence's end", request: "Show me the contents of notes.txt.", schema: demoReadText, want: map[string]string{"path": `"notes.txt"`}},
	{name: "several files for a list", request: "Read the files a.md and b.md", schema: demoReadMany, want: map[string]string{"paths": `["a.md","b.md"]`}},
	{name: "must not: one file for a list", request: "Read the file todo.md", schema: demoReadMany, asked: []string{"paths"}},
	{name: "must not: a domain is no file", request: "Read the page example.com", schema: demoReadText, asked: []string{"path"}},
	{name: "must not: a version is no file", request: "Read the notes of release 1.2", schema: propsReq(`"path":{"type":"string"}`, "path"), asked: []string{"path"}},
	{name: "must not: a URL's file is the URL's", request: "Read https://example.org/docs/readme.md", schema: demoReadText, asked: []string{"path"}},
	{name: "must not: no file named", request: "Read the file", schema: demoReadText, asked: []string{"path"}},
	{name: "must not: a file name into an id", request: "Delete todo.md", schema: propsReq(`"id":{"type":"string","description":"the record id"}`, "id"), asked: []string{"id"}},

	// Named things.
	{name: "a project named", request: "Create a project named apollo", schema: propsReq(`"name":{"type":"string","description":"the project's name"}`, "name"),
		want: map[string]string{"name": `"apollo"`}},
	{name: "a quoted name", request: `Create a board called "Q3 plans"`, schema: propsReq(`"title":{"type":"string"}`, "title"), want: map[string]string{"title": `"Q3 plans"`}},
	{name: "an object of its required fields", request: "Add a tag named urgent of kind label", schema: propsReq(`"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"kind":{"type":"string"},"color":{"type":"string"}},"required":["name","kind"]}}`, "tags"),
		want: map[string]string{"tags": `[{"kind":"label","name":"urgent"}]`}},
	{name: "must not: an entity without its type", request: "Create an entity named demo-project", schema: demoCreateEntities, asked: []string{"entities"}},
	{name: "must not: an entity without its name", request: "Create an entity of type project", schema: demoCreateEntities, asked: []string{"entities"}},
	{name: "must not: an entity of nothing", request: "Create an entity in the knowledge graph", schema: demoCreateEntities, asked: []string{"entities"}},
	{name: "must not: observations that must not be empty", request: "Create an entity named x1 of type project", schema: strings.Replace(demoCreateEntities, `"items":{"type":"string"},"type":"array"`, `"items":{"type":"string"},"minItems":1,"type":"array"`, 1),
		asked: []string{"entities"}},
	{name: "must not: named the", request: "Create a project named the same as before", schema: propsReq(`"name":{"type":"string","description":"the project's name"}`, "name"), asked: []string{"name"}},
	{name: "must not: a name from within a secret", request: "Create a project named password=hunter2", schema: propsReq(`"name":{"type":"string","description":"the project's name"}`, "name"), asked: []string{"name"}},
	{name: "must not: a filter from within a secret", request: "List posts by the author password=hunter2", schema: demoListPosts, asked: []string{"author"}},
	{name: "must not: a name into a user name", request: "Create a project named apollo", schema: propsReq(`"username":{"type":"string","description":"the user to add"}`, "username"), asked: []string{"username"}},

	// Filters.
	{name: "filter with label", request: "List the issues with label bug", schema: props(`"label":{"type":"string"}`), want: map[string]string{"label": `"bug"`}},
	{name: "filter whose status is", request: "Show orders whose status is open", schema: props(`"status":{"type":"string"}`), want: map[string]string{"status": `"open"`}},
	{name: "filter, then another clause", request: "List posts by the author ada from last week", schema: demoListPosts, want: map[string]string{"author": `"ada"`}},
	{name: "filter, capitalised name as before", request: "List posts by Ada Lovelace", schema: demoListPosts, want: map[string]string{"author": `"Ada Lovelace"`}},
	{name: "must not: a filter the request names but gives no word for is asked", request: "List posts by the author of the most read post", schema: demoListPosts, asked: []string{"author"}},
	{name: "must not: sorted by is no filter", request: "List the posts sorted by author name", schema: demoListPosts},
	{name: "must not: a day is no filter's value", request: "Weather in the city today", schema: props(`"city":{"type":"string"}`)},
	{name: "must not: no filter, no author", request: "List the blog posts", schema: demoListPosts},
	{name: "must not: a word of the parameter's description", request: "List posts by the author name", schema: demoListPosts, asked: []string{"author"}},
	{name: "must not: a filter word that is none of the enum's is asked", request: "List the issues with state weird", schema: props(`"state":{"type":"string","enum":["open","closed"]}`), asked: []string{"state"}},
}

// TestValuesAsTheRequestWordsThem: free text after "the words", a colon
// or "that"; file names; named things and objects; filters. Each value is
// the request's text; what the request does not give is asked (a
// required parameter, or a filter it states) or left out, never invented,
// and free text never fills an identifier, an enum or a number.
func TestValuesAsTheRequestWordsThem(t *testing.T) {
	mustNot := 0
	for _, c := range wordingCases {
		if strings.HasPrefix(c.name, "must not") {
			mustNot++
		}
		t.Run(c.name, func(t *testing.T) {
			inputs := newInputsSchema()
			raw, taken := fillStepArguments(json.RawMessage(c.schema), c.request, c.request, "step", nil, nil, inputs)
			var args map[string]json.RawMessage
			if err := json.Unmarshal(raw, &args); err != nil {
				t.Fatal(err)
			}
			for name, want := range c.want {
				if got := string(args[name]); got != want {
					t.Errorf("%q: %s = %s; want %s (arguments %s, notes %q)", c.request, name, got, want, raw, taken)
				}
			}
			for _, name := range c.asked {
				if got, want := string(args[name]), fmt.Sprintf(`"{{inputs.%s}}"`, name); got != want {
					t.Errorf("%q: %s = %s; want the user asked (%s)", c.request, name, got, want)
				}
			}
			for name, v := range args {
				if _, ok := c.want[name]; !ok && !slicesContains(c.asked, name) {
					t.Errorf("%q: %s = %s; want it absent (arguments %s)", c.request, name, v, raw)
				}
			}
			var schema struct {
				Properties map[string]schemaProperty `json:"properties"`
			}
			_ = json.Unmarshal([]byte(c.schema), &schema)
			for name, v := range args {
				var value any
				_ = json.Unmarshal(v, &value)
				if why := shapeOf(schema.Properties[name]).problem(value); why != "" {
					t.Errorf("%q: %s = %s fails its shape check: %s", c.request, name, v, why)
				}
			}
		})
	}
	if len(wordingCases) < 30 || mustNot < 15 {
		t.Errorf("%d cases, %d must-not-fill: too few", len(wordingCases), mustNot)
	}
}

// TestBestToolReadsAFileAsAPersonWould: "Read the file todo.md" picks the
// tool that reads one file and is not deprecated, with its path filled,
// although the search ranks the tool that reads several files and the
// deprecated one higher; several files go to the one that reads several;
// a deprecated tool still serves when it is the only one.
func TestBestToolReadsAFileAsAPersonWould(t *testing.T) {
	facts := func(name, description, schema string) *ToolFacts {
		return &ToolFacts{ToolInfo: agentsmcp.ToolInfo{Name: name, Description: description, Health: agentsmcp.HealthReady,
			InputSchema: json.RawMessage(schema)}, SuccessRate: 0.9}
	}
	tools := map[string]*ToolFacts{
		"filesystem__read_multiple_files": facts("filesystem__read_multiple_files", "Read the contents of multiple files simultaneously.", demoReadMany),
		"filesystem__read_file":           facts("filesystem__read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.", demoReadText),
		"filesystem__read_text_file":      facts("filesystem__read_text_file", "Read the complete contents of a file from the file system as text.", demoReadText),
	}
	ranked := []string{"filesystem__read_multiple_files", "filesystem__read_file", "filesystem__read_text_file"}
	for _, c := range []struct {
		goal   string
		ranked []string
		want   string
	}{
		{"Read the file todo.md", ranked, "filesystem__read_text_file"},
		{"Read the files a.md and b.md", ranked, "filesystem__read_multiple_files"},
		{"Read the file todo.md", []string{"filesystem__read_file"}, "filesystem__read_file"},
	} {
		k := &Knowledge{Candidates: map[string][]*agentsmcp.ToolMatch{}, Tools: tools}
		for i, name := range c.ranked {
			k.Candidates[c.goal] = append(k.Candidates[c.goal], &agentsmcp.ToolMatch{ToolInfo: tools[name].ToolInfo, Score: 1 - 0.1*float64(i)})
		}
		got, _ := bestTool(k, c.goal)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.want {
			t.Errorf("%q among %v: picked %q, want %q", c.goal, c.ranked, name, c.want)
		}
	}
}
