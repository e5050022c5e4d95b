package agents

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRequestValuesDecisions: the values of a specific kind a request
// gives, which a plan must use.
func TestRequestValuesDecisions(t *testing.T) {
	for _, c := range []struct {
		text string
		want []requestValue
	}{
		{"Post a shortened version of https://example.org/blog/launch in #marketing",
			[]requestValue{{"https://example.org/blog/launch", shapeURL}, {"#marketing", shapeTag}}},
		{"Can you give #ops a tidy version of https://example.org/status/incidents/42?",
			[]requestValue{{"https://example.org/status/incidents/42", shapeURL}, {"#ops", shapeTag}}},
		{"Shorten this one and send it to #support: https://example.org/help",
			[]requestValue{{"https://example.org/help", shapeURL}, {"#support", shapeTag}}},
		{"Email ada@example.org the report", []requestValue{{"ada@example.org", shapeEmail}}},
		// None: an issue number, a URL's fragment, a word.
		{"Close issue #12", nil},
		{"Open https://example.org/page#section", []requestValue{{"https://example.org/page#section", shapeURL}}},
		{"What is the weather in Paris?", nil},
	} {
		if got := requestValues(c.text); !slices.Equal(got, c.want) {
			t.Errorf("requestValues(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestParamTakesDecisions: which parameters take a URL, an address or a
// "#channel"; a free-text parameter takes none of them as its kind.
func TestParamTakesDecisions(t *testing.T) {
	url, email, tag := requestValue{"https://x.org/a", shapeURL}, requestValue{"a@x.org", shapeEmail}, requestValue{"#ops", shapeTag}
	str := func(desc string) schemaProperty { return schemaProperty{Type: "string", Description: desc} }
	for _, c := range []struct {
		name string
		prop schemaProperty
		v    requestValue
		want bool
	}{
		{"url", str("the long URL"), url, true},
		{"link", schemaProperty{Type: "string", Format: "uri"}, url, true},
		{"to", str("the recipient's email address"), email, true},
		{"channel", str("the channel, such as #general"), tag, true},
		{"room", str("where to post"), tag, true},
		{"target", str("where to post, such as #general"), tag, true},
		// Not taken.
		{"text", str("what to post"), url, false},
		{"text", str("what to post"), tag, false},
		{"item", str("the item"), tag, false},
		{"repository", str("repository as owner/name, such as golang/go"), tag, false},
		{"channel", str("the channel, such as #general"), url, false},
		{"to", str("the recipient's email address"), tag, false},
	} {
		p := classifySlot(c.name, c.prop, true)
		if got := paramTakes(p, c.v); got != c.want {
			t.Errorf("paramTakes(%s %q, %s) = %v, want %v", c.name, c.prop.Description, c.v.text, got, c.want)
		}
	}
}

// TestWholeValueNotTheAttributeAsked: a word of a composed shape that
// names what is asked ("the lat/long of Rome") fills no parameter, however
// it is shaped; a value of that shape elsewhere still does.
func TestWholeValueNotTheAttributeAsked(t *testing.T) {
	repo := classifySlot("repository", schemaProperty{Type: "string", Description: "repository as owner/name, such as golang/go"}, true)
	for _, c := range []struct {
		text, want string
	}{
		{"Find the lat/long of Piazza del Colosseo 1, Rome", ""},
		{"What is the latitude/longitude for 5 Avenue Anatole France?", ""},
		{"How many open issues does golang/go have?", "golang/go"},
		{"Open issue count for torvalds/linux", "torvalds/linux"},
		{"pandas-dev/pandas: number of open issues?", "pandas-dev/pandas"},
		{"Show the open issues of the repository acme/widgets", "acme/widgets"},
	} {
		got := ""
		if f, ok := fillSlots(c.text, []slotParam{repo})["repository"]; ok {
			got, _ = f.value.(string)
		}
		if got != c.want {
			t.Errorf("%q: repository = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestChannelShape: "such as #general" shows a shape: a "#name" word of the
// request fills the channel, a model's "general" passes the loose check,
// a sentence does not.
func TestChannelShape(t *testing.T) {
	sp := schemaProperty{Type: "string", Description: "the channel, such as #general"}
	shape := shapeOf(sp)
	if shape == nil {
		t.Fatal("no shape for a channel such as #general")
	}
	for v, want := range map[string]bool{"#ops": true, "#dev-team": true, "general": false, "post it": false} {
		if got := shape.problem(v) == ""; got != want {
			t.Errorf("strict %q: fits = %v, want %v", v, got, want)
		}
	}
	if shape.check("general", false) != "" || shape.check("post it there", false) == "" {
		t.Errorf("loose check: general %q, a sentence %q", shape.check("general", false), shape.check("post it there", false))
	}
	args, _ := fillStepArguments(json.RawMessage(`{"type":"object","properties":{"channel":{"type":"string","description":"the channel, such as #general"}},"required":["channel"]}`),
		"share it in #dev", "share it in #dev", "s", nil, nil, newInputsSchema())
	if !strings.Contains(string(args), `"#dev"`) {
		t.Errorf("arguments %s; want the channel #dev", args)
	}
}

// TestRepairMovesNoValueOffItsMeaning: a repair found by the search may
// move a value onto a parameter of another name only when the tool is
// about what the request is about; a sibling or a tool that served the
// family may (they serve the need), and a value taken by its own name or
// a specific kind always may.
func TestRepairMovesNoValueOffItsMeaning(t *testing.T) {
	tool := func(name, desc, param string) *ToolFacts {
		f := &ToolFacts{}
		f.Name, f.Description, f.Source = name, desc, strings.Split(name, "__")[0]
		f.InputSchema = json.RawMessage(`{"type":"object","properties":{"` + param + `":{"type":"string","description":"the ` + param + `"}},"required":["` + param + `"]}`)
		return f
	}
	lexicon := tool("glossary__lexicon_entry", "meaning and usage notes of a term", "term")
	place := tool("geo__place_position", "latitude and longitude of a place", "place")
	streets := tool("maps__street_lookup", "coordinates of a street", "street")
	// The failed tool: geo__geocode_address, "coordinates of a street
	// address", of the upstream geo.
	goal := "Geocode 10 Downing Street, London"
	for _, c := range []struct {
		name   string
		origin candidateOrigin
		f      *ToolFacts
		repair *StepRepair
		refuse bool
	}{
		{"another domain, by type alone", fromSearch, lexicon, &StepRepair{Known: []string{"term = address"}, guessed: true}, true},
		{"another domain, text onto text", fromFitting, lexicon, &StepRepair{Known: []string{"term = address"}}, true},
		{"the failed tool's upstream, found by the search", fromSearch, place, &StepRepair{Known: []string{"place = address"}, guessed: true}, false},
		{"a sibling", fromSibling, place, &StepRepair{Known: []string{"place = address"}, guessed: true}, false},
		{"served the family", fromFamily, place, &StepRepair{Known: []string{"place = address"}, guessed: true}, false},
		{"about the request's object", fromSearch, streets, &StepRepair{Known: []string{"street = address"}, guessed: true}, false},
		{"the same name", fromSearch, tool("x__notes", "notes", "address"), &StepRepair{Known: []string{"address = address"}}, false},
		{"composed", fromSearch, lexicon, &StepRepair{Known: []string{"term = from + to (composed)"}}, false},
	} {
		why := movedOffMeaning(c.origin, c.f, c.repair, goal, "geo")
		if (why != "") != c.refuse {
			t.Errorf("%s: movedOffMeaning = %q, want refused %v", c.name, why, c.refuse)
		}
	}
}

// TestSendsByIdiom: phrasings of sending a message that no verb says.
func TestSendsByIdiom(t *testing.T) {
	for text, want := range map[string]bool{
		"Write to Aiko Tanaka: the review moved to Monday": true,
		"Drop Samuel Okafor a line that lunch is on us":    true,
		"Shoot Chloe Martin a note: the visitors arrive":   true,
		"Please let Bo know that the build is green":       true,
		"Write the report to disk":                         false,
		"Drop the table users":                             false,
		"Drop it in #random":                               false,
		"Shoot a video of the launch":                      false,
		"Let the build run":                                false,
	} {
		if got := sendsByIdiom(text); got != want {
			t.Errorf("sendsByIdiom(%q) = %v, want %v", text, got, want)
		}
	}
	if requestEffect("Write to Aiko Tanaka: hi") != effectSend || requestEffect("Write the notes to the file") != effectWrite {
		t.Error("requestEffect: write to a person sends, write notes writes")
	}
}
