package agentsmcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func validPlan() *Plan {
	return &Plan{
		Request: "summarise the open issues into a report",
		Steps: []PlanStep{
			{ID: "list", Tool: "github__list_issues", Arguments: json.RawMessage(`{"state":"open"}`)},
			{ID: "read", Tool: "github__get_issue", DependsOn: []string{"list"},
				Arguments: json.RawMessage(`{"number":"{{steps.list.output.items.0.number}}"}`),
				Retry:     &RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second},
				Timeout:   30 * time.Second},
			{ID: "write", Tool: "files__write_file", DependsOn: []string{"read", "list"}, NeedsConfirmation: true},
		},
		Inputs: json.RawMessage(` {"type":"object"}`),
	}
}

func TestPlanValidate(t *testing.T) {
	if err := validPlan().Validate(); err != nil {
		t.Fatalf("valid plan: %v", err)
	}
	many := make([]PlanStep, MaxPlanSteps+1)
	for i := range many {
		many[i] = PlanStep{ID: fmt.Sprint("s", i), Tool: "t"}
	}
	tests := []struct {
		name   string
		change func(p *Plan)
		want   string // in the message
	}{
		{"no request", func(p *Plan) { p.Request = " " }, "request is required"},
		{"no steps", func(p *Plan) { p.Steps = nil }, "no steps"},
		{"too many steps", func(p *Plan) { p.Steps = many }, "257 steps"},
		{"duplicate step id", func(p *Plan) { p.Steps[1].ID = "list" }, `"list" is used twice`},
		{"bad step id", func(p *Plan) { p.Steps[0].ID = "List" }, "does not match"},
		{"empty step id", func(p *Plan) { p.Steps[0].ID = "" }, "does not match"},
		{"long step id", func(p *Plan) { p.Steps[0].ID = strings.Repeat("a", 65) }, "does not match"},
		{"bad tool", func(p *Plan) { p.Steps[0].Tool = "has space" }, "tool"},
		{"unknown dependency", func(p *Plan) { p.Steps[2].DependsOn = []string{"nope"} }, `depends on "nope", which is not a step`},
		{"duplicate dependency", func(p *Plan) { p.Steps[2].DependsOn = []string{"read", "read"} }, `depends on "read" twice`},
		{"self cycle", func(p *Plan) { p.Steps[0].DependsOn = []string{"list"} }, "cycle: list → list"},
		{"two-step cycle", func(p *Plan) { p.Steps[0].DependsOn = []string{"read"} }, "cycle: list → read → list"},
		{"three-step cycle", func(p *Plan) {
			p.Steps[0].DependsOn = []string{"write"}
			p.Steps[2].DependsOn = []string{"read"}
		}, "cycle: list → write → read → list"},
		{"negative timeout", func(p *Plan) { p.Steps[1].Timeout = -1 }, "timeout"},
		{"zero attempts", func(p *Plan) { p.Steps[1].Retry.MaxAttempts = 0 }, "maxAttempts 0"},
		{"too many attempts", func(p *Plan) { p.Steps[1].Retry.MaxAttempts = MaxRetryAttempts + 1 }, "maxAttempts"},
		{"negative backoff", func(p *Plan) { p.Steps[1].Retry.InitialBackoff = -time.Second }, "negative"},
		{"max below initial", func(p *Plan) { p.Steps[1].Retry.MaxBackoff = time.Millisecond }, "below initialBackoff"},
		{"array arguments", func(p *Plan) { p.Steps[0].Arguments = json.RawMessage(`[1]`) }, "not a JSON object"},
		{"string arguments", func(p *Plan) { p.Steps[0].Arguments = json.RawMessage(`"{}"`) }, "not a JSON object"},
		{"broken arguments", func(p *Plan) { p.Steps[0].Arguments = json.RawMessage(`{"a":`) }, "not valid JSON"},
		{"arguments not UTF-8", func(p *Plan) { p.Steps[0].Arguments = json.RawMessage("{\"a\":\"\xff\"}") }, "not valid JSON"},
		{"huge arguments", func(p *Plan) {
			p.Steps[0].Arguments = json.RawMessage(`{"a":"` + strings.Repeat("x", MaxStepArgumentsBytes) + `"}`)
		}, "limit"},
		{"inputs not an object", func(p *Plan) { p.Inputs = json.RawMessage(`null`) }, "plan inputs is not a JSON object"},
		{"bad id", func(p *Plan) { p.ID = "pln_1" }, "plan id"},
		{"id of another aggregate", func(p *Plan) { p.ID = NewID(TaskIDPrefix) }, "plan id"},
		{"bad thought id", func(p *Plan) { p.ThoughtID = NewID(PlanIDPrefix) }, "thought id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPlan()
			tt.change(p)
			err := p.Validate()
			if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tt.want) {
				t.Errorf("Validate = %v, want EINVALID saying %q", err, tt.want)
			}
		})
	}
	var nilPlan *Plan
	if ErrorCode(nilPlan.Validate()) != EINVALID {
		t.Error("nil plan accepted")
	}
}

