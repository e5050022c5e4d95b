package agents_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/remote"
)

// received records, per tool, the arguments a real upstream was called
// with: what the tests check, rather than the plan.
type received struct {
	mu    sync.Mutex
	calls map[string][]map[string]any
}

func (r *received) record(tool string, args any) {
	b, _ := json.Marshal(args)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string][]map[string]any{}
	}
	r.calls[tool] = append(r.calls[tool], m)
}

func (r *received) of(tool string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[tool]
}

type addIn struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type productOut struct {
	Product float64 `json:"product" jsonschema:"the product"`
}

type postIDIn struct {
	ID string `json:"id" jsonschema:"the id"`
}

type personIn struct {
	Name string `json:"name" jsonschema:"the full name of the person"`
}

type personOut struct {
	Email string `json:"email" jsonschema:"the person's email address"`
}

type mailIn struct {
	Address string `json:"address" jsonschema:"the email address to send to"`
	Message string `json:"message" jsonschema:"the text of the message"`
}

// flowUpstream is a real go-sdk MCP server on loopback, published to s's
// router through a remote pool: add (whose result is text, as the MCP
// reference servers answer), multiply (a structured number), echo, delete_post (a string id), a directory
// lookup that returns a person's email address, and a mailer that needs an
// address. Every call is recorded.
func flowUpstream(t *testing.T, s *stack) *received {
	t.Helper()
	ctx := context.Background()
	rec := &received{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "flow", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "add two numbers and return their sum"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			rec.record("add", in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(in.A+in.B, 'f', -1, 64)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "multiply", Description: "multiply two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, productOut, error) {
			rec.record("multiply", in)
			return nil, productOut{Product: in.A * in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo a message back unchanged"},
		func(_ context.Context, _ *mcp.CallToolRequest, in messageIn) (*mcp.CallToolResult, map[string]any, error) {
			rec.record("echo", in)
			return nil, map[string]any{"echoed": in.Message}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_post", Description: "delete a blog post"},
		func(_ context.Context, _ *mcp.CallToolRequest, in postIDIn) (*mcp.CallToolResult, map[string]any, error) {
			rec.record("delete_post", in)
			return nil, map[string]any{"deleted": in.ID}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "find_person", Description: "look up a person in the company directory by name and return their email address"},
		func(_ context.Context, _ *mcp.CallToolRequest, in personIn) (*mcp.CallToolResult, personOut, error) {
			rec.record("find_person", in)
			return nil, personOut{Email: strings.ToLower(strings.ReplaceAll(in.Name, " ", ".")) + "@example.org"}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "send_mail", Description: "send a mail message to an email address"},
		func(_ context.Context, _ *mcp.CallToolRequest, in mailIn) (*mcp.CallToolResult, map[string]any, error) {
			rec.record("send_mail", in)
			return nil, map[string]any{"sent": in.Address}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	pool := remote.NewPool(remote.Options{Registry: s.router})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "up", Transport: remote.TransportStreamable, URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if st, _ := pool.Status("up"); st.Tools != 6 {
		t.Fatalf("upstream status %+v, want 6 tools", st)
	}
	return rec
}

// TestBuiltinPlanWiresDataBetweenSteps runs two-step and id requests
// through the builtin planner and the executor against a real upstream,
// and checks what the upstream received: the later step gets the earlier
// step's result, the id the request names reaches the tool, and a value
// that only another tool provides is looked up first, never asked and
// never replaced by the person's name.
func TestBuiltinPlanWiresDataBetweenSteps(t *testing.T) {
	s := newStack(t, func(*localtools.Provider) {})
	rec := flowUpstream(t, s)

	t.Run("then echo the result", func(t *testing.T) {
		_, plan, _, task := s.runRequest(t, "Add 3 and 4, then echo the result", nil)
		if len(plan.Inputs) != 0 {
			t.Errorf("the plan asks for inputs %s; the echo's message is the sum", plan.Inputs)
		}
		if task.Status != agentsmcp.TaskSucceeded {
			t.Fatalf("task %s: %s (plan %+v)", task.Status, task.Error, plan.Steps)
		}
		if got := rec.of("echo"); len(got) != 1 || got[0]["message"] != "7" {
			t.Errorf("echo received %v, want message 7", got)
		}
	})
	t.Run("then echo a structured number", func(t *testing.T) {
		_, plan, _, task := s.runRequest(t, "Multiply 6 by 7 and echo the result", nil)
		if len(plan.Inputs) != 0 {
			t.Errorf("the plan asks for inputs %s; the echo's message is the product", plan.Inputs)
		}
		if task.Status != agentsmcp.TaskSucceeded {
			t.Fatalf("task %s: %s (plan %+v)", task.Status, task.Error, plan.Steps)
		}
		if got := rec.of("echo"); len(got) == 0 || got[len(got)-1]["message"] != "42" {
			t.Errorf("echo received %v, want message 42 last", got)
		}
	})
	t.Run("a value the request gives is not wired", func(t *testing.T) {
		_, plan, _, task := s.runRequest(t, "Add 3 and 4, then echo the message hello", nil)
		if task.Status != agentsmcp.TaskSucceeded {
			t.Fatalf("task %s: %s (plan %+v)", task.Status, task.Error, plan.Steps)
		}
		if got := rec.of("echo"); len(got) == 0 || got[len(got)-1]["message"] != "hello" {
			t.Errorf("echo received %v, want message hello last", got)
		}
	})
	t.Run("delete post 7", func(t *testing.T) {
		_, plan, _, task := s.runRequest(t, "Delete post 7", nil)
		if len(plan.Inputs) != 0 {
			t.Errorf("the plan asks for inputs %s; the request names the post", plan.Inputs)
		}
		if task.Status != agentsmcp.TaskSucceeded {
			t.Fatalf("task %s: %s (plan %+v)", task.Status, task.Error, plan.Steps)
		}
		if got := rec.of("delete_post"); len(got) != 1 || got[0]["id"] != "7" {
			t.Errorf("delete_post received %v, want id \"7\"", got)
		}
	})
	t.Run("look up the address first", func(t *testing.T) {
		_, plan, _, task := s.runRequest(t, `Send "lunch is ready" to Ada Lovelace`, nil)
		if len(plan.Inputs) != 0 {
			t.Errorf("the plan asks for inputs %s; the directory gives the address", plan.Inputs)
		}
		if len(plan.Steps) != 2 || plan.Steps[0].Tool != "up__find_person" || plan.Steps[1].Tool != "up__send_mail" {
			t.Fatalf("plan steps %+v, want find_person then send_mail", plan.Steps)
		}
		if task.Status != agentsmcp.TaskSucceeded {
			t.Fatalf("task %s: %s", task.Status, task.Error)
		}
		if got := rec.of("find_person"); len(got) != 1 || got[0]["name"] != "Ada Lovelace" {
			t.Errorf("find_person received %v, want name Ada Lovelace", got)
		}
		if got := rec.of("send_mail"); len(got) != 1 || got[0]["address"] != "ada.lovelace@example.org" || got[0]["message"] != "lunch is ready" {
			t.Errorf("send_mail received %v, want the looked-up address and the message", got)
		}
	})
	t.Run("an address the request gives needs no lookup", func(t *testing.T) {
		before := len(rec.of("find_person"))
		_, plan, _, task := s.runRequest(t, `Send "hi" to grace@example.org`, nil)
		if len(plan.Steps) != 1 || task.Status != agentsmcp.TaskSucceeded {
			t.Fatalf("plan %+v, task %s: want one send_mail step that succeeds", plan.Steps, task.Status)
		}
		if got := rec.of("send_mail"); got[len(got)-1]["address"] != "grace@example.org" || len(rec.of("find_person")) != before {
			t.Errorf("send_mail received %v, find_person called %d times more", got, len(rec.of("find_person"))-before)
		}
	})
	t.Run("no name to look up: the address is asked", func(t *testing.T) {
		_, plan, _, task := s.runRequest(t, `Send the mail "hi"`, nil)
		if len(plan.Steps) != 1 || plan.Steps[0].Tool != "up__send_mail" || !strings.Contains(string(plan.Inputs), `"address"`) {
			t.Fatalf("plan %+v inputs %s: want send_mail asking for the address", plan.Steps, plan.Inputs)
		}
		if task.Status != agentsmcp.TaskPaused {
			t.Errorf("task %s, want paused for the address", task.Status)
		}
	})
}
