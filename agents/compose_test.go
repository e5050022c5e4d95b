package agents

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// composeCase is a request, a tool's parameters, and what each parameter
// must receive: the value (composed or taken), or, for a parameter absent
// from want, nothing from the request (a required one is asked for).
// note is text the composed value's note must hold, "" when none is due.
type composeCase struct {
	name     string
	request  string
	props    string // the properties of the input schema, without braces
	required []string
	want     map[string]any
	note     string
}

const (
	fxPair    = `"pair":{"type":"string","description":"currency pair such as USD/EUR"}`
	repoProp  = `"repository":{"type":"string","description":"the repository in owner/repo form"}`
	dayISO    = `"day":{"type":"string","description":"the day, as YYYY-MM-DD"}`
	dayEU     = `"day":{"type":"string","description":"the day, DD/MM/YYYY"}`
	amountNum = `"amount":{"type":"number","description":"how much"}`
)

var composeCases = []composeCase{
	// Composed from the request's parts, the way the example shows.
	{name: "currency pair from two codes", request: "Convert 100 USD to EUR", props: fxPair, required: []string{"pair"},
		want: map[string]any{"pair": "USD/EUR"}, note: "pair = 'USD/EUR' composed from 'USD' and 'EUR' in the request"},
	{name: "currency pair with into", request: "Convert 100 USD into JPY", props: fxPair, required: []string{"pair"}, want: map[string]any{"pair": "USD/JPY"}, note: "composed from 'USD' and 'JPY'"},
	{name: "currency pair: from goes first", request: "What is the rate to EUR from GBP?", props: fxPair, required: []string{"pair"}, want: map[string]any{"pair": "GBP/EUR"}, note: "composed from"},
	{name: "currency pair written whole", request: "Quote the pair USD/EUR", props: fxPair, required: []string{"pair"}, want: map[string]any{"pair": "USD/EUR"}},
	{name: "currency pair written whole, no name", request: "Rate for GBP/JPY please", props: fxPair, required: []string{"pair"}, want: map[string]any{"pair": "GBP/JPY"}},
	{name: "amount and pair side by side", request: "Convert 250 GBP to CHF", props: amountNum + "," + fxPair, required: []string{"amount", "pair"},
		want: map[string]any{"amount": 250, "pair": "GBP/CHF"}},
	{name: "lower-case code after a number", request: "Convert 100 usd to EUR", props: fxPair, required: []string{"pair"}, want: map[string]any{"pair": "USD/EUR"}},
	{name: "country pair", request: "Shipping rates from FR to DE", props: `"route":{"type":"string","description":"origin and destination countries, e.g. FR-DE"}`, required: []string{"route"},
		want: map[string]any{"route": "FR-DE"}},
	{name: "owner/repo written whole", request: "Star the repository golang/go", props: repoProp, required: []string{"repository"}, want: map[string]any{"repository": "golang/go"}},
	{name: "owner/repo from owner and repo", request: "Star the repo tools of owner golang", props: repoProp, required: []string{"repository"},
		want: map[string]any{"repository": "golang/tools"}, note: "repository = 'golang/tools' composed from 'golang' and 'tools' in the request"},
	{name: "owner/repo from named parts", request: "List issues for owner: kubernetes, repo: kubectl", props: repoProp, required: []string{"repository"},
		want: map[string]any{"repository": "kubernetes/kubectl"}},
	{name: "owner/repo, repository spelt out", request: "Open the repository linux of owner torvalds", props: repoProp, required: []string{"repository"},
		want: map[string]any{"repository": "torvalds/linux"}},
	{name: "date resolved from a whole date", request: "Events on March 5, 2024", props: dayISO, required: []string{"day"},
		want: map[string]any{"day": "2024-03-05"}, note: "day = '2024-03-05' resolved from 'March 5, 2024' in the request"},
	{name: "date, day first", request: "Book a room for the 5th of March 2024", props: dayISO, required: []string{"day"}, want: map[string]any{"day": "2024-03-05"}, note: "resolved from"},
	{name: "ISO date written in the template's order", request: "Invoice dated 2024-03-05", props: dayEU, required: []string{"day"},
		want: map[string]any{"day": "05/03/2024"}, note: "day = '05/03/2024' resolved from '2024-03-05'"},
	{name: "ISO date as is", request: "Events on 2024-03-05", props: dayISO, required: []string{"day"}, want: map[string]any{"day": "2024-03-05"}},
	{name: "semantic version", request: "Release version 2.0.1 of the app", props: `"version":{"type":"string","description":"semantic version such as 1.2.3"}`, required: []string{"version"},
		want: map[string]any{"version": "2.0.1"}},
	{name: "time zone", request: "Meeting time in Asia/Tokyo", props: `"timezone":{"type":"string","description":"IANA zone such as Europe/Paris"}`, required: []string{"timezone"},
		want: map[string]any{"timezone": "Asia/Tokyo"}},
	{name: "pattern kept", request: "Close ticket OPS-4521", props: `"ticket":{"type":"string","pattern":"^[A-Z]+-\\d+$"}`, required: []string{"ticket"}, want: map[string]any{"ticket": "OPS-4521"}},
	{name: "ISO 4217 code", request: "Prices in EUR", props: `"currency":{"type":"string","description":"ISO 4217 code such as USD"}`, required: []string{"currency"}, want: map[string]any{"currency": "EUR"}},
	{name: "example email kept", request: "Invite ann@example.com to the meeting", props: `"contact":{"type":"string","description":"the contact's email address, e.g. ann@example.com"}`, required: []string{"contact"},
		want: map[string]any{"contact": "ann@example.com"}},
	{name: "schema examples", request: "Show the rate of EUR/GBP", props: `"symbol":{"type":"string","examples":["USD/JPY"]}`, required: []string{"symbol"}, want: map[string]any{"symbol": "EUR/GBP"}},

	// Must not be filled: a value that looks plausible but fails the
	// shape, one that belongs to another parameter, or a part missing.
	{name: "one code is no pair", request: "Convert 100 USD", props: fxPair, required: []string{"pair"}},
	{name: "no code is no pair", request: "Convert my dollars to euros", props: fxPair, required: []string{"pair"}},
	{name: "two pairs: which one?", request: "Convert USD to EUR and GBP to JPY", props: fxPair, required: []string{"pair"}},
	{name: "lower-case word is no code", request: "Convert eur to usd", props: fxPair, required: []string{"pair"}},
	{name: "the amount belongs to the amount", request: "Convert 100 USD", props: amountNum + "," + fxPair, required: []string{"amount", "pair"}, want: map[string]any{"amount": 100}},
	{name: "a code is no owner/repo", request: "Star the repository go", props: repoProp, required: []string{"repository"}},
	{name: "a name is no owner/repo", request: "Star golang please", props: repoProp, required: []string{"repository"}},
	{name: "owner named twice", request: "Compare owner golang with owner google for repo go", props: repoProp, required: []string{"repository"}},
	{name: "relative date not guessed", request: "Events next Friday", props: dayISO, required: []string{"day"}},
	{name: "date without a year not guessed", request: "Events on March 5", props: dayISO, required: []string{"day"}},
	{name: "tomorrow not guessed", request: "Events tomorrow", props: dayISO, required: []string{"day"}},
	{name: "no such day", request: "Events on 2024-02-30", props: dayISO, required: []string{"day"}},
	{name: "no such month, format date", request: "Report for 2024-13-01", props: `"date":{"type":"string","format":"date"}`, required: []string{"date"}},
	{name: "a name is no email", request: "Invite Ann to the meeting", props: `"contact":{"type":"string","description":"the contact's email address, e.g. ann@example.com"}`, required: []string{"contact"}},
	{name: "a city is no URL", request: "Check the site for Paris", props: `"target":{"type":"string","description":"the page to check, e.g. https://example.com"}`, required: []string{"target"}},
	{name: "a number is no ticket", request: "Close ticket 4521", props: `"ticket":{"type":"string","pattern":"^[A-Z]+-\\d+$"}`, required: []string{"ticket"}},
	{name: "a major number is no semantic version", request: "Release version 2 of the app", props: `"version":{"type":"string","description":"semantic version such as 1.2.3"}`, required: []string{"version"}},
	{name: "a city is no time zone", request: "Meeting time in Tokyo", props: `"timezone":{"type":"string","description":"IANA zone such as Europe/Paris"}`, required: []string{"timezone"}},
	{name: "a country's name is no ISO code", request: "Holidays in France", props: `"country":{"type":"string","description":"ISO 3166-1 alpha-2 code such as FR"}`, required: []string{"country"}},
	{name: "a currency's name is no ISO code", request: "Prices in euros", props: `"currency":{"type":"string","description":"ISO 4217 code such as USD"}`, required: []string{"currency"}},
	{name: "a path is no owner/repo", request: "Read /etc/hosts", props: repoProp, required: []string{"repository"}},
	{name: "a URL's path is no owner/repo", request: "Open https://example.com/golang/go", props: repoProp, required: []string{"repository"}},
	{name: "the request's text is no pair", request: "Show the exchange rate", props: `"pair":{"type":"string","description":"the query, a currency pair such as USD/EUR"}`, required: []string{"pair"}},
}

