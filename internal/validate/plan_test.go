package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

func validPlan() *agentsmcp.Plan {
	return &agentsmcp.Plan{
		Request: "summarise the open issues into a report",
		Steps: []agentsmcp.PlanStep{
			{ID: "list", Tool: "github__list_issues", Arguments: json.RawMessage(`{"state":"open"}`)},
			{ID: "read", Tool: "github__get_issue", DependsOn: []string{"list"},
				Arguments: json.RawMessage(`{"number":"{{steps.list.output.items.0.number}}"}`),
				Retry:     &agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second},
				Timeout:   30 * time.Second},
			{ID: "write", Tool: "files__write_file", DependsOn: []string{"read", "list"}, NeedsConfirmation: true},
		},
		Inputs: json.RawMessage(` {"type":"object"}`),
	}
}

func TestPlanValidate(t *testing.T) {
	if err := Plan(validPlan()); err != nil {
		t.Fatalf("valid plan: %v", err)
	}
	many := make([]agentsmcp.PlanStep, agentsmcp.MaxPlanSteps+1)
	for i := range many {
		many[i] = agentsmcp.PlanStep{ID: fmt.Sprint("s", i), Tool: "t"}
	}
	tests := []struct {
		name   string
		change func(p *agentsmcp.Plan)
		want   string // in the message
	}{
		{"no request", func(p *agentsmcp.Plan) { p.Request = " " }, "request is required"},
		{"no steps", func(p *agentsmcp.Plan) { p.Steps = nil }, "no steps"},
		{"too many steps", func(p *agentsmcp.Plan) { p.Steps = many }, "257 steps"},
		{"duplicate step id", func(p *agentsmcp.Plan) { p.Steps[1].ID = "list" }, `"list" is used twice`},
		{"bad step id", func(p *agentsmcp.Plan) { p.Steps[0].ID = "List" }, "does not match"},
		{"empty step id", func(p *agentsmcp.Plan) { p.Steps[0].ID = "" }, "does not match"},
		{"long step id", func(p *agentsmcp.Plan) { p.Steps[0].ID = strings.Repeat("a", 65) }, "does not match"},
		{"bad tool", func(p *agentsmcp.Plan) { p.Steps[0].Tool = "has space" }, "tool"},
		{"unknown dependency", func(p *agentsmcp.Plan) { p.Steps[2].DependsOn = []string{"nope"} }, `depends on "nope", which is not a step`},
		{"duplicate dependency", func(p *agentsmcp.Plan) { p.Steps[2].DependsOn = []string{"read", "read"} }, `depends on "read" twice`},
		{"self cycle", func(p *agentsmcp.Plan) { p.Steps[0].DependsOn = []string{"list"} }, "cycle: list → list"},
		{"two-step cycle", func(p *agentsmcp.Plan) { p.Steps[0].DependsOn = []string{"read"} }, "cycle: list → read → list"},
		{"three-step cycle", func(p *agentsmcp.Plan) {
			p.Steps[0].DependsOn = []string{"write"}
			p.Steps[2].DependsOn = []string{"read"}
		}, "cycle: list → write → read → list"},
		{"negative timeout", func(p *agentsmcp.Plan) { p.Steps[1].Timeout = -1 }, "timeout"},
		{"zero attempts", func(p *agentsmcp.Plan) { p.Steps[1].Retry.MaxAttempts = 0 }, "maxAttempts 0"},
		{"too many attempts", func(p *agentsmcp.Plan) { p.Steps[1].Retry.MaxAttempts = agentsmcp.MaxRetryAttempts + 1 }, "maxAttempts"},
		{"negative backoff", func(p *agentsmcp.Plan) { p.Steps[1].Retry.InitialBackoff = -time.Second }, "negative"},
		{"max below initial", func(p *agentsmcp.Plan) { p.Steps[1].Retry.MaxBackoff = time.Millisecond }, "below initialBackoff"},
		{"array arguments", func(p *agentsmcp.Plan) { p.Steps[0].Arguments = json.RawMessage(`[1]`) }, "not a JSON object"},
		{"string arguments", func(p *agentsmcp.Plan) { p.Steps[0].Arguments = json.RawMessage(`"{}"`) }, "not a JSON object"},
		{"broken arguments", func(p *agentsmcp.Plan) { p.Steps[0].Arguments = json.RawMessage(`{"a":`) }, "not valid JSON"},
		{"arguments not UTF-8", func(p *agentsmcp.Plan) { p.Steps[0].Arguments = json.RawMessage("{\"a\":\"\xff\"}") }, "not valid JSON"},
		{"huge arguments", func(p *agentsmcp.Plan) {
			p.Steps[0].Arguments = json.RawMessage(`{"a":"` + strings.Repeat("x", agentsmcp.MaxStepArgumentsBytes) + `"}`)
		}, "limit"},
		{"inputs not an object", func(p *agentsmcp.Plan) { p.Inputs = json.RawMessage(`null`) }, "plan inputs is not a JSON object"},
		{"bad id", func(p *agentsmcp.Plan) { p.ID = "pln_1" }, "plan id"},
		{"id of another aggregate", func(p *agentsmcp.Plan) { p.ID = agentsmcp.NewID(agentsmcp.TaskIDPrefix) }, "plan id"},
		{"bad thought id", func(p *agentsmcp.Plan) { p.ThoughtID = agentsmcp.NewID(agentsmcp.PlanIDPrefix) }, "thought id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPlan()
			tt.change(p)
			err := Plan(p)
			if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(agentsmcp.ErrorMessage(err), tt.want) {
				t.Errorf("Validate = %v, want EINVALID saying %q", err, tt.want)
			}
		})
	}
	var nilPlan *agentsmcp.Plan
	if agentsmcp.ErrorCode(Plan(nilPlan)) != agentsmcp.EINVALID {
		t.Error("nil plan accepted")
	}
}

