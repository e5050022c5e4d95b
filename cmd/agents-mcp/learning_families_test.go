package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The worded families: requests worded the way people word them. Each
// family has ten requests worded differently from one another (synonyms,
// questions and commands; at least three of the ten share no keyword with
// the serving tools' names and descriptions:
// TestLearningFamiliesWordedApart checks it), and each is checked at its
// upstream, from what the upstream received: a request is served when a
// working tool got the right values (composed where the parameter wants a
// composed value, taken from another tool's output where only that tool
// can provide it), and no tool of another intent did anything. A task that
// reports success without that is a silently wrong success, which the
// benchmark never accepts.
//
// What each family exercises:
//   - glossary: the best-worded tool always fails; the alternative is
//     worded differently.
//   - flights: a composed value, "route as origin-destination airport
//     codes, such as LHR-JFK", from the two airports the request names; a
//     distractor that takes one airport code and would "succeed".
//   - repos: a composed value, "owner/name", from a request that gives it
//     whole or in parts; a distractor that takes the owner alone.
//   - translate: the best-worded tool fails for some arguments (target
//     languages it does not support, a permanent 400).
//   - geo: the best-worded tool fails two calls in three (503).
//   - directory: two steps, a value only another tool can provide: the
//     request names a person, the mail tool wants an address, and the
//     directory returns it. The mail tool accepts any "to", as lax APIs do,
//     so a name passed as the address would "succeed".
//   - links: two steps with data flow: shorten a link, then post the short
//     link (the first step's output) to a channel.
//   - stock: two intents on one upstream, record a delivery and query the
//     level, alternating on the same items: a plan that worked for one must
//     not be reused for the other.

// openGoal lists the rows (planner/family) of the worded families that do
// not meet their goal yet, with why: the benchmark logs them and does not
// fail on them; every other row must meet it. The goal: every request
// served with the right values, and the second half makes at most 30 % of
// the first half's failed calls (one more for a probe after cool-down).
// Remove an entry when the fix lands; the benchmark logs "now meets its
// goal" for an entry that does. A silently wrong success fails the
// benchmark whether listed or not.
//
// Measured 2026-11-29 on main (b6c3b40, and 26dc747); on branch wrongs
// the same day (from 8aff6da), builtin/links, builtin/directory,
// sampling/links and sampling/directory were removed, each 10/10 served:
// every plan uses the URL, address and channel the request gives (shorten,
// then post the short link), a request to send is served by a tool that
// sends with the address looked up first, and the model prompts list the
// tools that take the request's values or return what a candidate lacks.
// On branch rows the same day, the repairs these rows waited for land (the
// first 503s of geo onto place_position, the 400 on Greek onto
// render_phrase: the failed tool's sibling, worded like it with the same
// inputs, asking for what it lacks) and no server tool replaces an
// upstream's; what keeps them open is search by meaning. On branch rows
// again (second session), a tool that served in place of a failed one is
// a candidate wherever that one is: geo's "Where exactly on the map is …"
// is served on both planners (9/10); the other misses are requests for
// which the search ranks no tool of the family (the semantic model's
// similarities to the family's tools are below 0.12), and family joining
// by meaning cannot help where the keys share no entities (glossary,
// stock) or the similarity is in the range of false joins (translate).
// After the fifth round of the search (related words of a word no tool
// holds join the query), geo meets its goal on both planners, and flights,
// enforced until then, misses it by one request (see its reason).
// On branch rows (third session), a candidate on weak evidence (no word
// in common, a required value the request lacks) loses to one the request
// drives whole, fitting tools count a value composed of two parts as two
// and join a full candidate list, and the tools that served requests with
// the same entities are candidates: flights meets its goal on both
// planners ("Price a ticket AMS to SIN" served by search_fares), and
// sampling/translate serves every request but stays open on the ratio (see
// its entry).
// On branch rows7 (2026-11-30), builtin/translate meets its goal (10/10,
// failed calls 2 then 0): a candidate on weak evidence (no word of what
// the request is about, a value it would ask for) whose effect the
// request's verb does not name gives way to a tool that served a request
// with the same entities, two at least (say → send_email and put →
// post_to_channel lose to translate_text and render_phrase), and a
// repair no longer takes a tool the search found by a verb alone that
// would ask for a value the request never mentions (translate_text's 400
// on Japanese is repaired onto render_phrase, not post_to_channel).
// The brackets name the part of the agents the failures point at: meaning
// (search by meaning), values (composed or asked, never wrong), data flow
// (between steps), repair, reuse (by intent), model prompts.
var openGoal = map[string]string{
	"builtin/glossary":   "[meaning] \"I keep reading liminal …\" (its sub-goal \"What is that?\") finds no tool; \"Look up petrichor in the dictionary\" plans directory__find_person (\"look up\" is in its description, and the particle \"up\" counts as a word of what the request is about, so it is no weak evidence), \"What's the sense of ubiquitous?\" repos__org_profile and \"what obsequious signifies\" links__post_to_channel, which ask for what the request does not hold (declined: nothing run); the keys of these requests have no entities (so the tools that served requests of the same entities do not outrank those), and their semantic similarity to the family's keys (0.12 to 0.33) is in the range of other families' (the failing define_word is repaired onto lexicon_entry)",
	"builtin/stock":      "[meaning] \"Tarps on hand?\" finds no stock tool (links__post_to_channel asks for a channel, declined); its key has no entities to meet the family's tools by, so neither the tools that served requests of the same entities nor family joining by meaning reach stock_level; no request runs a tool of the other intent",
	"sampling/glossary":  "[meaning, model prompts] \"What is that?\", \"What's the sense of ubiquitous?\" and \"… signifies?\" have no fitting candidate, so the model answers without steps (define_word's 503 is repaired onto lexicon_entry by the model)",
	"sampling/translate": "[ratio] every request is served (the tools that served requests with the same entities are candidates), but its one failed call, translate_text refusing Greek, falls in the second half with none in the first: no earlier request called translate_text with a language it refuses, so there was nothing to learn from, and the goal forgives a late failure only as the probe of a tool on cool-down",
	"sampling/stock":     "[meaning] \"Tarps on hand?\" finds no stock tool among the candidates, so the model answers without steps; no request runs a tool of the other intent",
}

