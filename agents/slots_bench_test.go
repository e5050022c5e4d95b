package agents

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkFillSlotsLongRequest fills a request of the largest size a
// request may have, full of candidates for every parameter.
func BenchmarkFillSlotsLongRequest(b *testing.B) {
	request := strings.Repeat("message: hi to Bob in Paris, 100 USD to EUR on 2024-01-02 saying x then ", 120)[:8<<10]
	schema := json.RawMessage(`{"type":"object","required":["city","to","amount","message"],"properties":{"city":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"},"amount":{"type":"number"},"message":{"type":"string"},"recipient":{"type":"string"}}}`)
	for b.Loop() {
		fillArguments(schema, request, request, "s", nil, nil, newInputsSchema())
	}
}
