package router_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

const benchArgs = `{"name":"Ada","age":36,"color":"red","address":{"city":"London"}}`

// BenchmarkValidate compares tools/validate with its cached compiled schema
// against compiling the schema for every call (the baseline a cache-less
// implementation would pay).
func BenchmarkValidate(b *testing.B) {
	ctx := context.Background()
	b.Run("cached", func(b *testing.B) {
		r := router.New(router.Options{})
		if err := r.AddProvider(ctx, &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__person", personSchema)}}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := r.ValidateToolArguments(ctx, "up__person", []byte(benchArgs))
			if err != nil || !res.Valid {
				b.Fatal(res, err)
			}
		}
	})
	// A schema as localtools infers it from a Go struct (typed properties,
	// required, no additional properties, any-value as anyOf), the shape
	// most local tools have; arguments as an executor step passes them.
	b.Run("cached-inferred", func(b *testing.B) {
		type in struct {
			I     int      `json:"i"`
			V     any      `json:"v"`
			Name  string   `json:"name"`
			Tags  []string `json:"tags,omitempty"`
			Limit *int     `json:"limit,omitempty"`
		}
		local := localtools.New()
		if err := localtools.Add(local, &mcp.Tool{Name: "inferred"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		}); err != nil {
			b.Fatal(err)
		}
		r := router.New(router.Options{})
		if err := r.AddProvider(ctx, local); err != nil {
			b.Fatal(err)
		}
		args := []byte(`{"i":17,"v":{"step":"s17","ok":true,"n":[1,2.5]},"name":"Ada Lovelace","tags":["a","b"],"limit":10}`)
		for b.Loop() {
			res, err := r.ValidateToolArguments(ctx, "inferred", args)
			if err != nil || !res.Valid {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("compile-each-call-baseline", func(b *testing.B) {
		for b.Loop() {
			doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(personSchema))
			c := jsonschema.NewCompiler()
			_ = c.AddResource("mem://s.json", doc)
			sch, err := c.Compile("mem://s.json")
			if err != nil {
				b.Fatal(err)
			}
			inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(benchArgs))
			if err := sch.Validate(inst); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCallTool measures tools/call of a trivial local tool through the
// router (registry lookup, schema validation, provider dispatch) against the
// same tool registered directly on a bare go-sdk server, both over in-memory
// transports, so the ratio is the router's own overhead.
func BenchmarkCallTool(b *testing.B) {
	ctx := context.Background()
	type echoArgs struct {
		Text string `json:"text"`
	}
	echo := func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	}
	run := func(b *testing.B, s router.Server) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("router", func(b *testing.B) {
		r := router.New(router.Options{})
		local := localtools.New()
		if err := localtools.Add(local, &mcp.Tool{Name: "echo"}, echo); err != nil {
			b.Fatal(err)
		}
		if err := r.AddProvider(ctx, local); err != nil {
			b.Fatal(err)
		}
		run(b, r.Server())
	})
	b.Run("bare-sdk-baseline", func(b *testing.B) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo"}, echo)
		run(b, s)
	})
}