// TestComposeValues: values are composed from the request's parts when
// the parameter shows their shape, with a note that says so; a value
// without the shape, or whose parts the request does not all give, is
// never filled, and a required one is asked for.
func TestComposeValues(t *testing.T) {
	mustNot := 0
	for _, c := range composeCases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := json.Marshal(c.required)
			schema := json.RawMessage(fmt.Sprintf(`{"type":"object","required":%s,"properties":{%s}}`, req, c.props))
			inputs := newInputsSchema()
			raw, taken := fillStepArguments(schema, c.request, c.request, "step", nil, nil, inputs)
			var args map[string]any
			if err := json.Unmarshal(raw, &args); err != nil {
				t.Fatal(err)
			}
			var props map[string]json.RawMessage
			_ = json.Unmarshal([]byte("{"+c.props+"}"), &props)
			for name := range props {
				want, wanted := c.want[name]
				got := args[name]
				if s, ok := got.(string); ok && strings.HasPrefix(s, "{{inputs.") {
					got = nil
				}
				switch {
				case !wanted && got != nil:
					t.Errorf("%q: %s = %v; want it unfilled (arguments %s)", c.request, name, got, raw)
				case wanted && fmt.Sprint(got) != fmt.Sprint(want):
					t.Errorf("%q: %s = %v; want %v (arguments %s)", c.request, name, got, want, raw)
				}
				if !wanted && slicesContains(c.required, name) && args[name] != "{{inputs."+name+"}}" {
					t.Errorf("%q: required %s = %v; want the user asked ({{inputs.%s}})", c.request, name, args[name], name)
				}
			}
			if c.note != "" && !strings.Contains(strings.Join(taken, "; "), c.note) {
				t.Errorf("%q: notes %q do not say %q", c.request, taken, c.note)
			}
		})
		if len(c.want) < len(strings.Split(c.props, `"type"`))-1 {
			mustNot++
		}
	}
	if len(composeCases) < 30 || mustNot < 15 {
		t.Errorf("%d cases, %d with a parameter that must stay unfilled: too few", len(composeCases), mustNot)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRepairNeverMovesAValueToAnotherMeaning: a repair's mapping of the
// failed call's values composes the replacement's value from them (the
// currency pair from the source and target), and otherwise refuses to
// move a value onto a parameter whose shape it lacks, asking the user
// instead, and saying why.
func TestRepairNeverMovesAValueToAnotherMeaning(t *testing.T) {
	convert := `{"type":"object","properties":{"amount":{"type":"number","description":"how much"},"from":{"type":"string","description":"ISO 4217 code of the currency to convert from"},"to":{"type":"string","description":"ISO 4217 code of the currency to convert to"}},"required":["amount","from","to"]}`
	fx := `{"type":"object","properties":{` + fxPair + `},"required":["pair"]}`
	for _, c := range []struct {
		name, old, args, schema, goal string
		want                          map[string]any
		known, refused                string // text Known / Refused must hold; "" for none at all
	}{
		{name: "from and to compose the pair", old: convert, args: `{"amount":100,"from":"USD","to":"EUR"}`, schema: fx, goal: "Convert 100 USD to EUR",
			want: map[string]any{"pair": "USD/EUR"}, known: "pair = from + to (composed)", refused: "pair = from"},
		{name: "from alone is no pair: asked", old: convert, args: `{"amount":100,"from":"USD","to":"{{inputs.to}}"}`, schema: fx, goal: "Convert 100 USD",
			want: map[string]any{"pair": "{{inputs.pair}}"}, refused: `pair = from: "USD" does not have the shape of its example USD/EUR`},
		{name: "the one value left is no pair", old: `{"type":"object","properties":{"from":{"type":"string","description":"ISO 4217 code"}},"required":["from"]}`,
			args: `{"from":"USD"}`, schema: fx, goal: "do it", want: map[string]any{"pair": "{{inputs.pair}}"}, refused: "pair = from"},
		{name: "a reference moves only to the same shape", old: `{"type":"object","properties":{"from":{"type":"string","description":"ISO 4217 code"}},"required":["from"]}`,
			args: `{"from":"{{inputs.from}}"}`, schema: fx, goal: "do it", want: map[string]any{"pair": "{{inputs.pair}}"}, refused: "known only at run time"},
		{name: "a code moves to a code of the same shape", old: `{"type":"object","properties":{"currency":{"type":"string","description":"ISO 4217 code"}},"required":["currency"]}`,
			args:   `{"currency":"USD"}`,
			schema: `{"type":"object","properties":{"code":{"type":"string","description":"currency, ISO 4217 code"}},"required":["code"]}`, goal: "do it",
			want: map[string]any{"code": "USD"}, known: "code = currency"},
		{name: "a date moves to a date of its template", old: `{"type":"object","properties":{"date":{"type":"string","format":"date"}},"required":["date"]}`,
			args: `{"date":"2024-03-05"}`, schema: `{"type":"object","properties":{` + dayISO + `},"required":["day"]}`, goal: "do it",
			want: map[string]any{"day": "2024-03-05"}, known: "day = date"},
		{name: "a date of another layout does not", old: `{"type":"object","properties":{"when":{"type":"string"}},"required":["when"]}`,
			args: `{"when":"05/03/2024"}`, schema: `{"type":"object","properties":{"date":{"type":"string","format":"date"}},"required":["date"]}`, goal: "do it",
			want: map[string]any{"date": "{{inputs.date}}"}, refused: "not a date"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var old map[string]json.RawMessage
			_ = json.Unmarshal([]byte(c.args), &old)
			repair, _ := mapArguments(json.RawMessage(c.schema), json.RawMessage(c.old), old, c.goal, c.goal, "step", nil, true)
			var got map[string]any
			_ = json.Unmarshal(repair.Arguments, &got)
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %v; want %v (arguments %s, known %q, refused %q)", k, got[k], v, repair.Arguments, repair.Known, repair.Refused)
				}
			}
			if k := strings.Join(repair.Known, "; "); c.known == "" && k != "" || !strings.Contains(k, c.known) {
				t.Errorf("known %q; want %q", k, c.known)
			}
			if r := strings.Join(repair.Refused, "; "); c.refused == "" && r != "" || !strings.Contains(r, c.refused) {
				t.Errorf("refused %q; want %q", r, c.refused)
			}
		})
	}
	// A model's value for a parameter the repair asks for must have its
	// shape too, even when it is text of the request.
	var old map[string]json.RawMessage
	_ = json.Unmarshal([]byte(`{"amount":100,"from":"USD","to":"{{inputs.to}}"}`), &old)
	repair, _ := mapArguments(json.RawMessage(fx), json.RawMessage(convert), old, "Convert 100 USD", "Convert 100 USD", "step", nil, true)
	if _, err := withRequestValues(repair, map[string]string{"pair": "USD"}, "Convert 100 USD"); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(agentsmcp.ErrorMessage(err), "USD/EUR") {
		t.Errorf("a model's pair = USD: err %v; want EINVALID naming the shape", err)
	}
}

