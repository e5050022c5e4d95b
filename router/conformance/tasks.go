package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

// The fixtures of conformance 0.2's Tasks extension scenarios
// (io.modelcontextprotocol/tasks, SEP-2663), as the scenario sources describe
// them. Called by a request that declared the extension (the router puts an
// mcpwire.TaskMode in its context), six of them answer with a task of the
// in-memory backend in taskstore.go; greet stays synchronous. Otherwise they
// run as ordinary tools: the work itself, and any input it needs asked
// through MRTR (input_required), except failing_job, which needs a task
// under 2026-07-28 and answers -32021 there.

type greetInput struct {
	Name string `json:"name" jsonschema:"Who to greet"`
}

type slowComputeInput struct {
	Seconds float64 `json:"seconds" jsonschema:"How long to work, in seconds; 0 answers at once"`
	Label   string  `json:"label,omitempty" jsonschema:"A label echoed in the result"`
}

type confirmDeleteInput struct {
	Filename string `json:"filename" jsonschema:"The file to pretend to delete"`
}

// maxSlowCompute bounds slow_compute. The suite asks for up to 60 s only to
// have a task still running when it sends tasks/cancel or tasks/get right
// after creating it; 3 s is ample for that, and a call that is not run as a
// task holds its client no longer than that, which keeps the conformance
// step short.
const maxSlowCompute = 3 * time.Second

func registerTaskTools(r *router.Router, l *localtools.Provider) error {
	fx := &fixtureTasks{tasks: map[string]*fixtureTask{}}
	r.AddTaskBackend(fx)
	errs := []error{
		localtools.Add(l, &mcp.Tool{Name: "greet", Description: "Tasks fixture, synchronous only: returns Hello, {name}!"}, greetHandler),
		localtools.Add(l, &mcp.Tool{Name: "slow_compute", Description: "Tasks fixture: works for the given seconds (0: at once; at most 3), then returns a result; a cancelled call or task stops at once"}, fx.slowCompute),
		localtools.Add(l, &mcp.Tool{Name: "failing_job", Description: "Tasks fixture, task required under 2026-07-28: fails with a tool execution error after about a second"}, fx.failingJob),
		localtools.Add(l, &mcp.Tool{Name: "protocol_error_job", Description: "Tasks fixture: fails with a protocol (JSON-RPC) error"}, fx.protocolErrorJob),
		localtools.Add(l, &mcp.Tool{Name: "confirm_delete", Description: "Tasks fixture: asks for one confirmation (input_required), then completes"}, fx.confirmDelete),
		localtools.Add(l, &mcp.Tool{Name: "multi_input", Description: "Tasks fixture: asks for two inputs at once (input_required), and completes when both are answered"}, fx.multiInput),
		localtools.Add(l, &mcp.Tool{Name: "test_tool_with_task", Description: "Tasks fixture: asks for user_name (input_required, before any task), then returns a result that contains it, as a task when the caller declared the extension"}, fx.toolWithTask),
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("conformance task fixtures: %w", err)
	}
	return nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func greetHandler(_ context.Context, _ *mcp.CallToolRequest, in greetInput) (*mcp.CallToolResult, any, error) {
	return textResult(fmt.Sprintf("Hello, %s!", in.Name)), nil, nil
}

func slowComputeHandler(ctx context.Context, _ *mcp.CallToolRequest, in slowComputeInput) (*mcp.CallToolResult, any, error) {
	d := min(time.Duration(in.Seconds*float64(time.Second)), maxSlowCompute)
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
	return textResult(fmt.Sprintf("slow_compute %q done after %gs", in.Label, in.Seconds)), nil, nil
}

func failingJobHandler(ctx context.Context, _ *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-t.C:
	}
	// A plain error becomes a result with isError: a tool execution error.
	return nil, nil, errors.New("failing_job always fails")
}

func protocolErrorJobHandler(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
	return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job always fails with a protocol error"}
}

func confirmSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"confirm": {Type: "boolean"}},
		Required:   []string{"confirm"},
	}
}

func confirmDeleteHandler(_ context.Context, req *mcp.CallToolRequest, in confirmDeleteInput) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok && resp != nil {
		if yes, _ := resp.Content["confirm"].(bool); resp.Action == "accept" && yes {
			return textResult(fmt.Sprintf("Deleted %s (not really: this is a fixture)", in.Filename)), nil, nil
		}
		return textResult(fmt.Sprintf("Kept %s", in.Filename)), nil, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		"confirm": &mcp.ElicitParams{Message: fmt.Sprintf("Delete %s?", in.Filename), RequestedSchema: confirmSchema()},
	}}, nil, nil
}

// multiInputHandler asks only for the inputs still missing, so a partial
// answer leaves exactly the unanswered key pending. The keys answered in
// earlier rounds travel in requestState (a fixture needs no integrity
// protection), as an MRTR retry carries only the latest answers.
func multiInputHandler(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	asks := mcp.InputRequestMap{
		"user_name": &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameElicitSchema()},
		"confirm":   &mcp.ElicitParams{Message: "Go ahead?", RequestedSchema: confirmSchema()},
	}
	var answered []string
	for k := range asks {
		_, now := req.Params.InputResponses[k].(*mcp.ElicitResult)
		if now || slices.Contains(strings.Split(req.Params.RequestState, ","), k) {
			answered = append(answered, k)
			delete(asks, k)
		}
	}
	if len(asks) > 0 {
		slices.Sort(answered)
		return &mcp.CallToolResult{InputRequests: asks, RequestState: strings.Join(answered, ",")}, nil, nil
	}
	return textResult("multi_input: both inputs received"), nil, nil
}

func toolWithTaskHandler(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	if content := acceptedContent(req.Params.InputResponses, "user_name"); content != nil {
		if name, _ := content["name"].(string); name != "" {
			return textResult(fmt.Sprintf("Hello, %s! (user_name gathered before the task)", name)), nil, nil
		}
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		"user_name": &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameElicitSchema()},
	}}, nil, nil
}