// silentlyWrongCeiling is, per planner/family, the most silently wrong
// successes the benchmark accepts (a task reported succeeded while the
// upstream never received the request's values). The goal is none, and
// no row allows any: measured 2026-11-29 on branch wrongs, the last two
// rows that did (builtin/links 4: a request needing two tools planned as
// shorten_url alone; builtin/geo 2: a repair onto a glossary tool that
// takes any text, and "lat/long" taken as an owner/name) are at 0. Never
// add an entry: fix the agents instead.
var silentlyWrongCeiling = map[string]int{}

// wordedFamilies are the worded families (see above).
func wordedFamilies() []benchFamily {
	return []benchFamily{glossaryFamily(), flightsFamily(), reposFamily(), translateFamily(),
		geoFamily(), directoryFamily(), linksFamily(), stockFamily()}
}

// withComposed adds to facts the value of every composed slot whose parts
// facts give.
func withComposed(composed []benchComposed, facts map[string]string) map[string]string {
	for _, s := range composed {
		var vals []string
		for _, p := range s.parts {
			if v, ok := facts[p]; ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == len(s.parts) {
			facts[s.key] = strings.Join(vals, s.sep)
		}
	}
	return facts
}

func glossaryFamily() benchFamily {
	f := benchFamily{
		name: "glossary", behavior: "best-worded tool always fails (503); alternative worded differently",
		slots: []benchSlot{{"word", []string{"word", "term", "headword"}}},
		tools: []benchTool{
			{name: "define_word", description: "definition of an English word",
				params: []benchParam{{"word", "string", "the word"}}, fail: alwaysFails},
			{name: "lexicon_entry", description: "meaning and usage notes of a term",
				params: []benchParam{{"term", "string", "the term"}}},
		},
		steps: [][]string{{"define_word", "lexicon_entry"}},
	}
	for _, r := range [][2]string{
		{"Define the word serendipity", "serendipity"},
		{"What does ephemeral mean?", "ephemeral"},
		{"Give me the definition of quixotic", "quixotic"},
		{"I keep reading liminal everywhere. What is that?", "liminal"},
		{"Explain sonder to me", "sonder"},
		{"Look up petrichor in the dictionary", "petrichor"},
		{"Meaning of the term halcyon?", "halcyon"},
		{"How would you gloss the adjective laconic?", "laconic"},
		{"What's the sense of ubiquitous?", "ubiquitous"},
		{"Can you tell me what obsequious signifies?", "obsequious"},
	} {
		f.requests = append(f.requests, benchRequest{text: r[0], facts: map[string]string{"word": r[1]}})
	}
	return f
}

func flightsFamily() benchFamily {
	f := benchFamily{
		name: "flights", behavior: "composed value: route \"such as LHR-JFK\" from two airports; a one-airport distractor",
		slots: []benchSlot{
			{"origin", []string{"origin", "from", "departure"}},
			{"destination", []string{"destination", "to", "arrival"}},
			{"route", []string{"route"}},
		},
		composed: []benchComposed{{"route", []string{"origin", "destination"}, "-"}},
		tools: []benchTool{
			{name: "search_fares", description: "cheapest fares for a flight route",
				params: []benchParam{{"route", "string", "route as origin-destination airport codes, such as LHR-JFK"}}},
			{name: "airport_info", description: "facts about an airport: terminals, lounges, transport",
				params: []benchParam{{"airport", "string", "IATA code of the airport, such as LHR"}}},
		},
		steps: [][]string{{"search_fares"}},
	}
	for _, r := range [][3]string{
		{"Find the cheapest fares from LHR to JFK", "LHR", "JFK"},
		{"How much is a flight from CDG to HND?", "CDG", "HND"},
		{"Search fares on the route SFO-NRT", "SFO", "NRT"},
		{"What does it cost to fly MAD to BOG?", "MAD", "BOG"},
		{"Price a ticket AMS to SIN", "AMS", "SIN"},
		{"I want to go from SYD to AKL, what are the prices?", "SYD", "AKL"},
		{"Cheapest way to get from DXB to BOM by air?", "DXB", "BOM"},
		{"Show me fares between YYZ and LAX", "YYZ", "LAX"},
		{"Any cheap tickets out of FRA into ORD?", "FRA", "ORD"},
		{"Flight prices for MEX-GRU, please", "MEX", "GRU"},
	} {
		f.requests = append(f.requests, benchRequest{text: r[0], facts: withComposed(f.composed, map[string]string{"origin": r[1], "destination": r[2]})})
	}
	return f
}

func reposFamily() benchFamily {
	f := benchFamily{
		name: "repos", behavior: "composed value: repository \"owner/name\", given whole or in parts; an owner-only distractor",
		slots: []benchSlot{
			{"owner", []string{"owner", "org", "organization"}},
			{"project", []string{"project", "repo_name"}},
			{"repository", []string{"repository", "repo", "full_name"}},
		},
		composed: []benchComposed{{"repository", []string{"owner", "project"}, "/"}},
		tools: []benchTool{
			{name: "repo_open_issues", description: "count the open issues of a code repository",
				params: []benchParam{{"repository", "string", "repository as owner/name, such as golang/go"}}},
			{name: "org_profile", description: "public profile of a code hosting organization",
				params: []benchParam{{"org", "string", "organization login, such as golang"}}},
		},
		steps: [][]string{{"repo_open_issues"}},
	}
	for _, r := range [][3]string{
		{"How many open issues does golang/go have?", "golang", "go"},
		{"Count the open issues of the widgets repository owned by acme", "acme", "widgets"},
		{"Open issue count for torvalds/linux", "torvalds", "linux"},
		{"Is the backlog of rust-lang/rust big? How many tickets are open?", "rust-lang", "rust"},
		{"What's outstanding in the bug tracker of nodejs/node?", "nodejs", "node"},
		{"Tally the unresolved tickets of the turbo project under the hotwired org", "hotwired", "turbo"},
		{"pandas-dev/pandas: number of open issues?", "pandas-dev", "pandas"},
		{"How many bugs remain unfixed in vercel/next.js?", "vercel", "next.js"},
		{"In the repo called react, owned by facebook, how many issues are still open?", "facebook", "react"},
		{"Pending tickets for hashicorp/terraform?", "hashicorp", "terraform"},
	} {
		f.requests = append(f.requests, benchRequest{text: r[0], facts: withComposed(f.composed, map[string]string{"owner": r[1], "project": r[2]})})
	}
	return f
}

func translateFamily() benchFamily {
	supported := []string{"french", "spanish", "german"}
	f := benchFamily{
		name: "translate", behavior: "best-worded tool fails for unsupported languages (permanent 400); alternative worded differently",
		slots: []benchSlot{
			{"text", []string{"text", "phrase", "passage", "sentence"}},
			{"language", []string{"target_language", "language", "tongue", "target", "lang"}},
		},
		tools: []benchTool{
			{name: "translate_text", description: "translate a text into another language",
				params: []benchParam{{"text", "string", "the text to translate"}, {"target_language", "string", "language to translate into, such as French"}},
				fail: func(args map[string]any, _ int) string {
					if lang := strings.ToLower(fmt.Sprint(args["target_language"])); !slices.Contains(supported, lang) {
						return fmt.Sprintf("unsupported target language %q (400)", lang)
					}
					return ""
				}},
			{name: "render_phrase", description: "render a phrase in a chosen tongue",
				params: []benchParam{{"phrase", "string", "the phrase"}, {"tongue", "string", "the tongue, such as Japanese"}}},
		},
		steps: [][]string{{"translate_text", "render_phrase"}},
	}
	for _, r := range [][3]string{
		{"Translate 'good morning' into French", "good morning", "French"},
		{"How do you say 'thank you' in Japanese?", "thank you", "Japanese"},
		{"Put 'where is the station' into Spanish", "where is the station", "Spanish"},
		{"What is 'see you tomorrow' in Korean?", "see you tomorrow", "Korean"},
		{"Render 'happy birthday' in German", "happy birthday", "German"},
		{"I need 'the bill, please' in Italian", "the bill, please", "Italian"},
		{"Could you turn 'good night' into Portuguese?", "good night", "Portuguese"},
		{"Say 'welcome home' in Turkish", "welcome home", "Turkish"},
		{"Translate the sentence 'I am lost' to Greek", "I am lost", "Greek"},
		{"'Nice to meet you': how is that in Swahili?", "Nice to meet you", "Swahili"},
	} {
		f.requests = append(f.requests, benchRequest{text: r[0], facts: map[string]string{"text": r[1], "language": r[2]}})
	}
	return f
}

func geoFamily() benchFamily {
	f := benchFamily{
		name: "geo", behavior: "best-worded tool fails 2 calls in 3 (503); alternative worded differently",
		slots: []benchSlot{{"address", []string{"address", "place", "location"}}},
		tools: []benchTool{
			{name: "geocode_address", description: "coordinates of a street address",
				params: []benchParam{{"address", "string", "the street address"}},
				fail: func(_ map[string]any, call int) string {
					if call%3 != 0 {
						return unavailable
					}
					return ""
				}},
			{name: "place_position", description: "latitude and longitude of a place",
				params: []benchParam{{"place", "string", "the place"}}},
		},
		steps: [][]string{{"geocode_address", "place_position"}},
	}
	for _, r := range [][2]string{
		{"Geocode 10 Downing Street, London", "10 Downing Street, London"},
		{"What are the coordinates of 1600 Pennsylvania Avenue, Washington?", "1600 Pennsylvania Avenue, Washington"},
		{"Where exactly on the map is 221B Baker Street, London?", "221B Baker Street, London"},
		{"Latitude and longitude for 5 Avenue Anatole France, Paris", "5 Avenue Anatole France, Paris"},
		{"Pin 350 Fifth Avenue, New York on a map", "350 Fifth Avenue, New York"},
		{"GPS position of Unter den Linden 77, Berlin?", "Unter den Linden 77, Berlin"},
		{"Geocode the street address 1 Infinite Loop, Cupertino", "1 Infinite Loop, Cupertino"},
		{"Find the lat/long of Piazza del Colosseo 1, Rome", "Piazza del Colosseo 1, Rome"},
		{"Which map point matches Rua Augusta 100, Lisbon?", "Rua Augusta 100, Lisbon"},
		{"Locate Dam Square 1, Amsterdam for me", "Dam Square 1, Amsterdam"},
	} {
		f.requests = append(f.requests, benchRequest{text: r[0], facts: map[string]string{"address": r[1]}})
	}
	return f
}

// directoryEmail is the address the directory upstream returns for a
// person: "Dana Whitfield" → dana.whitfield@corp.example.
func directoryEmail(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), ".")) + "@corp.example"
}