// TestShapeProblemsOfAPlanStep: what Planner.Check tells a model whose
// plan fills a parameter with a value that does not have its shape.
func TestShapeProblemsOfAPlanStep(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{` + fxPair + `,` + dayISO + `,"unit":{"type":"string","enum":["c","f"]},"city":{"type":"string"},
		"selector":{"type":"string","description":"label selector (e.g. 'app=nginx')"},"symbol":{"type":"string","description":"ticker such as AAPL"},
		"currency":{"type":"string","description":"ISO 4217 code"}}}`)
	for _, c := range []struct {
		args string
		want []string // text each problem holds, in order of the arguments
	}{
		{`{"pair":"USD"}`, []string{`argument /pair: "USD" does not have the shape of its example USD/EUR (3 capitals / 3 capitals)`}},
		{`{"pair":"USD/EUR","day":"2024-03-05","city":"Paris"}`, nil},
		{`{"pair":"{{inputs.pair}}","day":"{{steps.a.output.day}}"}`, nil},
		{`{"day":"next Friday"}`, []string{`argument /day: "next Friday" does not have the shape of its example YYYY-MM-DD`}},
		{`{"day":"2024-02-30","pair":"USD-EUR"}`, []string{"/day", "/pair"}},
		// An example illustrates: a model's value of its kind is not sent
		// back for lacking its exact shape.
		{`{"pair":"usd/eur","selector":"app=nginx,tier=web","symbol":"BRK.B"}`, nil},
		{`{"selector":"nginx"}`, []string{`/selector: "nginx" does not have the shape of its example app=nginx`}},
		{`{"symbol":"Apple"}`, []string{"/symbol"}},
		{`{"currency":"usd"}`, []string{`/currency: "usd" is not an ISO 4217 code`}},
		{`{"unit":"k"}`, nil}, // the enum is the validator's to check
		{`{"city":"USD"}`, nil},
	} {
		got := shapeProblems(agentsmcp.PlanStep{ID: "a", Tool: "fx", Arguments: json.RawMessage(c.args)}, schema, false)
		if len(got) != len(c.want) {
			t.Errorf("%s: problems %q; want %d", c.args, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q; want %q", c.args, got[i], w)
			}
		}
	}
	if got := shapeProblems(agentsmcp.PlanStep{ID: "a", Tool: "fx", Arguments: json.RawMessage(`{"unit":"k"}`)}, schema, true); len(got) != 1 {
		t.Errorf("without a validator, the enum is checked here: %q", got)
	}
}
