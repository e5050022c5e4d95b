package agents

import "testing"

// TestReuseIntentOfRequestsAndTools: the effect a request's leading verb
// asks for and the effects of a tool's name (or, without a verb in it, of
// its description's first word), and whether the tool serves the request.
// Requests without a verb of the table, and verbs of two effects, conflict
// with nothing.
func TestReuseIntentOfRequestsAndTools(t *testing.T) {
	cases := []struct {
		request, tool, description string
		serves                     bool
	}{
		{"Store an insight about the demo folder", "memory__query_memory", "Search memory", false},
		{"Store an insight about the demo folder", "memory__store_insight", "", true},
		{"Please remember that the build needs Go 1.26", "notes__query_memory", "", false},
		{"Can you look up the rate of USD/EUR?", "fx__lookup_fx_rate", "", true},
		{"Find the invoices of March", "billing__deleteInvoice", "", false},
		{"Delete post 7", "blog__remove-post", "", true},
		{"Delete post 7", "blog__get_post", "", false},
		{"Send Bob the report", "mail__send_email", "", true},
		{"Send Bob the report", "mail__list_messages", "", false},
		{"Save my settings", "prefs__update_settings", "", true},
		{"What is the weather in Paris today?", "weather__store_reading", "", true}, // no verb: unknown
		{"Is it going to rain in Oslo?", "weather__fetch_weather", "", true},
		{"Add 3 and 4", "math__add", "", true},                                    // add: two effects, left out
		{"Echo the words hello", "memory__query_memory", "", true},                // echo: unknown
		{"Show the weather in Lima", "weather__outlook", "Get the outlook", true}, // read by description
		{"Show the weather in Lima", "weather__outlook", "Delete an outlook", false},
	}
	for _, c := range cases {
		want, has := requestEffect(c.request), toolEffects(c.tool, c.description)
		if got := servesIntent(want, has); got != c.serves {
			t.Errorf("%q by %s (%q): serves=%v, want %v (request %s, tool %s)", c.request, c.tool, c.description, got, c.serves, effectName(want), effectName(has))
		}
	}
}