func directoryFamily() benchFamily {
	f := benchFamily{
		name: "directory", behavior: "two steps: the address only the directory gives (name → email), then the mail; the mail tool takes any \"to\"",
		slots: []benchSlot{
			{"person", []string{"name", "person", "full_name"}},
			{"message", []string{"body", "message", "content"}},
			{"email", []string{"email", "to", "recipient", "email_address"}},
		},
		tools: []benchTool{
			{name: "find_person", description: "look up a person in the company directory by name and return their email address",
				params: []benchParam{{"name", "string", "the person's full name"}},
				output: func(args map[string]any) map[string]any {
					name := fmt.Sprint(args["name"])
					return map[string]any{"name": name, "email": directoryEmail(name)}
				},
				outputSchema: map[string]string{"name": "string", "email": "string"}},
			{name: "send_email", description: "send an email message to an address",
				params: []benchParam{{"to", "string", "the recipient's email address"}, {"body", "string", "the message"}}},
		},
		steps: [][]string{{"find_person"}, {"send_email"}},
	}
	for _, r := range [][3]string{
		{"Email Dana Whitfield that the lab is booked", "Dana Whitfield", "the lab is booked"},
		{"Send Marco Rossi an email saying the keys are at reception", "Marco Rossi", "the keys are at reception"},
		{"Write to Aiko Tanaka: the review moved to Monday", "Aiko Tanaka", "the review moved to Monday"},
		{"Drop Samuel Okafor a line that lunch is on us", "Samuel Okafor", "lunch is on us"},
		{"Tell Helena Berg by mail that the badge is ready", "Helena Berg", "the badge is ready"},
		{"Could you email Luis Ortega that the parking is full?", "Luis Ortega", "the parking is full"},
		{"Mail Fatima Zahra the news that the grant was approved", "Fatima Zahra", "the grant was approved"},
		{"Let Noah Fischer know via email that the printer is fixed", "Noah Fischer", "the printer is fixed"},
		{"Shoot Chloe Martin a note: the visitors arrive at noon", "Chloe Martin", "the visitors arrive at noon"},
		{"Notify Ravi Patel that his laptop is configured", "Ravi Patel", "his laptop is configured"},
	} {
		f.requests = append(f.requests, benchRequest{text: r[0], facts: map[string]string{"person": r[1], "message": r[2]},
			expect: map[string]string{"email": directoryEmail(r[1])}})
	}
	return f
}

