package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// slotCase is a request, a tool's parameters, and the arguments the
// request clearly gives: a parameter absent from want must stay unfilled.
type slotCase struct {
	request  string
	props    string // the properties of the input schema, without braces
	required []string
	want     map[string]any
}

var slotCases = []slotCase{
	// Places and names after in/for/at/to/from.
	{"What is the weather in Paris today?", `"city":{"type":"string","description":"the city"}`, []string{"city"}, map[string]any{"city": "Paris"}},
	{"Weather in New York tomorrow", `"location":{"type":"string"}`, []string{"location"}, map[string]any{"location": "New York"}},
	{"Forecast for Rio de Janeiro", `"city":{"type":"string"}`, []string{"city"}, map[string]any{"city": "Rio de Janeiro"}},
	{"What time is it in Tokyo?", `"city":{"type":"string"}`, []string{"city"}, map[string]any{"city": "Tokyo"}},
	{"Find restaurants near Times Square", `"location":{"type":"string","description":"where to search"}`, nil, map[string]any{"location": "Times Square"}},
	{"Weather in NYC", `"city":{"type":"string"}`, []string{"city"}, map[string]any{"city": "NYC"}},
	{"Holidays in France", `"country":{"type":"string","description":"country name"}`, []string{"country"}, map[string]any{"country": "France"}},
	{"Flights from Paris to Lisbon on 2025-06-01", `"origin":{"type":"string"},"destination":{"type":"string"},"date":{"type":"string","format":"date"}`, []string{"origin", "destination", "date"},
		map[string]any{"origin": "Paris", "destination": "Lisbon", "date": "2025-06-01"}},
	{"Weather in Oslo in celsius", `"city":{"type":"string"},"units":{"type":"string","enum":["celsius","fahrenheit"]}`, []string{"city"}, map[string]any{"city": "Oslo", "units": "celsius"}},
	{"Let Alice know the build is green", `"recipient":{"type":"string","description":"the colleague to notify"}`, []string{"recipient"}, map[string]any{"recipient": "Alice"}},
	{"Tell Carol that lunch is ready", `"name":{"type":"string"}`, []string{"name"}, map[string]any{"name": "Carol"}},
	{"Tell Carol that lunch is ready", `"name":{"type":"string"},"message":{"type":"string"}`, []string{"name", "message"}, map[string]any{"name": "Carol", "message": "lunch is ready"}},
	{"Let Bob know the release is out", `"colleague":{"type":"string"},"note":{"type":"string"}`, []string{"colleague", "note"}, map[string]any{"colleague": "Bob", "note": "the release is out"}},
	{"Greet Alice", `"name":{"type":"string","description":"who to greet"}`, []string{"name"}, map[string]any{"name": "Alice"}},
	{"Send a message to Bob saying the deploy is done", `"to":{"type":"string","description":"recipient name"},"message":{"type":"string"}`, []string{"to", "message"},
		map[string]any{"to": "Bob", "message": "the deploy is done"}},
	{"Order 3 pizzas for Alice", `"quantity":{"type":"integer"},"customer":{"type":"string"}`, []string{"quantity", "customer"}, map[string]any{"quantity": 3, "customer": "Alice"}},
	{"Ping @alice about the release", `"user":{"type":"string"}`, []string{"user"}, map[string]any{"user": "alice"}},

	// Text after the parameter's name, quoted text, "saying".
	{"Echo the message hello", `"message":{"type":"string","description":"the message to send back"}`, []string{"message"}, map[string]any{"message": "hello"}},
	{"Echo message: hello world", `"message":{"type":"string"}`, []string{"message"}, map[string]any{"message": "hello world"}},
	{"Echo text=hi", `"text":{"type":"string"}`, []string{"text"}, map[string]any{"text": "hi"}},
	{"Echo the text hello", `"message":{"type":"string"}`, []string{"message"}, map[string]any{"message": "hello"}},
	{"Search for 'golang generics'", `"query":{"type":"string"}`, []string{"query"}, map[string]any{"query": "golang generics"}},
	{"search the docs for retries", `"query":{"type":"string"}`, []string{"query"}, map[string]any{"query": "search the docs for retries"}},
	{"Translate 'good morning' to fr", `"text":{"type":"string"},"target_lang":{"type":"string"}`, []string{"text", "target_lang"}, map[string]any{"text": "good morning", "target_lang": "fr"}},
	{"Get order 12345", `"order_id":{"type":"string"}`, []string{"order_id"}, map[string]any{"order_id": "12345"}},
	{"Create a branch named main", `"branch":{"type":"string"}`, []string{"branch"}, map[string]any{"branch": "main"}},
	{"Look up issue #42", `"issue_number":{"type":"integer"}`, []string{"issue_number"}, map[string]any{"issue_number": 42}},
	{"Look up user 42", `"user_id":{"type":"integer"}`, []string{"user_id"}, map[string]any{"user_id": 42}},

	// Codes, the right way round.
	{"convert 100 USD to EUR", `"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}`, []string{"amount", "from", "to"},
		map[string]any{"amount": 100, "from": "USD", "to": "EUR"}},
	{"Convert 250 GBP into JPY", `"amount":{"type":"number"},"base":{"type":"string","description":"base currency"},"quote":{"type":"string","description":"quote currency"}`, []string{"amount", "base", "quote"},
		map[string]any{"amount": 250, "base": "GBP", "quote": "JPY"}},
	{"convert from EUR to USD 75.5", `"amount":{"type":"number"},"from_currency":{"type":"string"},"to_currency":{"type":"string"}`, []string{"amount", "from_currency", "to_currency"},
		map[string]any{"amount": 75.5, "from_currency": "EUR", "to_currency": "USD"}},
	{"Send 20 EUR to Bob", `"amount":{"type":"number"},"currency":{"type":"string"},"recipient":{"type":"string"}`, []string{"amount", "currency", "recipient"},
		map[string]any{"amount": 20, "currency": "EUR", "recipient": "Bob"}},
	{"Translate hello from en to de", `"source_lang":{"type":"string"},"target_lang":{"type":"string"}`, []string{"source_lang", "target_lang"}, map[string]any{"source_lang": "en", "target_lang": "de"}},
	{"Translate the page into pt-BR", `"language":{"type":"string"}`, []string{"language"}, map[string]any{"language": "pt-BR"}},
	{"What is the population of FR?", `"country_code":{"type":"string","description":"ISO 3166-1 alpha-2"}`, []string{"country_code"}, map[string]any{"country_code": "FR"}},
	{"Rate for 2024-01-15 in USD", `"date":{"type":"string","format":"date"},"currency":{"type":"string"}`, []string{"date", "currency"}, map[string]any{"date": "2024-01-15", "currency": "USD"}},

	// URLs, emails, paths, numbers, enums.
	{"Fetch https://example.com/a.json", `"url":{"type":"string"}`, []string{"url"}, map[string]any{"url": "https://example.com/a.json"}},
	{"Email bob@example.com from alice@example.org", `"to":{"type":"string","description":"recipient email"},"from":{"type":"string","description":"sender email"}`, []string{"to", "from"},
		map[string]any{"to": "bob@example.com", "from": "alice@example.org"}},
	{"Email bob@example.com about the invoice", `"email":{"type":"string","format":"email"}`, []string{"email"}, map[string]any{"email": "bob@example.com"}},
	{"Read the file /etc/hosts", `"path":{"type":"string"}`, []string{"path"}, map[string]any{"path": "/etc/hosts"}},
	{"Show the top 5 stories", `"limit":{"type":"integer"}`, nil, map[string]any{"limit": 5}},
	{"Forecast for 3 days in Oslo", `"days":{"type":"integer"},"city":{"type":"string"}`, []string{"days", "city"}, map[string]any{"days": 3, "city": "Oslo"}},
	{"Book a table for 4 on March 5", `"party_size":{"type":"integer","description":"number of people"}`, []string{"party_size"}, map[string]any{"party_size": 4}},
	{"List issues with label bug", `"label":{"type":"string","enum":["bug","feature"]}`, nil, map[string]any{"label": "bug"}},

	// Written after the filler, without tuning it to them.
	{"Is it raining in São Paulo right now?", `"city":{"type":"string"}`, []string{"city"}, map[string]any{"city": "São Paulo"}},
	{"Show me the forecast for Frankfurt am Main", `"location":{"type":"string"}`, []string{"location"}, map[string]any{"location": "Frankfurt am Main"}},
	{"Invite Dana to the planning meeting on Friday", `"attendee":{"type":"string"}`, []string{"attendee"}, map[string]any{"attendee": "Dana"}},
	{"Convert 42.5 CHF to SEK", `"amount":{"type":"number"},"source_currency":{"type":"string"},"target_currency":{"type":"string"}`, []string{"amount", "source_currency", "target_currency"},
		map[string]any{"amount": 42.5, "source_currency": "CHF", "target_currency": "SEK"}},
	{"What did we spend in Q3 2024?", `"amount":{"type":"number"}`, []string{"amount"}, nil},
	{"List the 10 newest files in /var/log", `"path":{"type":"string"},"limit":{"type":"integer"}`, []string{"path"}, map[string]any{"path": "/var/log", "limit": 10}},
	{"Post the note \"back at 5\" to Erin", `"note":{"type":"string"},"recipient":{"type":"string"}`, []string{"note", "recipient"}, map[string]any{"note": "back at 5", "recipient": "Erin"}},
	{"Weather for Monday", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"Thanks, please send it to me", `"recipient":{"type":"string"}`, []string{"recipient"}, nil},
	{"Download https://example.org/report.pdf to ./reports", `"url":{"type":"string"},"dest_dir":{"type":"string","description":"directory to save into"}`, []string{"url", "dest_dir"},
		map[string]any{"url": "https://example.org/report.pdf", "dest_dir": "./reports"}},
	{"Subscribe carol@example.org to the newsletter", `"email":{"type":"string"}`, []string{"email"}, map[string]any{"email": "carol@example.org"}},
	{"Get the exchange rate for JPY", `"base":{"type":"string","description":"base currency"},"quote":{"type":"string","description":"quote currency"}`, []string{"base", "quote"}, nil}, // which end is JPY? ask
	{"Find hotels in Lisbon for 2 nights", `"city":{"type":"string"},"nights":{"type":"integer"}`, []string{"city", "nights"}, map[string]any{"city": "Lisbon", "nights": 2}},
	{"Translate the menu to Spanish", `"target_language":{"type":"string","description":"ISO 639-1 code"}`, []string{"target_language"}, nil},

	// Identifiers: after their noun, or the request's one code.
	{"Track the parcel JD0146000062", `"tracking_number":{"type":"string","description":"the tracking number"}`, []string{"tracking_number"}, map[string]any{"tracking_number": "JD0146000062"}},
	{"Track the parcel LX4410938DE", `"waybill":{"type":"string","description":"waybill code"}`, []string{"waybill"}, map[string]any{"waybill": "LX4410938DE"}},
	{"Where is my shipment RR5520186CN?", `"awb":{"type":"string"}`, []string{"awb"}, map[string]any{"awb": "RR5520186CN"}},
	{"Track the package 00340434161094042557", `"tracking_number":{"type":"string"}`, []string{"tracking_number"}, map[string]any{"tracking_number": "00340434161094042557"}},
	{"Mark INV-2024-0042 as paid", `"invoice_id":{"type":"string","description":"which invoice"}`, []string{"invoice_id"}, map[string]any{"invoice_id": "INV-2024-0042"}},
	{"What is the status of order A-1001?", `"order_number":{"type":"string"}`, []string{"order_number"}, map[string]any{"order_number": "A-1001"}},
	{"Cancel the booking with reference X7Y9Z2Q", `"booking_reference":{"type":"string"}`, []string{"booking_reference"}, map[string]any{"booking_reference": "X7Y9Z2Q"}},
	{"Look up SKU ABC-12", `"sku":{"type":"string"}`, []string{"sku"}, map[string]any{"sku": "ABC-12"}},
	{"Track the parcel JD0146000062 for order 12345", `"tracking_number":{"type":"string"},"order_id":{"type":"string"}`, []string{"tracking_number", "order_id"},
		map[string]any{"tracking_number": "JD0146000062", "order_id": "12345"}},
	{"Pay 100 USD on invoice INV-2024-0042", `"amount":{"type":"number"},"invoice_id":{"type":"string"}`, []string{"amount", "invoice_id"},
		map[string]any{"amount": 100, "invoice_id": "INV-2024-0042"}},
	{"Refund invoice INV-2019-2024 in full", `"invoice":{"type":"string"}`, []string{"invoice"}, map[string]any{"invoice": "INV-2019-2024"}},
	{"Resend INV-2019-2024 to the customer", `"invoice":{"type":"string"}`, []string{"invoice"}, map[string]any{"invoice": "INV-2019-2024"}},

	// Must not be filled.
	{"Track JD0146000062 and LX4410938DE", `"tracking_number":{"type":"string"}`, []string{"tracking_number"}, nil}, // which one? ask
	{"Track JD0146000062 for order 12345", `"tracking_number":{"type":"string"},"order_id":{"type":"string"}`, []string{"tracking_number", "order_id"},
		map[string]any{"order_id": "12345"}}, // the code has no noun, and two identifiers could take it
	{"Convert 100 USD to EUR", `"invoice_id":{"type":"string"},"amount":{"type":"number","description":"how much"}`, []string{"invoice_id", "amount"}, map[string]any{"amount": 100}},
	{"Pay the invoice in USD", `"invoice_id":{"type":"string"}`, []string{"invoice_id"}, nil},
	{"Track the order status", `"order_id":{"type":"string"}`, []string{"order_id"}, nil},
	{"Track the parcel please", `"tracking_number":{"type":"string"}`, []string{"tracking_number"}, nil},
	{"Track the parcel JD0146000062", `"name":{"type":"string"}`, []string{"name"}, nil},
	{"Track the parcel JD0146000062", `"message":{"type":"string"}`, []string{"message"}, nil},
	{"Track the parcel JD0146000062", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"Track the parcel JD0146000062", `"amount":{"type":"number","description":"how much"}`, []string{"amount"}, nil},
	{"Upgrade to the 1080p plan with 20GB", `"plan_id":{"type":"string"}`, []string{"plan_id"}, nil},
	{"Show orders from 2019-2023 on 2024-01-15", `"order_id":{"type":"string"}`, []string{"order_id"}, nil},
	{"Call 555-1234 about the parcel", `"tracking_number":{"type":"string"}`, []string{"tracking_number"}, nil},
	{"Call 4155550100 about the parcel", `"tracking_number":{"type":"string"}`, []string{"tracking_number"}, nil},
	{"Send 1000000000000 USD for the invoice", `"invoice_id":{"type":"string"}`, []string{"invoice_id"}, nil},
	{"Update the COVID-19 dashboard", `"dashboard_id":{"type":"string"}`, []string{"dashboard_id"}, nil},
	{"Settle the invoice USD 250 today", `"invoice_id":{"type":"string"}`, []string{"invoice_id"}, nil},
	{"Show the FY2024 report", `"report_id":{"type":"string"}`, []string{"report_id"}, nil}, // a fiscal year, not a code
	{"Fix the COVID-19 report for order 2024-0042", `"order_id":{"type":"string"},"report_id":{"type":"string"}`, []string{"order_id", "report_id"}, map[string]any{"order_id": "2024-0042"}},
	{"Show the 10 newest orders", `"order_id":{"type":"string"}`, []string{"order_id"}, nil},
	{"Open https://example.com/orders/AB12345", `"order_id":{"type":"string"}`, []string{"order_id"}, nil},
	{"Track the parcel JD0146000062", `"phone_number":{"type":"string"}`, []string{"phone_number"}, nil},
	{"Echo the message hello", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"What is the weather today?", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"Please send the report", `"city":{"type":"string"},"name":{"type":"string"}`, []string{"city", "name"}, nil},
	{"What's the weather in January?", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"What is the weather in Paris today?", `"city":{"type":"string"},"date":{"type":"string","format":"date"}`, []string{"city", "date"}, map[string]any{"city": "Paris"}},
	{"How much is 100 USD in euros?", `"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string","description":"target currency code"}`, []string{"amount", "from", "to"},
		map[string]any{"amount": 100, "from": "USD"}},
	{"Exchange rate on 2024-03-05 for USD", `"amount":{"type":"number"},"currency":{"type":"string"}`, []string{"amount", "currency"}, map[string]any{"currency": "USD"}},
	{"What was the rate on March 5", `"amount":{"type":"number"}`, []string{"amount"}, nil},
	{"Remind me at 10:30 to call mom", `"count":{"type":"integer"},"person":{"type":"string"}`, []string{"count", "person"}, nil},
	{"Show stories from 2023", `"limit":{"type":"integer"}`, nil, nil},
	{"Greet the team", `"name":{"type":"string"}`, []string{"name"}, nil},
	{"Holidays in France this year", `"country":{"type":"string","description":"ISO 3166-1 alpha-2 country code"}`, []string{"country"}, nil},
	{"Read the file at https://example.com/x", `"path":{"type":"string"}`, []string{"path"}, nil},
	{"Set the mode to fast", `"mode":{"type":"string","enum":["slow","normal"]}`, []string{"mode"}, nil},
	{"Use celsius or fahrenheit", `"unit":{"type":"string","enum":["celsius","fahrenheit"]}`, []string{"unit"}, nil},
	{"Call me tomorrow", `"person":{"type":"string"}`, []string{"person"}, nil},
	{"convert 100 USD to EUR", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"Summarise the article", `"url":{"type":"string"}`, []string{"url"}, nil},
	{"Weather in the city today", `"city":{"type":"string"}`, []string{"city"}, nil},
	{"Send a message to the team", `"message":{"type":"string","description":"what to post"},"channel":{"type":"string"}`, []string{"message", "channel"}, nil},
	{"Create a branch for the fix", `"branch":{"type":"string"}`, []string{"branch"}, nil},
}

