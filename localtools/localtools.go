// Package localtools is the [agentsmcp.ToolProvider] of the tools
// implemented in this process: search_tools, the memory tools, the agents'
// tools and the conformance fixtures register here, and cmd/agents-mcp adds
// the provider to the router.
//
// It is a leaf package (the root and go-sdk's types only), as the remote
// package publishes upstreams through its own small Registry interface: a
// package that offers MCP tools imports localtools, never the router and
// its transports.
package localtools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
)

// ProviderName is the provider name of the tools of this process, the
// source the router and the agents' catalog report for them.
const ProviderName = "local"

// Provider is the [agentsmcp.ToolProvider] of the tools implemented in this
// process. Packages register their tools with [Add]; tools may be added and
// removed at any time, and the router follows through
// [agentsmcp.ToolChangeNotifier].
type Provider struct {
	mu       sync.RWMutex
	tools    map[string]*localTool
	onChange func()
}

type localTool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

var (
	_ agentsmcp.ToolProvider       = (*Provider)(nil)
	_ agentsmcp.ToolChangeNotifier = (*Provider)(nil)
)

// New returns an empty local provider.
func New() *Provider {
	return &Provider{tools: map[string]*localTool{}}
}

// Name implements agentsmcp.ToolProvider.
func (l *Provider) Name() string { return ProviderName }

// AcceptsDelegation implements delegation.DelegationAcceptor: the agent
// tools run a task's steps, which may call HTTP tools acting as the
// caller, while the caller waits (ADR 0012 D7b).
func (l *Provider) AcceptsDelegation() bool { return true }

// Tools implements agentsmcp.ToolProvider.
func (l *Provider) Tools(context.Context) ([]*mcp.Tool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]*mcp.Tool, 0, len(l.tools))
	for _, t := range l.tools {
		out = append(out, t.tool)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// CallTool implements agentsmcp.ToolProvider.
func (l *Provider) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	l.mu.RLock()
	t, ok := l.tools[req.Params.Name]
	l.mu.RUnlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	return t.handler(ctx, req)
}

// OnToolsChanged implements agentsmcp.ToolChangeNotifier.
func (l *Provider) OnToolsChanged(f func()) {
	l.mu.Lock()
	l.onChange = f
	l.mu.Unlock()
}

// Remove unregisters local tools by name.
func (l *Provider) Remove(names ...string) {
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

func (l *Provider) add(t *mcp.Tool, h mcp.ToolHandler) {
	l.mu.Lock()
	l.tools[t.Name] = &localTool{tool: t, handler: h}
	f := l.onChange
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

// Add registers a typed local tool, in the idiom of go-sdk's [mcp.AddTool]:
// when t has no InputSchema (or OutputSchema, for a non-any Out) it is
// inferred from In (Out). The router validates arguments against the input
// schema before h runs, so h receives a decoded, valid In. A tool the
// router would refuse ([toolschema.Check]) is an error, and nothing is
// registered.
//
// An error returned by h becomes a result with isError set and the error's
// text, except a *jsonrpc.Error, which becomes a protocol error, and an
// error with code [agentsmcp.EQUOTA], which is returned as the provider's
// error: the router answers it as an isError result with its message on
// MCP, and as HTTP 429 on the REST bridge. A non-nil Out is sent as
// structuredContent, and as JSON text when h set no content.
func Add[In, Out any](l *Provider, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) error {
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
	if err := toolschema.Check(&tt); err != nil {
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
			if agentsmcp.ErrorCode(err) == agentsmcp.EQUOTA {
				return nil, err
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

// schemaFor infers a schema from T (see [Infer]) as JSON.
func schemaFor[T any]() (json.RawMessage, error) {
	s, err := Infer[T]()
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// Infer infers a schema from T, looking through a pointer: MCP requires
// object schemas, and a *T result is never sent as null (see Add). [Add]
// uses it for the schemas a tool does not set; a tool that wants to refine
// the inferred schema starts from it.
//
// The schema is spelled portably, for clients that map tool schemas onto a
// narrower dialect (the OpenAPI subset of Gemini function declarations, the
// MCP Inspector's --strict lint), without changing what it accepts:
//   - a list of types, which the inference gives nil-able slices and
//     pointers ("type": ["null", "array"]), becomes anyOf with one type per
//     branch;
//   - a schema that accepts any JSON value (json.RawMessage, any), inferred
//     as a bare true, becomes anyOf of the six JSON types.
func Infer[T any]() (*jsonschema.Schema, error) {
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
	return portable(s), nil
}

// portable rewrites s and its subschemas in place as [Infer] describes, and
// returns it. It knows the keywords the inference produces.
func portable(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	for _, sub := range s.Properties {
		portable(sub)
	}
	for _, sub := range s.PatternProperties {
		portable(sub)
	}
	for _, sub := range s.Defs {
		portable(sub)
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.AllOf, s.OneOf, s.PrefixItems} {
		for _, sub := range list {
			portable(sub)
		}
	}
	portable(s.Items)
	// additionalProperties may stay a boolean (true for map[string]any,
	// false for structs): every dialect has that.
	if ap := s.AdditionalProperties; ap != nil && !acceptsAnything(ap) && !isFalse(ap) {
		portable(ap)
	}
	switch {
	case len(s.Types) > 1:
		branches := make([]*jsonschema.Schema, 0, len(s.Types))
		for _, typ := range s.Types {
			if typ == "null" {
				// The other keywords the inference sets (properties,
				// items, bounds) apply to other types only.
				branches = append(branches, &jsonschema.Schema{Type: "null"})
				continue
			}
			b := *s
			b.Types, b.Type = nil, typ
			b.Title, b.Description = "", ""
			branches = append(branches, &b)
		}
		*s = jsonschema.Schema{Title: s.Title, Description: s.Description, AnyOf: branches}
	case acceptsAnything(s):
		s.AnyOf = anyJSONValue()
	}
	return s
}

// acceptsAnything reports whether s has none of the validation keywords the
// inference sets, so that it accepts every JSON value.
func acceptsAnything(s *jsonschema.Schema) bool {
	return s.Type == "" && len(s.Types) == 0 && s.Ref == "" && s.Enum == nil && s.Const == nil &&
		s.AnyOf == nil && s.AllOf == nil && s.OneOf == nil && s.Not == nil &&
		s.Properties == nil && s.Items == nil && s.AdditionalProperties == nil
}

// isFalse reports whether s is the schema that accepts nothing, as the
// inference spells it for a struct's additionalProperties.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && acceptsAnything(s.Not) && s.Type == "" && len(s.Types) == 0
}

// anyJSONValue is "any JSON value" spelled with one type per branch
// (integers are numbers).
func anyJSONValue() []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, typ := range []string{"object", "array", "string", "number", "boolean", "null"} {
		out = append(out, &jsonschema.Schema{Type: typ})
	}
	return out
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
