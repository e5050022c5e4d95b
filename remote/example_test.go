package remote_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
)

// A pool publishes each upstream MCP server to the router, which serves its
// tools as `<upstream>__<tool>` to every client.
func ExampleNewPool() {
	ctx := context.Background()

	// An upstream MCP server, here in-process behind streamable HTTP.
	weather := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type forecastArgs struct {
		City string `json:"city" jsonschema:"the city to forecast"`
	}
	mcp.AddTool(weather, &mcp.Tool{Name: "forecast", Description: "Tomorrow's weather"},
		func(_ context.Context, _ *mcp.CallToolRequest, in forecastArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Sunny in " + in.City}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return weather }, nil))
	defer srv.Close()

	r := router.New(router.Options{})
	pool := remote.NewPool(remote.Options{Registry: r})
	defer pool.Close(ctx)

	// Upstreams from the config file may use any transport; Add (the admin
	// API) refuses stdio.
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "weather", Transport: remote.TransportStreamable, URL: srv.URL}); err != nil {
		panic(err)
	}
	st, _ := pool.Status("weather")
	fmt.Println(st.State, st.Tools, st.ServerName)
	for _, t := range r.Tools() {
		fmt.Println(t.Name)
	}
	err := pool.Add(ctx, agentsmcp.UpstreamConfig{Name: "shell", Transport: remote.TransportStdio, Command: "sh"})
	fmt.Println(agentsmcp.ErrorCode(err))

	// A client of the router calls the upstream's tool.
	st1, st2 := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st1, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, st2, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather__forecast", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// ready 1 weather
	// weather__forecast
	// invalid
	// Sunny in Oslo
}

// Upstream resources keep their URI under a prefix naming the upstream.
func ExampleResourceURIPrefix() {
	fmt.Println(remote.ResourceURIPrefix("everything") + "test://static/resource/1")
	// Output: upstream://everything/test://static/resource/1
}

// A tool whose prefixed name would be over 64 characters is exposed under
// an alias that only its two names decide.
func ExampleToolAlias() {
	tool := "get_the_current_weather_forecast_for_a_city_by_name_and_country"
	fmt.Println(len("weather__" + tool))
	alias := remote.ToolAlias("weather", tool, 0)
	fmt.Println(alias, len(alias))
	// Output:
	// 72
	// weather__get_the_current_weather_forecast_for_a_city_by_01f3f211 64
}