// slotTally counts a kind's fills: right, wrong or unwanted, and missed.
type slotTally struct{ tp, fp, fn int }

func (t slotTally) precision() float64 { return ratio(t.tp, t.tp+t.fp) }
func (t slotTally) recall() float64    { return ratio(t.tp, t.tp+t.fn) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// TestSlotFilling measures slot filling on the labelled cases: per kind
// of parameter, the precision (filled values that are right) and recall
// (expected values found), each above a floor; and no value at all where
// the request gives none.
func TestSlotFilling(t *testing.T) {
	tallies := map[string]*slotTally{}
	total := &slotTally{}
	mustNot := 0
	for _, c := range slotCases {
		schema := fmt.Sprintf(`{"type":"object","properties":{%s}}`, c.props)
		req, _ := json.Marshal(c.required)
		schema = strings.Replace(schema, `{"type":"object",`, `{"type":"object","required":`+string(req)+`,`, 1)
		inputs := newInputsSchema()
		var args map[string]json.RawMessage
		if err := json.Unmarshal(fillArguments(json.RawMessage(schema), c.request, c.request, "step", nil, nil, inputs), &args); err != nil {
			t.Fatalf("%q: %v", c.request, err)
		}
		var props map[string]schemaProperty
		if err := json.Unmarshal([]byte("{"+c.props+"}"), &props); err != nil {
			t.Fatalf("%q: schema: %v", c.request, err)
		}
		for name, sp := range props {
			kind := classifySlot(name, sp, slices.Contains(c.required, name)).kind.String()
			if tallies[kind] == nil {
				tallies[kind] = &slotTally{}
			}
			got := string(args[name])
			if strings.Contains(got, "{{") {
				got = "" // an input or a reference: not filled from the request
			}
			want := ""
			if v, ok := c.want[name]; ok {
				b, _ := json.Marshal(v)
				want = string(b)
			} else {
				mustNot++
			}
			for _, tl := range []*slotTally{tallies[kind], total} {
				switch {
				case got == want && want != "":
					tl.tp++
				case got == "" && want == "":
				case got == "":
					tl.fn++
				case want == "":
					tl.fp++
				default:
					tl.fp++
					tl.fn++
				}
			}
			switch {
			case want == "" && got != "":
				t.Errorf("%q: %s (%s) = %s, want it unfilled", c.request, name, kind, got)
			case got != want:
				t.Logf("miss: %q: %s (%s) = %q, want %s", c.request, name, kind, got, want)
			}
			// What the request does not give, the user is asked for.
			if got == "" && slices.Contains(c.required, name) && !strings.Contains(string(args[name]), "{{inputs.") {
				t.Errorf("%q: required %s is %s, want a plan input", c.request, name, args[name])
			}
		}
	}
	kinds := make([]string, 0, len(tallies))
	for k := range tallies {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var report strings.Builder
	fmt.Fprintf(&report, "%d cases, %d parameters that must stay unfilled\n%-13s %4s %4s %4s %9s %7s\n", len(slotCases), mustNot, "kind", "tp", "fp", "fn", "precision", "recall")
	for _, k := range append(kinds, "all") {
		tl := total
		if k != "all" {
			tl = tallies[k]
		}
		fmt.Fprintf(&report, "%-13s %4d %4d %4d %9.2f %7.2f\n", k, tl.tp, tl.fp, tl.fn, tl.precision(), tl.recall())
		floorP, floorR := 0.9, 0.75
		if k == "all" {
			floorP, floorR = 0.97, 0.9
		}
		if tl.precision() < floorP || tl.recall() < floorR {
			t.Errorf("%s: precision %.2f (floor %.2f), recall %.2f (floor %.2f)", k, tl.precision(), floorP, tl.recall(), floorR)
		}
	}
	t.Log("\n" + report.String())
	if len(slotCases) < 40 || mustNot < 12 {
		t.Errorf("%d cases with %d must-not parameters: the set is too small to measure", len(slotCases), mustNot)
	}
}

// TestSlotFillingSaysWhereValuesCameFrom: the step's description names
// each value taken from the request, and only those.
func TestSlotFillingSaysWhereValuesCameFrom(t *testing.T) {
	inputs := newInputsSchema()
	schema := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}},"required":["amount","from","to"]}`)
	args, taken := fillStepArguments(schema, "How much is 100 USD in euros?", "", "convert", nil, nil, inputs)
	if got := describeStep("How much is 100 USD in euros?", taken); got != "How much is 100 USD in euros? (taken from the request: amount = 100; from = USD)" {
		t.Errorf("description %q", got)
	}
	if string(args) != `{"amount":100,"from":"USD","to":"{{inputs.to}}"}` || !strings.Contains(string(inputs.raw()), `"required":["to"]`) {
		t.Errorf("arguments %s, inputs %s: only the target currency is asked for", args, inputs.raw())
	}
	schema = json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"},"password":{"type":"string"}},"required":["user","password"]}`)
	args, taken = fillStepArguments(schema, "log in as user: ada with password=hunter2", "", "login", nil, nil, newInputsSchema())
	if got := describeStep("log in", taken); string(args) != `{"password":"hunter2","user":"ada"}` || got != "log in (taken from the request: password = a secret, not shown; user = ada)" {
		t.Errorf("arguments %s, description %q: the secret is an argument, never in the description", args, got)
	}
	if got := describeStep("do it", nil); got != "do it" {
		t.Errorf("description %q without values taken", got)
	}
}