// shortLink is the short link the links upstream returns for a URL.
func shortLink(url string) string {
	h := fnv.New32a()
	h.Write([]byte(url))
	return fmt.Sprintf("https://sho.rt/%07x", h.Sum32()&0xfffffff)
}

func linksFamily() benchFamily {
	f := benchFamily{
		name: "links", behavior: "two steps with data flow: shorten the URL, then post the short link (step 1's output)",
		slots: []benchSlot{
			{"url", []string{"url", "long_url"}},
			{"channel", []string{"channel", "room"}},
			{"link", []string{"short_link", "text", "message", "link"}},
		},
		tools: []benchTool{
			{name: "shorten_url", description: "shorten a long URL and return the short link",
				params: []benchParam{{"url", "string", "the long URL"}},
				output: func(args map[string]any) map[string]any {
					return map[string]any{"short_link": shortLink(fmt.Sprint(args["url"]))}
				},
				outputSchema: map[string]string{"short_link": "string"}},
			{name: "post_to_channel", description: "post a message to a chat channel",
				params: []benchParam{{"channel", "string", "the channel, such as #general"}, {"text", "string", "what to post"}}},
		},
		steps: [][]string{{"shorten_url"}, {"post_to_channel"}},
	}
	for _, r := range [][3]string{
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
		f.requests = append(f.requests, benchRequest{text: r[0], facts: map[string]string{"url": r[1], "channel": r[2]},
			expect: map[string]string{"link": "~" + shortLink(r[1])}})
	}
	return f
}

