package router_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router"
)

// resultRecorder is a client transport that keeps the raw result of every
// response the client reads, before go-sdk decodes it.
type resultRecorder struct {
	mcp.Transport
	mu      sync.Mutex
	results []json.RawMessage
}

func (r *resultRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return &recordingConn{Connection: c, r: r}, err
}

func (r *resultRecorder) last() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.results[len(r.results)-1]
}

type recordingConn struct {
	mcp.Connection
	r *resultRecorder
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.r.mu.Lock()
		c.r.results = append(c.r.results, append(json.RawMessage(nil), resp.Result...))
		c.r.mu.Unlock()
	}
	return msg, err
}

// rawAnswer is what the "raw" tool hands over as JSON: with a field no
// CallToolResult has, which a decode and re-encode would drop.
const rawAnswer = `{"content":[{"type":"text","text":"raw bytes"}],"x-vendor":{"kept":true}}`

// TestRawToolResultIsWrittenVerbatim: a provider that finds a RawToolResult
// in the context of a 2025-11-25 session's call and sets it has its JSON
// written as the answer byte for byte, and the call is recorded as a
// success; a 2026-07-28 caller and an in-process call get no holder and a
// decoded result.
func TestRawToolResultIsWrittenVerbatim(t *testing.T) {
	var recMu sync.Mutex
	var recs []router.ToolCallRecord
	r := router.New(router.Options{OnToolCall: func(rec router.ToolCallRecord) {
		recMu.Lock()
		recs = append(recs, rec)
		recMu.Unlock()
	}})
	p := &scriptedProvider{name: "up", tools: []*mcp.Tool{{Name: "raw", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		run: map[string]func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error){
			"raw": func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if h := mcpwire.RawToolResultFrom(ctx); h != nil {
					return h.Set(json.RawMessage(rawAnswer)), nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "decoded"}}}, nil
			},
		}}
	if err := r.AddProvider(context.Background(), p); err != nil {
		t.Fatal(err)
	}

	callAt := func(version string) (*mcp.CallToolResult, json.RawMessage) {
		t.Helper()
		ctx := context.Background()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := r.Server().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		rec := &resultRecorder{Transport: ct}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw-test", Version: "1"}, nil).Connect(ctx, rec, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "raw", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res, rec.last()
	}

	res, wire := callAt("2025-11-25")
	if string(wire) != rawAnswer {
		t.Errorf("2025-11-25 caller got %s, want the provider's JSON %s", wire, rawAnswer)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "raw bytes" || res.IsError {
		t.Errorf("2025-11-25 caller decoded %+v", res)
	}
	recMu.Lock()
	if len(recs) != 1 || recs[0].Tool != "raw" || recs[0].Error != "" || recs[0].Source != "up" {
		t.Errorf("recorded %+v, want one successful call of raw by up", recs)
	}
	recMu.Unlock()

	res, _ = callAt(mcpwire.ProtocolSessionless)
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "decoded" {
		t.Errorf("a %s caller got %+v, want the decoded result", mcpwire.ProtocolSessionless, res)
	}

	res, err := r.CallTool(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "raw", Arguments: json.RawMessage(`{}`)}})
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "decoded" {
		t.Errorf("in-process call: %v, %+v", err, res)
	}
}