// FuzzFillSlots: whatever the request, slot filling does not panic and
// invents nothing: every value it fills is text of the request (codes
// may be upper-cased).
func FuzzFillSlots(f *testing.F) {
	for _, c := range slotCases {
		f.Add(c.request)
	}
	f.Add("to São\u00a0Paulo from #  @ 'unclosed \"x\" message: = limit=")
	f.Add("let  know that ")
	schema := json.RawMessage(`{"type":"object","required":["city","to","amount","message"],"properties":{
		"city":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"},"amount":{"type":"number"},
		"message":{"type":"string"},"query":{"type":"string"},"recipient":{"type":"string"},"language":{"type":"string"},
		"url":{"type":"string"},"path":{"type":"string"},"email":{"type":"string"},"country_code":{"type":"string"},
		"day":{"type":"string","format":"date"},"unit":{"type":"string","enum":["c","f"]},"sku":{"type":"string"},"n":{"type":"integer","enum":[1,2]},
		"tracking_number":{"type":"string"},"order_id":{"type":"string"}}}`)
	f.Fuzz(func(t *testing.T, request string) {
		// Numbers as written (json.Number), not as a float prints them.
		var args map[string]any
		dec := json.NewDecoder(bytes.NewReader(fillArguments(schema, request, request, "step", nil, nil, newInputsSchema())))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			t.Fatal(err)
		}
		for name, v := range args {
			s := fmt.Sprint(v)
			if strings.HasPrefix(s, "{{inputs.") {
				continue
			}
			if !strings.Contains(strings.ToLower(request), strings.ToLower(s)) {
				t.Errorf("%q: %s = %q is not in the request", request, name, s)
			}
		}
	})
}