func stockFamily() benchFamily {
	record, level := "record_delivery", "stock_level"
	f := benchFamily{
		name: "stock", behavior: "two intents alternating on the same items: record a delivery, query the level; reuse across them must be refused",
		slots: []benchSlot{
			{"item", []string{"item", "product", "sku"}},
			{"quantity", []string{"quantity", "count", "units"}},
		},
		tools: []benchTool{
			{name: record, description: "record items received into the warehouse stock",
				params: []benchParam{{"item", "string", "the item"}, {"quantity", "integer", "how many units arrived"}}},
			{name: level, description: "how many units of an item the warehouse holds",
				params: []benchParam{{"item", "string", "the item"}}},
		},
	}
	for _, r := range []struct{ text, item, quantity string }{
		{"We received 40 helmets, add them to the stock", "helmets", "40"},
		{"How many helmets are in stock?", "helmets", ""},
		{"Book in 25 ladders that just arrived", "ladders", "25"},
		{"Do we still have ladders on the shelves?", "ladders", ""},
		{"Log a delivery of 300 gloves", "gloves", "300"},
		{"Stock check: gloves", "gloves", ""},
		{"Put 8 drills into the warehouse stock", "drills", "8"},
		{"What's the count of drills in the warehouse?", "drills", ""},
		{"Receive 60 tarps into inventory", "tarps", "60"},
		{"Tarps on hand?", "tarps", ""},
	} {
		req := benchRequest{text: r.text, facts: map[string]string{"item": r.item}, steps: [][]string{{level}}}
		if r.quantity != "" {
			req.facts["quantity"], req.steps = r.quantity, [][]string{{record}}
		}
		f.requests = append(f.requests, req)
	}
	return f
}