func TestPlanValidateAccepts(t *testing.T) {
	for name, change := range map[string]func(p *agentsmcp.Plan){
		"ids": func(p *agentsmcp.Plan) {
			p.ID, p.ThoughtID = agentsmcp.NewID(agentsmcp.PlanIDPrefix), agentsmcp.NewID(agentsmcp.ThoughtIDPrefix)
		},
		"no arguments": func(p *agentsmcp.Plan) { p.Steps[0].Arguments = nil },
		"no inputs":    func(p *agentsmcp.Plan) { p.Inputs = nil },
		"id charset": func(p *agentsmcp.Plan) {
			p.Steps[0].ID, p.Steps[1].DependsOn, p.Steps[2].DependsOn = "a-b_0", []string{"a-b_0"}, nil
		},
		"diamond": func(p *agentsmcp.Plan) {
			p.Steps = append(p.Steps, agentsmcp.PlanStep{ID: "z", Tool: "t", DependsOn: []string{"write", "read", "list"}})
		},
		"unbounded backoff": func(p *agentsmcp.Plan) { p.Steps[1].Retry.MaxBackoff = 0 },
		"one attempt":       func(p *agentsmcp.Plan) { p.Steps[1].Retry = &agentsmcp.RetryPolicy{MaxAttempts: 1} },
		"dependency forward": func(p *agentsmcp.Plan) {
			p.Steps[0].DependsOn = []string{"z"}
			p.Steps = append(p.Steps, agentsmcp.PlanStep{ID: "z", Tool: "t"})
		},
	} {
		p := validPlan()
		change(p)
		if err := Plan(p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFindCycleLongChain(t *testing.T) {
	// A chain of MaxPlanSteps steps, each depending on the next, closed
	// into a cycle by the last: the whole chain is reported.
	steps := make([]agentsmcp.PlanStep, agentsmcp.MaxPlanSteps)
	for i := range steps {
		steps[i] = agentsmcp.PlanStep{ID: fmt.Sprint("s", i), Tool: "t", DependsOn: []string{fmt.Sprint("s", (i+1)%len(steps))}}
	}
	p := &agentsmcp.Plan{Request: "r", Steps: steps}
	err := Plan(p)
	msg := agentsmcp.ErrorMessage(err)
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.HasSuffix(msg, "s254 → s255 → s0") || strings.Count(msg, "→") != agentsmcp.MaxPlanSteps {
		t.Errorf("Validate = %v", err)
	}
	steps[len(steps)-1].DependsOn = nil // now a chain: valid
	if err := Plan(p); err != nil {
		t.Errorf("chain: %v", err)
	}
}

func TestThoughtValidate(t *testing.T) {
	valid := func() *agentsmcp.Thought {
		return &agentsmcp.Thought{Request: "r", Confidence: 0.5, SubGoals: []string{"a"}, RecommendedTools: []agentsmcp.ToolRecommendation{{Tool: "x", Reason: "y"}}}
	}
	if err := Thought(valid()); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(th *agentsmcp.Thought){
		"no request":     func(th *agentsmcp.Thought) { th.Request = "" },
		"long request":   func(th *agentsmcp.Thought) { th.Request = strings.Repeat("x", agentsmcp.MaxQueryTextBytes+1) },
		"long reasoning": func(th *agentsmcp.Thought) { th.Reasoning = strings.Repeat("x", agentsmcp.MaxThoughtTextBytes+1) },
		"confidence":     func(th *agentsmcp.Thought) { th.Confidence = 2 },
		"long entry": func(th *agentsmcp.Thought) {
			th.Uncertainties = []string{strings.Repeat("x", agentsmcp.MaxListEntryBytes+1)}
		},
		"too many entries": func(th *agentsmcp.Thought) { th.Constraints = make([]string, agentsmcp.MaxListItems+1) },
		"unnamed tool":     func(th *agentsmcp.Thought) { th.RecommendedTools[0].Tool = "" },
		"bad id":           func(th *agentsmcp.Thought) { th.ID = agentsmcp.NewID(agentsmcp.PlanIDPrefix) },
	} {
		th := valid()
		change(th)
		if agentsmcp.ErrorCode(Thought(th)) != agentsmcp.EINVALID {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTaskValidate(t *testing.T) {
	valid := func() *agentsmcp.Task {
		return &agentsmcp.Task{Request: "r", Status: agentsmcp.TaskRunning, Steps: []agentsmcp.StepState{{StepID: "a", Status: agentsmcp.StepSucceeded, Output: json.RawMessage(`[1]`)}}}
	}
	if err := Task(valid()); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", agentsmcp.MaxStepOutputBytes-2) + `"`)
	for name, change := range map[string]func(tk *agentsmcp.Task){
		"no request":   func(tk *agentsmcp.Task) { tk.Request = "" },
		"bad status":   func(tk *agentsmcp.Task) { tk.Status = "done" },
		"bad step":     func(tk *agentsmcp.Task) { tk.Steps[0].StepID = "A" },
		"two states":   func(tk *agentsmcp.Task) { tk.Steps = append(tk.Steps, tk.Steps[0]) },
		"step status":  func(tk *agentsmcp.Task) { tk.Steps[0].Status = "" },
		"attempts":     func(tk *agentsmcp.Task) { tk.Steps[0].Attempts = -1 },
		"output json":  func(tk *agentsmcp.Task) { tk.Steps[0].Output = json.RawMessage(`{`) },
		"output utf-8": func(tk *agentsmcp.Task) { tk.Steps[0].Output = json.RawMessage("\"\xc3\"") },
		"output size": func(tk *agentsmcp.Task) {
			tk.Steps[0].Output = json.RawMessage(`"` + strings.Repeat("x", agentsmcp.MaxStepOutputBytes) + `"`)
		},
		"inputs":        func(tk *agentsmcp.Task) { tk.Inputs = json.RawMessage(`[]`) },
		"repaired tool": func(tk *agentsmcp.Task) { tk.Steps[0].RepairedTool = "no spaces" },
		"repaired args without tool": func(tk *agentsmcp.Task) {
			tk.Steps[0].RepairedArguments = json.RawMessage(`{}`)
		},
		"repaired args not an object": func(tk *agentsmcp.Task) {
			tk.Steps[0].RepairedTool, tk.Steps[0].RepairedArguments = "t", json.RawMessage(`[]`)
		},
		"repaired args size": func(tk *agentsmcp.Task) {
			tk.Steps[0].RepairedTool = "t"
			tk.Steps[0].RepairedArguments = json.RawMessage(`{"a":"` + strings.Repeat("x", agentsmcp.MaxStepArgumentsBytes) + `"}`)
		},
		"event size": func(tk *agentsmcp.Task) {
			tk.History = []agentsmcp.TaskEvent{{Type: "x", Message: strings.Repeat("m", agentsmcp.MaxTaskEventBytes)}}
		},
		"plan id":      func(tk *agentsmcp.Task) { tk.PlanID = agentsmcp.NewID(agentsmcp.TaskIDPrefix) },
		"negative ver": func(tk *agentsmcp.Task) { tk.Version = -1 },
		"whole too big": func(tk *agentsmcp.Task) {
			tk.Steps = nil
			for i := range agentsmcp.MaxTaskBytes/agentsmcp.MaxStepOutputBytes + 1 {
				tk.Steps = append(tk.Steps, agentsmcp.StepState{StepID: fmt.Sprint("s", i), Status: agentsmcp.StepSucceeded, Output: big})
			}
		},
	} {
		tk := valid()
		change(tk)
		if agentsmcp.ErrorCode(Task(tk)) != agentsmcp.EINVALID {
			t.Errorf("%s: accepted", name)
		}
	}
	tk := valid()
	tk.Status = ""
	if Task(tk) != nil || agentsmcp.ErrorCode(TaskUpdate(tk)) != agentsmcp.EINVALID {
		t.Error("an empty status must be valid to create, invalid to update")
	}
	tk.Status, tk.Version = agentsmcp.TaskPaused, 0
	if agentsmcp.ErrorCode(TaskUpdate(tk)) != agentsmcp.EINVALID {
		t.Error("version 0 accepted by ValidateUpdate")
	}
}

func TestTaskAddEvent(t *testing.T) {
	var tk agentsmcp.Task
	for i := range agentsmcp.MaxTaskHistory + 5 {
		storedform.AddEvent(&tk, agentsmcp.TaskEvent{Type: "e", Message: fmt.Sprint(i)})
	}
	if len(tk.History) != agentsmcp.MaxTaskHistory || tk.History[0].Message != "5" || tk.History[agentsmcp.MaxTaskHistory-1].Message != fmt.Sprint(agentsmcp.MaxTaskHistory+4) {
		t.Errorf("history: %d events, first %q", len(tk.History), tk.History[0].Message)
	}
	storedform.AddEvent(&tk, agentsmcp.TaskEvent{Type: "long", StepID: "s", Message: strings.Repeat("é", agentsmcp.MaxTaskEventBytes)})
	last := tk.History[len(tk.History)-1]
	if n := len(last.Type) + len(last.StepID) + len(last.Message); n > agentsmcp.MaxTaskEventBytes || n < agentsmcp.MaxTaskEventBytes-1 || !strings.HasPrefix(last.Message, "é") {
		t.Errorf("long event cut to %d bytes", n)
	}
	if err := Task(&tk); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID { // no request, but the events are fine
		t.Errorf("Validate: %v", err)
	}
	tk.Request = "r"
	if err := Task(&tk); err != nil {
		t.Errorf("Validate after AddEvent: %v", err)
	}
}