// TestClassifySlotIdentifiers: the words that make a string an
// identifier, and those that keep a code of its own kind or none.
func TestClassifySlotIdentifiers(t *testing.T) {
	for _, c := range []struct {
		name, desc string
		want       slotKind
	}{
		{"tracking_number", "the tracking number", slotIdentifier},
		{"waybill", "waybill code", slotIdentifier},
		{"invoice_no", "", slotIdentifier},
		{"promo", "the promo code", slotIdentifier},
		{"file_id", "", slotIdentifier}, // a file's id, not a path
		{"user_id", "", slotIdentifier}, // a user's id, not a name
		{"target", "id of the order", slotIdentifier},
		{"phone_number", "", slotNone},
		{"code", "Python source code to run", slotNone},
		{"currency_code", "", slotCurrency},
		{"country_code", "", slotCountryCode},
		{"language_code", "", slotLanguage},
		{"name", "", slotPerson},
		{"message", "", slotText},
		{"city", "", slotPlace},
		{"q", "search query", slotText},
	} {
		if got := classifySlot(c.name, schemaProperty{Type: "string", Description: c.desc}, true).kind; got != c.want {
			t.Errorf("%s (%q) is %s, want %s", c.name, c.desc, got, c.want)
		}
	}
}

// A value within a secret of the request never fills a parameter that is
// not secret: "api key abc123xyz" gave abc123xyz to a post's id, which was
// sent to the API and stored unsealed. A value that
// holds a secret (a note quoting one) is the request's to give.
func TestSlotsNeverTakeAValueFromWithinASecret(t *testing.T) {
	params := []slotParam{
		classifySlot("id", schemaProperty{Type: "string", Description: "The post id"}, true),
		classifySlot("api_key", schemaProperty{Type: "string"}, false),
	}
	got := fillSlots("Get post abc123xyz", params)
	if got["id"].value != "abc123xyz" {
		t.Fatalf("without a secret, id = %v; the test's premise is wrong", got["id"].value)
	}
	got = fillSlots("Get the post with api key abc123xyz", params)
	if v, ok := got["id"]; ok {
		t.Errorf("id = %v: taken from the secret", v.value)
	}
	note := []slotParam{classifySlot("note", schemaProperty{Type: "string", Description: "what the note says"}, true)}
	if got := fillSlots(`Post the note "the db password=hunter2 rotates"`, note); got["note"].value != "the db password=hunter2 rotates" {
		t.Errorf("note = %v; want the quoted text, secret and all", got["note"].value)
	}
	for text, want := range map[string][][2]int{
		"Get post 5 with api key abc123xyz":  {{24, 33}},
		"password=hunter2 and token: tok3n!": {{9, 16}, {28, 34}},
		"nothing secret here":                nil,
	} {
		if got := secretSpans(text); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("secretSpans(%q) = %v, want %v", text, got, want)
		}
	}
}