// benchChain is the fake model's plan of two steps when no one listed
// tool serves the request: first gives, under field of its output, the
// value that second's parameter param needs and the request lacks (a tool
// that says it returns that value: "… and return their email address").
type benchChain struct {
	m             *fakeModel
	first, second promptTool
	param, field  string
}

// chain finds such a pair among the prompt's tools: second is not marked
// failing, the request gives every required value of second but param,
// first says it returns param's value, its output schema has a property
// for it, the request gives first's required values, and the two take
// every value of the request. Nil when there is none.
func (m *fakeModel) chain(ctx context.Context, request string, tools []promptTool) *benchChain {
	f, r := m.current.get()
	for _, second := range tools {
		if second.failing {
			continue
		}
		var s schemaProps
		if json.Unmarshal([]byte(m.schemaOf(ctx, second)), &s) != nil {
			continue
		}
		var missing []string
		required := s.Required
		if len(required) == 0 {
			required = slices.Collect(mapsKeys(s.Properties))
		}
		for _, name := range required {
			if benchValue(r, f.slotOf(name), s.Properties[name].Type) == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) != 1 || f.slotOf(missing[0]) == "" {
			continue
		}
		key := f.slotOf(missing[0])
		for _, first := range tools {
			if first.name == second.name || first.failing || !f.returns(first.description, key) {
				continue
			}
			field := m.outputField(f, first.name, key)
			var fs schemaProps
			if field == "" || json.Unmarshal([]byte(m.schemaOf(ctx, first)), &fs) != nil {
				continue
			}
			if slices.ContainsFunc(fs.Required, func(name string) bool { return benchValue(r, f.slotOf(name), fs.Properties[name].Type) == nil }) {
				continue
			}
			params := slices.Collect(mapsKeys(fs.Properties))
			for name := range s.Properties {
				if name != missing[0] {
					params = append(params, name)
				}
			}
			if f.takesAll(r, params) {
				first.schema, second.schema = m.schemaOf(ctx, first), m.schemaOf(ctx, second)
				return &benchChain{m: m, first: first, second: second, param: missing[0], field: field}
			}
		}
	}
	return nil
}

var returnsRE = regexp.MustCompile(`\breturns?\b`)

// returns reports whether a tool's description says it returns the value
// of slot key: one of the slot's names after "return".
func (f *benchFamily) returns(description, key string) bool {
	d := strings.ToLower(description)
	loc := returnsRE.FindStringIndex(d)
	if loc == nil {
		return false
	}
	i := slices.IndexFunc(f.slots, func(s benchSlot) bool { return s.key == key })
	if i < 0 {
		return false
	}
	return slices.ContainsFunc(f.slots[i].aliases, func(a string) bool {
		return strings.Contains(d[loc[1]:], strings.ReplaceAll(a, "_", " "))
	})
}

// outputField is the property of tool's output schema (tools/list) that
// holds the value of slot key, "" when it has none.
func (m *fakeModel) outputField(f *benchFamily, tool, key string) string {
	var out schemaProps
	if json.Unmarshal([]byte(m.outputs[tool]), &out) != nil {
		return ""
	}
	for name := range out.Properties {
		if f.slotOf(name) == key {
			return name
		}
	}
	return ""
}

func (c *benchChain) thought(request string) []byte {
	b, _ := json.Marshal(map[string]any{
		"subGoals":  []string{"get the value the request lacks from " + c.first.name, "then " + request},
		"reasoning": fmt.Sprintf("%s needs %s, which the request does not give and %s returns", c.second.name, c.param, c.first.name),
		"recommendedTools": []map[string]string{
			{"tool": c.first.name, "reason": "returns " + c.param},
			{"tool": c.second.name, "reason": "serves the request with it"},
		},
		"confidence": 0.7,
	})
	return b
}

func (c *benchChain) plan(request string) []byte {
	inputs := map[string]any{}
	var required []string
	firstArgs := c.m.fill(request, c.first.schema, "", inputs, &required)
	secondArgs := c.m.fill(request, c.second.schema, c.param, inputs, &required)
	secondArgs[c.param] = "{{steps.lookup.output." + c.field + "}}"
	answer := map[string]any{"goal": request, "steps": []any{
		map[string]any{"id": "lookup", "tool": c.first.name, "arguments": firstArgs},
		map[string]any{"id": "use", "tool": c.second.name, "arguments": secondArgs, "dependsOn": []string{"lookup"}},
	}}
	if len(inputs) > 0 {
		slices.Sort(required)
		answer["inputs"] = map[string]any{"type": "object", "properties": inputs, "required": required}
	}
	b, _ := json.Marshal(answer)
	return b
}

