// Package taskfixture is an MCP server, on go-sdk, that implements the
// Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) with custom
// methods, as a 2026-07-28 server would: go-sdk has no Tasks. It is an
// upstream for the tests of the gateway's task passthrough (ADR 0010, D3)
// and holds its tasks in memory. Nothing shipped imports it.
package taskfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// Server is the upstream's side of the Tasks extension, in memory. Its
// tools, called by a request that declares the extension:
//   - greet_later: a task that asks for a name (input_required, key
//     "who.1"), then completes with "hello, <name>"; ttlMs 60000;
//   - slow_job: a task that works until cancelled; ttlMs null;
//   - required_job: a task; without the extension, -32021;
//   - plain: never a task;
//   - name_then_task: asks for a name the multi round-trip way first
//     (input_required, key "user_name", requestState "name-state"), then,
//     on the retry that answers it and echoes the state, a task that has
//     completed with "hello, <name>" (the composition of SEP-2663);
//   - forget {id}: the server forgets task id (never a task).
//
// Without the extension, greet_later and slow_job answer "sync" at once.
// Task ids are job-1, job-2, … in the order of creation.
type Server struct {
	mu    sync.Mutex
	seq   int
	tasks map[string]*upTask
	// names holds the Mcp-Name header of each tasks/* request, and
	// undeclared the methods that came without the extension declared.
	names, undeclared []string
}

// Created is how many tasks the server created.
func (ts *Server) Created() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.seq
}

// nameState is the requestState of name_then_task's question.
const nameState = "name-state"

type upTask struct {
	id, status, name string
	ttl              *int64
	created, updated time.Time
}

type upCreated struct {
	mcp.ResultBase
	ResultType     string         `json:"resultType"`
	TaskID         string         `json:"taskId"`
	Status         string         `json:"status"`
	StatusMessage  string         `json:"statusMessage,omitempty"`
	CreatedAt      string         `json:"createdAt"`
	LastUpdatedAt  string         `json:"lastUpdatedAt"`
	TTLMs          *int64         `json:"ttlMs"`
	PollIntervalMs int64          `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]any `json:"inputRequests,omitempty"`
	Result         any            `json:"result,omitempty"`
}

type upParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

type upAck struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[mcpwire.TasksExtension]
	return ok
}

// New returns the fixture and its go-sdk server, which advertises the
// extension in server/discover; serve it statelessly (streamable HTTP) or
// over stdio, so that clients negotiate 2026-07-28.
func New() (*Server, *mcp.Server) {
	ts := &Server{tasks: map[string]*upTask{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "tasker", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Extensions: map[string]any{mcpwire.TasksExtension: map[string]any{}}},
	})
	schema := json.RawMessage(`{"type":"object"}`)
	syncTool := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sync"}}}, nil
	}
	for _, name := range []string{"greet_later", "slow_job", "required_job", "plain"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: schema}, syncTool)
	}
	s.AddTool(&mcp.Tool{Name: "name_then_task", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"user_name": &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			}},
			RequestState: nameState,
		}, nil
	})
	s.AddTool(&mcp.Tool{Name: "forget", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &a)
		ts.mu.Lock()
		delete(ts.tasks, a.ID)
		ts.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "forgotten"}}}, nil
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "tasks/") {
				ts.mu.Lock()
				if ex := req.GetExtra(); ex != nil && ex.Header != nil {
					ts.names = append(ts.names, method+" "+ex.Header.Get("Mcp-Name"))
				}
				ts.mu.Unlock()
			}
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil || call.Params.Name == "plain" || call.Params.Name == "forget" {
				return next(ctx, method, req)
			}
			if !declaresTasks(call.Params.GetMeta()) {
				if call.Params.Name == "required_job" {
					return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "required_job runs only as a task",
						Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)}
				}
				return next(ctx, method, req)
			}
			if call.Params.Name == "name_then_task" {
				er, _ := call.Params.InputResponses["user_name"].(*mcp.ElicitResult)
				if er == nil || er.Action != "accept" || call.Params.RequestState != nameState {
					return next(ctx, method, req) // ask (again)
				}
				name, _ := er.Content["name"].(string)
				return ts.create(call.Params.Name, name), nil
			}
			return ts.create(call.Params.Name, ""), nil
		}
	})
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(mcp.AddReceivingCustomMethod(s, "tasks/get", func(_ context.Context, _ *mcp.ServerSession, p *upParams) (*upCreated, error) {
		t, err := ts.find("tasks/get", p)
		if err != nil {
			return nil, err
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.view(t, "complete"), nil
	}))
	must(mcp.AddReceivingCustomMethod(s, "tasks/update", func(_ context.Context, _ *mcp.ServerSession, p *upParams) (*upAck, error) {
		t, err := ts.find("tasks/update", p)
		if err != nil {
			return nil, err
		}
		if p.InputResponses == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `tasks/update: "inputResponses" is required`}
		}
		var answer struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if raw, ok := p.InputResponses["who.1"]; ok && t.status == "input_required" && json.Unmarshal(raw, &answer) == nil && answer.Action == "accept" {
			t.status, t.name, t.updated = "completed", answer.Content.Name, time.Now()
		}
		return &upAck{ResultType: "complete"}, nil
	}))
	must(mcp.AddReceivingCustomMethod(s, "tasks/cancel", func(_ context.Context, _ *mcp.ServerSession, p *upParams) (*upAck, error) {
		t, err := ts.find("tasks/cancel", p)
		if err != nil {
			return nil, err
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if t.status == "working" || t.status == "input_required" {
			t.status, t.updated = "cancelled", time.Now()
		}
		return &upAck{ResultType: "complete"}, nil
	}))
	return ts, s
}

func (ts *Server) create(tool, name string) *upCreated {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.seq++
	now := time.Now()
	t := &upTask{id: fmt.Sprintf("job-%d", ts.seq), status: "working", created: now, updated: now}
	switch tool {
	case "greet_later":
		t.status = "input_required"
		ttl := int64(60000)
		t.ttl = &ttl
	case "name_then_task":
		t.status, t.name = "completed", name
	}
	ts.tasks[t.id] = t
	return ts.view(t, "task")
}

// view is the task as tasks/get shows it (resultType "complete"), or as
// the CreateTaskResult (resultType "task", the Task fields only).
func (ts *Server) view(t *upTask, resultType string) *upCreated {
	v := &upCreated{
		ResultType: resultType, TaskID: t.id, Status: t.status, TTLMs: t.ttl, PollIntervalMs: 200,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
	}
	if resultType == "task" {
		return v
	}
	switch t.status {
	case "input_required":
		v.InputRequests = map[string]any{"who.1": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": "Who is it for?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
		}}}
	case "completed":
		v.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello, " + t.name}}}
	}
	return v
}

func (ts *Server) find(method string, p *upParams) (*upTask, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !declaresTasks(p.GetMeta()) {
		ts.undeclared = append(ts.undeclared, method)
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "declare the tasks extension"}
	}
	t, ok := ts.tasks[p.TaskID]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q not found", p.TaskID)}
	}
	return t, nil
}

// Seen returns the method and Mcp-Name header of each tasks/* request
// ("tasks/get job-1"; over streamable HTTP only), and the methods of the
// requests that came without the extension declared.
func (ts *Server) Seen() (names, undeclared []string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.names...), append([]string(nil), ts.undeclared...)
}
