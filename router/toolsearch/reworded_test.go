package toolsearch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/router"
)

// The first symptom users reported: with an upstream that has fetch_weather(city)
// and get_forecast(location) beside the gateway's own tools, reworded
// weather requests found no tool ("closest: get_similar_tasks: no word in
// common"). With the semantic default a weather tool comes first for all
// three of the examples; "sunny" reaches weather only since the
// model learnt emoji topics ("sunny" is a keyword of ☀, in Unicode's
// "sky & weather") and that Dakar is a city (docs/adr/0015, "Fourth
// round"); before, WordNet related it to bright and cheerful only.
func TestRewordedWeatherRequestsFindAWeatherTool(t *testing.T) {
	schema := func(param, desc string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"` + param + `":{"type":"string","description":"` + desc + `"}},"required":["` + param + `"]}`)
	}
	p := &mutableProvider{name: "up"}
	p.set(
		&mcp.Tool{Name: "weather__fetch_weather", Description: "Fetch the current weather for a city.", InputSchema: schema("city", "City name")},
		&mcp.Tool{Name: "weather__get_forecast", Description: "Get the forecast for a location.", InputSchema: schema("location", "Place name")},
		&mcp.Tool{Name: "agents__get_similar_tasks", Description: "Find past tasks similar to a request, with their outcomes.", InputSchema: schema("query", "The request")},
		&mcp.Tool{Name: "agents__query_memory", Description: "Search learnings, insights and plan patterns.", InputSchema: schema("query", "What to look for")},
		&mcp.Tool{Name: "fs__read_file", Description: "Read a file from disk.", InputSchema: schema("path", "File path")},
		&mcp.Tool{Name: "chat__post_message", Description: "Post a message to a channel.", InputSchema: schema("channel", "Channel name")},
	)
	r := router.New(router.Options{})
	if err := r.AddProvider(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	x := NewIndex(r, Options{Embedder: embed.Semantic{}})
	defer x.Close()
	waitEmbedded(t, x)
	for _, c := range []struct {
		query    string
		required bool
	}{
		{"Is it going to rain in Oslo?", true},
		{"How warm is it in Lima right now?", true},
		{"Will it be sunny in Dakar today?", true},
	} {
		res := x.Search(context.Background(), c.query, "all", 3)
		found := len(res.Tools) > 0 && strings.HasPrefix(res.Tools[0].Name, "weather__")
		switch {
		case !found && c.required:
			t.Errorf("%q: got %+v, want a weather tool first", c.query, res.Tools)
		case !found:
			t.Logf("known miss: %q: got %+v", c.query, res.Tools)
		}
	}
}
