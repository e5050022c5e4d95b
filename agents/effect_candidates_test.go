package agents_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/agents"
)

// TestBuiltinPlanMailsAPersonWorded10Ways: a request to send a person a
// message, worded ten ways ("Write to …", "Drop … a line", "Shoot … a
// note", "Send … an email", "Mail … the news"), looks the person's address
// up and mails the message: find_person with the name the request gives,
// then send_email to the address it returns. Before, "Write to" planned a
// tool that writes records, "Drop … a line" and "Shoot … a note" a flight
// search, and "Send Marco Rossi an email" asked for the address.
func TestBuiltinPlanMailsAPersonWorded10Ways(t *testing.T) {
	p := wordedPlanner(t, wordedCatalogTools)
	for _, c := range []struct{ request, person, message string }{
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
		plan, _, err := p.Plan(t.Context(), agents.PlanRequest{Request: c.request})
		if err != nil {
			t.Errorf("%q: %v", c.request, err)
			continue
		}
		looked, mailed := "", false
		for _, s := range plan.Steps {
			var args map[string]string
			_ = json.Unmarshal(s.Arguments, &args)
			switch s.Tool {
			case "find_person":
				if args["name"] == c.person {
					looked = s.ID
				}
			case "send_email":
				body := args["body"]
				mailed = looked != "" && args["to"] == "{{steps."+looked+".output.email}}" &&
					(strings.Contains(body, c.message) || strings.HasPrefix(body, "{{inputs."))
			}
		}
		if !mailed {
			t.Errorf("%q: plan %s; want find_person(%s), then send_email to its email", c.request, planSummary(plan), c.person)
		}
	}
}
