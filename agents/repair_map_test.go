package agents

import (
	"encoding/json"
	"testing"
)

// TestRepairMapsArgumentsByMeaning: the failed call's values reach the
// replacement's parameters that mean the same, whatever their names; a
// parameter that means something else is not given one.
func TestRepairMapsArgumentsByMeaning(t *testing.T) {
	convert := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","description":"how much"},"from":{"type":"string","description":"ISO code of the currency converted"},"to":{"type":"string","description":"ISO code of the result's currency"}},"required":["amount","from","to"]}`)
	for _, c := range []struct {
		name, old, args, schema string
		want                    map[string]any
		asked                   int
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
		{name: "an amount is no limit; what is missing is asked", old: string(convert),
			args:   `{"amount":250,"from":"GBP","to":"JPY"}`,
			schema: `{"type":"object","properties":{"limit":{"type":"integer","description":"max results"},"team":{"type":"string","description":"the team"}},"required":["team"]}`,
			want:   map[string]any{"team": "{{inputs.team}}"}, asked: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var old map[string]json.RawMessage
			_ = json.Unmarshal([]byte(c.args), &old)
			repair, _ := mapArguments(json.RawMessage(c.schema), json.RawMessage(c.old), old, "do it", "do it", "step", nil)
			var got map[string]any
			_ = json.Unmarshal(repair.Arguments, &got)
			if len(got) != len(c.want) || len(repair.Asked) != c.asked {
				t.Fatalf("arguments %s, asked %v; want %v", repair.Arguments, repair.Asked, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %v; want %v (arguments %s)", k, got[k], v, repair.Arguments)
				}
			}
		})
	}
}
