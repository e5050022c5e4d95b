package agents_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// wordedTool is a tool of a catalog of several domains, as the learning
// benchmark's worded families list them.
type wordedTool struct {
	name, description string
	params            [][2]string // name, description (strings, all required)
	output            []string    // output schema's string properties; none: text
}

// wordedCatalogTools are tools of eight domains, each domain's tools worded
// apart: shortening links and posting to channels, a directory and mail,
// maps, code repositories, flights, a glossary, translation and a stock.
var wordedCatalogTools = []wordedTool{
	{"shorten_url", "shorten a long URL and return the short link", [][2]string{{"url", "the long URL"}}, []string{"short_link"}},
	{"post_to_channel", "post a message to a chat channel", [][2]string{{"channel", "the channel, such as #general"}, {"text", "what to post"}}, nil},
	{"find_person", "look up a person in the company directory by name and return their email address", [][2]string{{"name", "the person's full name"}}, []string{"name", "email"}},
	{"send_email", "send an email message to an address", [][2]string{{"to", "the recipient's email address"}, {"body", "the message"}}, nil},
	{"geocode_address", "coordinates of a street address", [][2]string{{"address", "the street address"}}, nil},
	{"place_position", "latitude and longitude of a place", [][2]string{{"place", "the place"}}, nil},
	{"repo_open_issues", "count the open issues of a code repository", [][2]string{{"repository", "repository as owner/name, such as golang/go"}}, nil},
	{"org_profile", "public profile of a code hosting organization", [][2]string{{"org", "organization login, such as golang"}}, nil},
	{"search_fares", "cheapest fares for a flight route", [][2]string{{"route", "route as origin-destination airport codes, such as LHR-JFK"}}, nil},
	{"airport_info", "facts about an airport: terminals, lounges, transport", [][2]string{{"airport", "IATA code of the airport, such as LHR"}}, nil},
	{"define_word", "definition of an English word", [][2]string{{"word", "the word"}}, nil},
	{"lexicon_entry", "meaning and usage notes of a term", [][2]string{{"term", "the term"}}, nil},
	{"translate_text", "translate a text into another language", [][2]string{{"text", "the text to translate"}, {"target_language", "language to translate into, such as French"}}, nil},
	{"render_phrase", "render a phrase in a chosen tongue", [][2]string{{"phrase", "the phrase"}, {"tongue", "the tongue, such as Japanese"}}, nil},
	{"stock_level", "how many units of an item the warehouse holds", [][2]string{{"item", "the item"}}, nil},
}