// fill gives each parameter of schema but skip the value the request
// gives, or declares it an input, as the one-step plan does.
func (m *fakeModel) fill(request, schema, skip string, inputs map[string]any, required *[]string) map[string]any {
	f, r := m.current.get()
	var s schemaProps
	_ = json.Unmarshal([]byte(schema), &s)
	args := map[string]any{}
	for name, p := range s.Properties {
		if name == skip {
			continue
		}
		key := f.slotOf(name)
		if v := benchValue(r, key, p.Type); v != nil && f.inRequest(request, r, key) {
			args[name] = v
			continue
		}
		args[name] = "{{inputs." + name + "}}"
		inputs[name] = map[string]any{"type": cmp.Or(p.Type, "string")}
		*required = append(*required, name)
	}
	return args
}

// benchStopwords are the words that do not count as a shared keyword.
var benchStopwords = strings.Fields(`a an the of to in on for by and or is are be it its this that
	what whats how do does me my i we our you your can could would will with from into at as
	such one two another their there them his her please still just`)

// benchKeywords are the keywords of s: lowercase words of three letters
// or more that are not stopwords.
func benchKeywords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) >= 3 && !slices.Contains(benchStopwords, w) {
			out = append(out, w)
		}
	}
	return out
}

// sharesKeyword reports whether two keywords are the same word, or one
// is the stem of the other ("short", "shorten").
func sharesKeyword(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || len(a) >= 4 && strings.HasPrefix(b, a)
}

// TestLearningFamiliesWordedApart checks the wording the benchmark's
// worded families promise: ten requests each, no two alike once
// their values are taken out, at least three of the ten sharing no
// keyword (nor its stem) with the names and descriptions of the tools
// that serve the family, and every value a request gives is in its text.
func TestLearningFamiliesWordedApart(t *testing.T) {
	families := wordedFamilies()
	if len(families) < 8 {
		t.Errorf("%d families; want at least 8", len(families))
	}
	for _, f := range families {
		if len(f.requests) != 10 {
			t.Errorf("%s: %d requests, want 10", f.name, len(f.requests))
		}
		var toolWords []string
		for _, tool := range f.tools {
			toolWords = append(toolWords, benchKeywords(strings.ReplaceAll(tool.name, "_", " ")+" "+tool.description)...)
		}
		shapes := map[string]string{}
		apart := 0
		for _, r := range f.requests {
			shape := strings.ToLower(r.text)
			keys := slices.Collect(mapsKeys(r.facts))
			slices.SortFunc(keys, func(a, b string) int { // composed values last, longer values first
				return cmp.Or(cmp.Compare(len(f.parts(a)), len(f.parts(b))), len(r.facts[b])-len(r.facts[a]), strings.Compare(a, b))
			})
			for _, key := range keys {
				v := r.facts[key]
				if f.parts(key) != nil && !strings.Contains(shape, strings.ToLower(v)) {
					continue // a composed value the request gives in parts
				}
				if !strings.Contains(shape, strings.ToLower(v)) {
					t.Errorf("%s: %q does not contain its value %s = %q", f.name, r.text, key, v)
				}
				shape = strings.ReplaceAll(shape, strings.ToLower(v), " § ")
			}
			if other, ok := shapes[shape]; ok {
				t.Errorf("%s: %q and %q are worded alike (%q)", f.name, r.text, other, shape)
			}
			shapes[shape] = r.text
			shared := slices.ContainsFunc(benchKeywords(shape), func(w string) bool {
				return slices.ContainsFunc(toolWords, func(tw string) bool { return sharesKeyword(w, tw) })
			})
			if !shared {
				apart++
			}
		}
		if apart < 3 {
			t.Errorf("%s: %d requests share no keyword with its tools; want at least 3", f.name, apart)
		}
		t.Logf("%s: %d of %d requests share no keyword with the tools", f.name, apart, len(f.requests))
	}
}