func TestPlanValidateAccepts(t *testing.T) {
	for name, change := range map[string]func(p *Plan){
		"ids":          func(p *Plan) { p.ID, p.ThoughtID = NewID(PlanIDPrefix), NewID(ThoughtIDPrefix) },
		"no arguments": func(p *Plan) { p.Steps[0].Arguments = nil },
		"no inputs":    func(p *Plan) { p.Inputs = nil },
		"id charset": func(p *Plan) {
			p.Steps[0].ID, p.Steps[1].DependsOn, p.Steps[2].DependsOn = "a-b_0", []string{"a-b_0"}, nil
		},
		"diamond": func(p *Plan) {
			p.Steps = append(p.Steps, PlanStep{ID: "z", Tool: "t", DependsOn: []string{"write", "read", "list"}})
		},
		"unbounded backoff": func(p *Plan) { p.Steps[1].Retry.MaxBackoff = 0 },
		"one attempt":       func(p *Plan) { p.Steps[1].Retry = &RetryPolicy{MaxAttempts: 1} },
		"dependency forward": func(p *Plan) {
			p.Steps[0].DependsOn = []string{"z"}
			p.Steps = append(p.Steps, PlanStep{ID: "z", Tool: "t"})
		},
	} {
		p := validPlan()
		change(p)
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFindCycleLongChain(t *testing.T) {
	// A chain of MaxPlanSteps steps, each depending on the next, closed
	// into a cycle by the last: the whole chain is reported.
	steps := make([]PlanStep, MaxPlanSteps)
	for i := range steps {
		steps[i] = PlanStep{ID: fmt.Sprint("s", i), Tool: "t", DependsOn: []string{fmt.Sprint("s", (i+1)%len(steps))}}
	}
	p := &Plan{Request: "r", Steps: steps}
	err := p.Validate()
	msg := ErrorMessage(err)
	if ErrorCode(err) != EINVALID || !strings.HasSuffix(msg, "s254 → s255 → s0") || strings.Count(msg, "→") != MaxPlanSteps {
		t.Errorf("Validate = %v", err)
	}
	steps[len(steps)-1].DependsOn = nil // now a chain: valid
	if err := p.Validate(); err != nil {
		t.Errorf("chain: %v", err)
	}
}

func TestThoughtValidate(t *testing.T) {
	valid := func() *Thought {
		return &Thought{Request: "r", Confidence: 0.5, SubGoals: []string{"a"}, RecommendedTools: []ToolRecommendation{{Tool: "x", Reason: "y"}}}
	}
	if err := valid().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(th *Thought){
		"no request":       func(th *Thought) { th.Request = "" },
		"long request":     func(th *Thought) { th.Request = strings.Repeat("x", MaxQueryTextBytes+1) },
		"long reasoning":   func(th *Thought) { th.Reasoning = strings.Repeat("x", MaxThoughtTextBytes+1) },
		"confidence":       func(th *Thought) { th.Confidence = 2 },
		"long entry":       func(th *Thought) { th.Uncertainties = []string{strings.Repeat("x", MaxListEntryBytes+1)} },
		"too many entries": func(th *Thought) { th.Constraints = make([]string, MaxListItems+1) },
		"unnamed tool":     func(th *Thought) { th.RecommendedTools[0].Tool = "" },
		"bad id":           func(th *Thought) { th.ID = NewID(PlanIDPrefix) },
	} {
		th := valid()
		change(th)
		if ErrorCode(th.Validate()) != EINVALID {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTaskValidate(t *testing.T) {
	valid := func() *Task {
		return &Task{Request: "r", Status: TaskRunning, Steps: []StepState{{StepID: "a", Status: StepSucceeded, Output: json.RawMessage(`[1]`)}}}
	}
	if err := valid().Validate(); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", MaxStepOutputBytes-2) + `"`)
	for name, change := range map[string]func(tk *Task){
		"no request":   func(tk *Task) { tk.Request = "" },
		"bad status":   func(tk *Task) { tk.Status = "done" },
		"bad step":     func(tk *Task) { tk.Steps[0].StepID = "A" },
		"two states":   func(tk *Task) { tk.Steps = append(tk.Steps, tk.Steps[0]) },
		"step status":  func(tk *Task) { tk.Steps[0].Status = "" },
		"attempts":     func(tk *Task) { tk.Steps[0].Attempts = -1 },
		"output json":  func(tk *Task) { tk.Steps[0].Output = json.RawMessage(`{`) },
		"output utf-8": func(tk *Task) { tk.Steps[0].Output = json.RawMessage("\"\xc3\"") },
		"output size": func(tk *Task) {
			tk.Steps[0].Output = json.RawMessage(`"` + strings.Repeat("x", MaxStepOutputBytes) + `"`)
		},
		"inputs":        func(tk *Task) { tk.Inputs = json.RawMessage(`[]`) },
		"repaired tool": func(tk *Task) { tk.Steps[0].RepairedTool = "no spaces" },
		"repaired args without tool": func(tk *Task) {
			tk.Steps[0].RepairedArguments = json.RawMessage(`{}`)
		},
		"repaired args not an object": func(tk *Task) {
			tk.Steps[0].RepairedTool, tk.Steps[0].RepairedArguments = "t", json.RawMessage(`[]`)
		},
		"repaired args size": func(tk *Task) {
			tk.Steps[0].RepairedTool = "t"
			tk.Steps[0].RepairedArguments = json.RawMessage(`{"a":"` + strings.Repeat("x", MaxStepArgumentsBytes) + `"}`)
		},
		"event size":   func(tk *Task) { tk.History = []TaskEvent{{Type: "x", Message: strings.Repeat("m", MaxTaskEventBytes)}} },
		"plan id":      func(tk *Task) { tk.PlanID = NewID(TaskIDPrefix) },
		"negative ver": func(tk *Task) { tk.Version = -1 },
		"whole too big": func(tk *Task) {
			tk.Steps = nil
			for i := range MaxTaskBytes/MaxStepOutputBytes + 1 {
				tk.Steps = append(tk.Steps, StepState{StepID: fmt.Sprint("s", i), Status: StepSucceeded, Output: big})
			}
		},
	} {
		tk := valid()
		change(tk)
		if ErrorCode(tk.Validate()) != EINVALID {
			t.Errorf("%s: accepted", name)
		}
	}
	tk := valid()
	tk.Status = ""
	if tk.Validate() != nil || ErrorCode(tk.ValidateUpdate()) != EINVALID {
		t.Error("an empty status must be valid to create, invalid to update")
	}
	tk.Status, tk.Version = TaskPaused, 0
	if ErrorCode(tk.ValidateUpdate()) != EINVALID {
		t.Error("version 0 accepted by ValidateUpdate")
	}
}

func TestTaskAddEvent(t *testing.T) {
	var tk Task
	for i := range MaxTaskHistory + 5 {
		tk.AddEvent(TaskEvent{Type: "e", Message: fmt.Sprint(i)})
	}
	if len(tk.History) != MaxTaskHistory || tk.History[0].Message != "5" || tk.History[MaxTaskHistory-1].Message != fmt.Sprint(MaxTaskHistory+4) {
		t.Errorf("history: %d events, first %q", len(tk.History), tk.History[0].Message)
	}
	tk.AddEvent(TaskEvent{Type: "long", StepID: "s", Message: strings.Repeat("é", MaxTaskEventBytes)})
	last := tk.History[len(tk.History)-1]
	if n := len(last.Type) + len(last.StepID) + len(last.Message); n > MaxTaskEventBytes || n < MaxTaskEventBytes-1 || !strings.HasPrefix(last.Message, "é") {
		t.Errorf("long event cut to %d bytes", n)
	}
	if err := tk.Validate(); ErrorCode(err) != EINVALID { // no request, but the events are fine
		t.Errorf("Validate: %v", err)
	}
	tk.Request = "r"
	if err := tk.Validate(); err != nil {
		t.Errorf("Validate after AddEvent: %v", err)
	}
}

func TestTaskStatusTerminal(t *testing.T) {
	var terminal []TaskStatus
	for _, s := range TaskStatuses {
		if s.Terminal() {
			terminal = append(terminal, s)
		}
	}
	if fmt.Sprint(terminal) != "[succeeded failed cancelled]" {
		t.Errorf("terminal statuses %v", terminal)
	}
}

func FuzzIsStepID(f *testing.F) {
	for _, s := range []string{"", "a", "s017", "A", "a b", "é", "a-b_c", strings.Repeat("x", 64), strings.Repeat("x", 65), "\x00", "z9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := IsStepID(id), StepIDPattern.MatchString(id); got != want {
			t.Errorf("IsStepID(%q) = %v; StepIDPattern says %v", id, got, want)
		}
	})
}