// wordedPlanner is the builtin planner over a catalog of wordedCatalogTools
// (or another list of tools), searched with the semantic embedder as `agents-mcp serve`
// searches by default, with plans stored in SQLite.
func wordedPlanner(t *testing.T, tools []wordedTool) *agents.Planner {
	t.Helper()
	l := localtools.New()
	for _, tool := range tools {
		props := map[string]any{}
		var required []string
		for _, p := range tool.params {
			props[p[0]] = map[string]any{"type": "string", "description": p[1]}
			required = append(required, p[0])
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
		mt := &mcp.Tool{Name: tool.name, Description: tool.description, InputSchema: json.RawMessage(schema)}
		if tool.output != nil {
			out := map[string]any{}
			for _, o := range tool.output {
				out[o] = map[string]any{"type": "string"}
			}
			mt.OutputSchema = map[string]any{"type": "object", "properties": out}
		}
		if err := localtools.Add(l, mt, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	catalog := toolsearch.NewCatalog(r, toolsearch.NewIndex(r, toolsearch.Options{Embedder: embed.Semantic{}}), nil)
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &agents.Planner{Gatherer: &agents.Gatherer{Catalog: catalog}, Validator: r, Plans: db}
}

// planSummary is a plan as one line: each step's tool and arguments.
func planSummary(plan *agentsmcp.Plan) string {
	var parts []string
	for _, s := range plan.Steps {
		parts = append(parts, s.Tool+" "+string(s.Arguments))
	}
	return strings.Join(parts, " → ")
}

// TestBuiltinPlanDoesEveryPartOfTheRequest: a request that gives a URL
// and a channel wants something done with each. Worded ten ways (one
// sub-goal or two, the channel first or last, words the tools do not
// share), the builtin plan shortens the URL and posts the short link to
// the channel: the channel's step takes the first step's output. Before,
// the plan ran shorten_url alone ("Post a shortened version of <url> in
// #marketing"), or a code hosting tool for "Shrink <url> for #events",
// or stock_level with the short link for "share it in #dev", and the task
// reported success with no post made.
func TestBuiltinPlanDoesEveryPartOfTheRequest(t *testing.T) {
	p := wordedPlanner(t, wordedCatalogTools)
	for _, c := range []struct{ request, url, channel string }{
		{"Shorten https://example.org/reports/2026/q3/summary and post it to #news", "https://example.org/reports/2026/q3/summary", "#news"},
		{"Make a short link for https://example.org/docs/setup and share it in #dev", "https://example.org/docs/setup", "#dev"},
		{"Post a shortened version of https://example.org/blog/launch in #marketing", "https://example.org/blog/launch", "#marketing"},
		{"Squeeze https://example.org/a/very/long/path/indeed into something tiny, then drop it in #random", "https://example.org/a/very/long/path/indeed", "#random"},
		{"Take https://example.org/careers/open-roles, make it compact and put it in #hiring", "https://example.org/careers/open-roles", "#hiring"},
		{"Can you give #ops a tidy version of https://example.org/status/incidents/42?", "https://example.org/status/incidents/42", "#ops"},
		{"Shrink https://example.org/events/2027/summit/agenda for #events", "https://example.org/events/2027/summit/agenda", "#events"},
		{"I'd like #design to get a brief URL pointing at https://example.org/brand/guidelines", "https://example.org/brand/guidelines", "#design"},
		{"Shorten this one and send it to #support: https://example.org/help/reset-password", "https://example.org/help/reset-password", "#support"},
		{"Announce https://example.org/news/funding-round in #general, but short", "https://example.org/news/funding-round", "#general"},
	} {
		plan, _, err := p.Plan(t.Context(), agents.PlanRequest{Request: c.request})
		if err != nil {
			t.Errorf("%q: %v", c.request, err)
			continue
		}
		shortened := map[string]bool{} // steps that shorten the request's URL
		posted := false
		for _, s := range plan.Steps {
			var args map[string]string
			_ = json.Unmarshal(s.Arguments, &args)
			switch s.Tool {
			case "shorten_url":
				if args["url"] == c.url {
					shortened[s.ID] = true
				}
			case "post_to_channel":
				from := strings.TrimSuffix(strings.TrimPrefix(args["text"], "{{steps."), ".output.short_link}}")
				posted = posted || args["channel"] == c.channel && shortened[from] && slices.Contains(s.DependsOn, from)
			}
		}
		if !posted {
			t.Errorf("%q: plan %s; want the URL shortened, then the short link posted to %s", c.request, planSummary(plan), c.channel)
		}
	}
}

// TestBuiltinPlanRefusesToLeaveAValueUnused: when no tool takes a value the
// request gives, the builtin planner says so rather than plan what it can
// and report success: without a channel tool, "post … in #marketing" is
// not planned as shorten_url alone.
func TestBuiltinPlanRefusesToLeaveAValueUnused(t *testing.T) {
	var tools []wordedTool
	for _, tool := range wordedCatalogTools {
		if tool.name != "post_to_channel" {
			tools = append(tools, tool)
		}
	}
	p := wordedPlanner(t, tools)
	for _, request := range []string{
		"Post a shortened version of https://example.org/blog/launch in #marketing",
		"Can you give #ops a tidy version of https://example.org/status/incidents/42?",
	} {
		plan, _, err := p.Plan(t.Context(), agents.PlanRequest{Request: request})
		if err == nil {
			t.Errorf("%q: planned %s; want an error naming the channel no step takes", request, planSummary(plan))
			continue
		}
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "#") || !strings.Contains(err.Error(), "which no step takes") {
			t.Errorf("%q: %v; want EINVALID naming the channel no step takes", request, err)
		}
	}
}
