package agents

import (
	"cmp"
	"encoding/json"
	"testing"
)

// TestRepairMapsArgumentsByMeaning: the failed call's values reach the
// replacement's parameters that mean the same, whatever their names; a
// parameter that means something else is not given one.
func TestRepairMapsArgumentsByMeaning(t *testing.T) {
	convert := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","description":"how much"},"from":{"type":"string","description":"ISO code of the currency converted"},"to":{"type":"string","description":"ISO code of the result's currency"}},"required":["amount","from","to"]}`)
	for _, c := range []struct {
		name, old, args, schema, goal string
		want                          map[string]any
		asked, filled                 int
	}{
		{name: "amount and currencies onto sum, source and target", old: string(convert),
			args:   `{"amount":250,"from":"GBP","to":"{{inputs.to}}"}`,
			schema: `{"type":"object","properties":{"sum":{"type":"number","description":"the sum to price"},"source":{"type":"string","description":"denomination of the sum"},"target":{"type":"string","description":"denomination wanted"}},"required":["sum","source","target"]}`,
			want:   map[string]any{"sum": 250.0, "source": "GBP", "target": "{{inputs.to}}"}},
		{name: "a city onto a location",
			old:    `{"type":"object","properties":{"city":{"type":"string","description":"the city"}},"required":["city"]}`,
			args:   `{"city":"{{inputs.city}}"}`,
			schema: `{"type":"object","properties":{"location":{"type":"string","description":"where"}},"required":["location"]}`,
			want:   map[string]any{"location": "{{inputs.city}}"}},
		{name: "the one value left onto the one value missing",
			old:    `{"type":"object","properties":{"tracking_number":{"type":"string","description":"the tracking number"}},"required":["tracking_number"]}`,
			args:   `{"tracking_number":"JD0146000062"}`,
			schema: `{"type":"object","properties":{"waybill":{"type":"string","description":"waybill code"}},"required":["waybill"]}`,
			want:   map[string]any{"waybill": "JD0146000062"}},
		{name: "the request's code fills the replacement's identifier",
			old:  `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`,
			args: `{"query":"Track the parcel JD0146000062"}`, goal: "Track the parcel JD0146000062",
			schema: `{"type":"object","properties":{"waybill":{"type":"string","description":"waybill code"}},"required":["waybill"]}`,
			want:   map[string]any{"waybill": "JD0146000062"}, filled: 1},
		{name: "an identifier of one thing is no identifier of another",
			old:    `{"type":"object","properties":{"order_id":{"type":"string"},"customer_id":{"type":"string"}},"required":["order_id","customer_id"]}`,
			args:   `{"order_id":"12345","customer_id":"C-77"}`,
			schema: `{"type":"object","properties":{"account_id":{"type":"string","description":"the account"}},"required":["account_id"]}`,
			want:   map[string]any{"account_id": "{{inputs.account_id}}"}, asked: 1},
		{name: "a number of one thing is no number of another",
			old:    `{"type":"object","properties":{"order_number":{"type":"string"},"customer_id":{"type":"string"}},"required":["order_number","customer_id"]}`,
			args:   `{"order_number":"12345","customer_id":"C-77"}`,
			schema: `{"type":"object","properties":{"tracking_number":{"type":"string"},"account_id":{"type":"string"}},"required":["tracking_number","account_id"]}`,
			want:   map[string]any{"tracking_number": "{{inputs.tracking_number}}", "account_id": "{{inputs.account_id}}"}, asked: 2},
		{name: "an identifier onto one of the same thing",
			old:    `{"type":"object","properties":{"order_id":{"type":"string"},"customer_id":{"type":"string"}},"required":["order_id","customer_id"]}`,
			args:   `{"order_id":"12345","customer_id":"C-77"}`,
			schema: `{"type":"object","properties":{"order_number":{"type":"string"},"account_id":{"type":"string"},"invoice_id":{"type":"string"}},"required":["order_number","account_id","invoice_id"]}`,
			want:   map[string]any{"order_number": "12345", "account_id": "{{inputs.account_id}}", "invoice_id": "{{inputs.invoice_id}}"}, asked: 2},
		{name: "a shipment's identifier onto another's",
			old:    `{"type":"object","properties":{"tracking_number":{"type":"string","description":"the tracking number"},"order_id":{"type":"string"}},"required":["tracking_number","order_id"]}`,
			args:   `{"tracking_number":"JD0146000062","order_id":"12345"}`,
			schema: `{"type":"object","properties":{"waybill":{"type":"string","description":"waybill code"}},"required":["waybill"]}`,
			want:   map[string]any{"waybill": "JD0146000062"}},
		{name: "an amount is no limit; what is missing is asked", old: string(convert),
			args:   `{"amount":250,"from":"GBP","to":"JPY"}`,
			schema: `{"type":"object","properties":{"limit":{"type":"integer","description":"max results"},"team":{"type":"string","description":"the team"}},"required":["team"]}`,
			want:   map[string]any{"team": "{{inputs.team}}"}, asked: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var old map[string]json.RawMessage
			_ = json.Unmarshal([]byte(c.args), &old)
			goal := cmp.Or(c.goal, "do it")
			repair, _ := mapArguments(json.RawMessage(c.schema), json.RawMessage(c.old), old, goal, goal, "step", nil, true)
			var got map[string]any
			_ = json.Unmarshal(repair.Arguments, &got)
			if len(got) != len(c.want) || len(repair.Asked) != c.asked || len(repair.Filled) != c.filled {
				t.Fatalf("arguments %s, asked %v, filled %v; want %v", repair.Arguments, repair.Asked, repair.Filled, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %v; want %v (arguments %s)", k, got[k], v, repair.Arguments)
				}
			}
		})
	}
}
