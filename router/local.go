package router

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LocalProviderName is the provider name of the tools of this process.
const LocalProviderName = "local"

// LocalTools is the [agentsmcp.ToolProvider] of the tools implemented in this
// process. Packages register their tools with [AddLocalTool]; tools may be
// added and removed at any time and the router follows.
type LocalTools struct {
	mu       sync.RWMutex
	tools    map[string]*localTool
	onChange func()
}

type localTool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// NewLocalTools returns an empty local provider.
func NewLocalTools() *LocalTools {
	return &LocalTools{tools: map[string]*localTool{}}
}

// Name implements agentsmcp.ToolProvider.
func (l *LocalTools) Name() string { return LocalProviderName }

// Tools implements agentsmcp.ToolProvider.
func (l *LocalTools) Tools(context.Context) ([]*mcp.Tool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]*mcp.Tool, 0, len(l.tools))
	for _, t := range l.tools {
		out = append(out, t.tool)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return compareStrings(a.Name, b.Name) })
	return out, nil
}

// CallTool implements agentsmcp.ToolProvider.
func (l *LocalTools) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	l.mu.RLock()
	t, ok := l.tools[req.Params.Name]
	l.mu.RUnlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	return t.handler(ctx, req)
}

// OnToolsChanged implements agentsmcp.ToolChangeNotifier.
func (l *LocalTools) OnToolsChanged(f func()) {
	l.mu.Lock()
	l.onChange = f
	l.mu.Unlock()
}

// Remove unregisters local tools by name.
func (l *LocalTools) Remove(names ...string) {
	l.mu.Lock()
	for _, n := range names {
		delete(l.tools, n)
	}
	f := l.onChange
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

func (l *LocalTools) add(t *mcp.Tool, h mcp.ToolHandler) {
	l.mu.Lock()
	l.tools[t.Name] = &localTool{tool: t, handler: h}
	f := l.onChange
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

// AddLocalTool registers a typed local tool, in the idiom of go-sdk's
// [mcp.AddTool]: when t has no InputSchema (or OutputSchema, for a non-any
// Out) it is inferred from In (Out). The router validates arguments against
// the input schema before h runs, so h receives a decoded, valid In.
//
// An error returned by h becomes a result with isError set and the error's
// text, except a *jsonrpc.Error, which becomes a protocol error. A non-nil
// Out is sent as structuredContent, and as JSON text when h set no content.
func AddLocalTool[In, Out any](l *LocalTools, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) error {
	tt := *t
	if tt.InputSchema == nil {
		if reflect.TypeFor[In]() == reflect.TypeFor[any]() {
			tt.InputSchema = json.RawMessage(`{"type":"object"}`)
		} else {
			s, err := schemaFor[In]()
			if err != nil {
				return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
			}
			tt.InputSchema = s
		}
	}
	if tt.OutputSchema == nil && reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		s, err := schemaFor[Out]()
		if err != nil {
			return fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
		tt.OutputSchema = s
	}
	if err := checkTool(&tt); err != nil {
		return err
	}
	l.add(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if args := req.Params.Arguments; len(args) > 0 && string(args) != "null" {
			if err := json.Unmarshal(args, &in); err != nil {
				return errorResult(fmt.Sprintf("invalid arguments for tool %q: %v", tt.Name, err)), nil
			}
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			if werr, ok := err.(*jsonrpc.Error); ok {
				return nil, werr
			}
			return errorResult(err.Error()), nil
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		if v := reflect.ValueOf(out); v.IsValid() && !(v.Kind() == reflect.Pointer && v.IsNil()) {
			data, err := json.Marshal(out)
			if err != nil {
				return nil, fmt.Errorf("tool %q: encode output: %w", tt.Name, err)
			}
			res.StructuredContent = json.RawMessage(data)
			if len(res.Content) == 0 {
				res.Content = []mcp.Content{&mcp.TextContent{Text: string(data)}}
			}
		}
		return res, nil
	})
	return nil
}

// schemaFor infers a schema from T, looking through a pointer: MCP requires
// object schemas, and a *T result is never sent as null (see AddLocalTool).
func schemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {}, // any JSON value, not a byte array
	}})
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