// TestLearningBenchServedAtTheUpstream checks the benchmark's own measure:
// what counts as served, from the calls an upstream received, and so what
// counts as a silently wrong success when the task says it succeeded.
func TestLearningBenchServedAtTheUpstream(t *testing.T) {
	families := map[string]benchFamily{}
	for _, f := range wordedFamilies() {
		families[f.name] = f
	}
	call := func(tool string, args map[string]any) benchCall { return benchCall{tool: tool, args: args} }
	failed := func(c benchCall) benchCall { c.failed = true; return c }
	dana := directoryEmail("Dana Whitfield")
	for _, tc := range []struct {
		name, family string
		request      int
		calls        []benchCall
		want         bool
	}{
		{"composed route", "flights", 0, []benchCall{call("search_fares", map[string]any{"route": "LHR-JFK"})}, true},
		{"one airport for the route", "flights", 0, []benchCall{call("search_fares", map[string]any{"route": "LHR"})}, false},
		{"the distractor", "flights", 0, []benchCall{call("airport_info", map[string]any{"airport": "LHR"})}, false},
		{"the right call failed", "flights", 0, []benchCall{failed(call("search_fares", map[string]any{"route": "LHR-JFK"}))}, false},
		{"composed repository from parts", "repos", 1, []benchCall{call("repo_open_issues", map[string]any{"repository": "acme/widgets"})}, true},
		{"owner alone", "repos", 1, []benchCall{call("repo_open_issues", map[string]any{"repository": "acme"})}, false},
		{"repaired after failures", "glossary", 1, []benchCall{failed(call("define_word", map[string]any{"word": "ephemeral"})), call("lexicon_entry", map[string]any{"term": "ephemeral"})}, true},
		{"the word's quotes and case aside", "translate", 0, []benchCall{call("translate_text", map[string]any{"text": "'Good morning'", "target_language": "french"})}, true},
		{"lookup then mail to the address", "directory", 0, []benchCall{call("find_person", map[string]any{"name": "Dana Whitfield"}), call("send_email", map[string]any{"to": dana, "body": "Dana, the lab is booked."})}, true},
		{"the name where the address goes", "directory", 0, []benchCall{call("send_email", map[string]any{"to": "Dana Whitfield", "body": "the lab is booked"})}, false},
		{"lookup and no mail", "directory", 0, []benchCall{call("find_person", map[string]any{"name": "Dana Whitfield"})}, false},
		{"short link posted", "links", 0, []benchCall{call("shorten_url", map[string]any{"url": "https://example.org/reports/2026/q3/summary"}), call("post_to_channel", map[string]any{"channel": "news", "text": "see " + shortLink("https://example.org/reports/2026/q3/summary")})}, true},
		{"long link posted", "links", 0, []benchCall{call("shorten_url", map[string]any{"url": "https://example.org/reports/2026/q3/summary"}), call("post_to_channel", map[string]any{"channel": "#news", "text": "https://example.org/reports/2026/q3/summary"})}, false},
		{"delivery recorded", "stock", 0, []benchCall{call("record_delivery", map[string]any{"item": "helmets", "quantity": float64(40)})}, true},
		{"a query for a delivery", "stock", 0, []benchCall{call("stock_level", map[string]any{"item": "helmets"})}, false},
		{"a delivery recorded for a query", "stock", 1, []benchCall{call("stock_level", map[string]any{"item": "helmets"}), call("record_delivery", map[string]any{"item": "helmets", "quantity": float64(1)})}, false},
	} {
		f := families[tc.family]
		if got := f.servedBy(&f.requests[tc.request], tc.calls); got != tc.want {
			t.Errorf("%s (%s #%d %q): served = %v, want %v", tc.name, tc.family, tc.request+1, f.requests[tc.request].text, got, tc.want)
		}
	}
}

// TestLearningGoalForgivesOnlyAProbe checks the goal's count of the second
// half's failed calls: one is forgiven only when it can be the probe of a
// tool on cool-down (the first half failed); a late first failure with
// nothing failed before is not.
func TestLearningGoalForgivesOnlyAProbe(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		failedFirst, failedSecond int
		want                      bool
	}{
		{"no failure", 0, 0, true},
		{"a probe after the first half's failures", 2, 1, true},
		{"a failure late, nothing failed before", 0, 1, false},
		{"more than 30 % and the probe", 3, 2, false},
		{"within 30 % and the probe", 4, 2, true},
	} {
		r := familyResult{requests: 10, succeeded: 10, failedFirst: tc.failedFirst, failedSecond: tc.failedSecond, probeAllowed: true}
		if got := r.goalMet(); got != tc.want {
			t.Errorf("%s: goal met = %v, want %v", tc.name, got, tc.want)
		}
	}
}
