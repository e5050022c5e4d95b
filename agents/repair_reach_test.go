package agents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
)

// replacementNotFound is the message of the task's replacement_not_found
// event, or "".
func replacementNotFound(task *agentsmcp.Task) string {
	for _, e := range task.History {
		if e.Type == "replacement_not_found" {
			return e.Message
		}
	}
	return ""
}

// resumeWith answers a paused task's inputs and waits for it.
func (h *repairHarness) resumeWith(task *agentsmcp.Task, inputs string) *agentsmcp.Task {
	h.t.Helper()
	if _, err := h.ex.Resume(context.Background(), task.ID, agents.ResumeRequest{Inputs: json.RawMessage(inputs)}, nil); err != nil {
		h.t.Fatal(err)
	}
	return h.wait(task.ID)
}

// TestRepairAsksForTheOneValueMissing: the only other tool for the need
// takes none of the failed call's values (it wants a station id, the
// failed call had a city and units) and the request does not give it. The repair
// asks the user for the station id, as a first plan would, instead of
// ending the step with replacement_not_found; answered, the task succeeds
// with the value the user gave, at the upstream.
func TestRepairAsksForTheOneValueMissing(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", extra: "units", fails: true},
		repairTool{name: "station_report", description: "the weather report of a weather station", param: "station_id"},
	)
	plan, task := h.run("What is the weather in Paris today?", "metric")
	if plan.Steps[0].Tool != failingWeather {
		t.Fatalf("the plan uses %s; the test needs %s first", plan.Steps[0].Tool, failingWeather)
	}
	if why := replacementNotFound(task); why != "" || task.Status != agentsmcp.TaskPaused {
		t.Fatalf("task %s (%s), replacement_not_found %q; want it paused asking for the station id (history %+v)", task.Status, task.Error, why, task.History)
	}
	s := task.Steps[0]
	if s.RepairedTool != "weather__station_report" || s.Status != agentsmcp.StepWaitingInput || !strings.Contains(s.Error, "station_id") {
		t.Fatalf("step %+v; want it repaired with weather__station_report and waiting for station_id", s)
	}
	task = h.resumeWith(task, `{"station_id":"LFPG-7"}`)
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("after the answer: task %s: %s", task.Status, task.Error)
	}
	if got := h.up.callsOf("station_report"); len(got) != 1 || got[0] != "LFPG-7" {
		t.Errorf("calls of the replacement: %q; want one with the station the user gave", got)
	}
}

// TestRepairTakesAToolThatServedTheFamily: the tool that served the
// request's family before shares no word with the request (the search
// does not find it) and takes none of the failed call's values; found by
// its upstream alone it would not be a replacement. As the family's tool
// it is, and the repair asks for the value it needs.
func TestRepairTakesAToolThatServedTheFamily(t *testing.T) {
	h := newRepairHarnessNamed(t, "meteo",
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", extra: "units", fails: true},
		repairTool{name: "sky_report", description: "sky cover and readings, now", param: "station_id"},
	)
	ctx := context.Background()
	const lima = "What is the weather in Lima today?"
	if err := h.db.CreateLearning(ctx, &agentsmcp.Learning{Query: lima, Goal: agents.FamilyOf(lima), Steps: []string{"meteo__sky_report"},
		Tools: []string{"meteo__sky_report"}, Sources: []string{"meteo"}, Outcome: agentsmcp.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	plan, task := h.run("What is the weather in Paris today?", "metric")
	if plan.Steps[0].Tool != "meteo__current_weather" {
		t.Fatalf("the plan uses %s; the test needs meteo__current_weather first", plan.Steps[0].Tool)
	}
	if why := replacementNotFound(task); why != "" || task.Steps[0].RepairedTool != "meteo__sky_report" || task.Steps[0].Status != agentsmcp.StepWaitingInput {
		t.Fatalf("task %s, step %+v, replacement_not_found %q; want it repaired with the family's tool, asking for station_id", task.Status, task.Steps[0], why)
	}
	task = h.resumeWith(task, `{"station_id":"SPJC"}`)
	if task.Status != agentsmcp.TaskSucceeded || len(h.up.callsOf("sky_report")) != 1 || h.up.callsOf("sky_report")[0] != "SPJC" {
		t.Fatalf("after the answer: task %s (%s), calls %q", task.Status, task.Error, h.up.callsOf("sky_report"))
	}
}

// TestRepairNamesTheClosestToolsAndWhy: no tool can take the request even
// with the user's help: one removes where the request reads, one writes,
// one is only a tool of the same upstream. The
// step fails with replacement_not_found, whose message names each and why
// it was turned down.
func TestRepairNamesTheClosestToolsAndWhy(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "Show the weather in a city today: the current weather of a city", param: "city", extra: "units", fails: true},
		repairTool{name: "delete_weather_station", description: "delete a weather station", param: "station_id"},
		repairTool{name: "record_weather_observation", description: "record a weather observation of a station", param: "station_id"},
		repairTool{name: "list_networks", description: "networks of stations", param: "network"},
	)
	plan, task := h.run("Show the weather in Paris today", "metric")
	if plan.Steps[0].Tool != failingWeather {
		t.Fatalf("the plan uses %s; the test needs %s first", plan.Steps[0].Tool, failingWeather)
	}
	if task.Status != agentsmcp.TaskFailed {
		t.Fatalf("task %s; want failed (history %+v)", task.Status, task.History)
	}
	why := replacementNotFound(task)
	t.Log(why)
	for _, want := range []string{
		"closest:",
		"weather__delete_weather_station: it removes, and the request asks for a tool that reads",
		"weather__record_weather_observation: it writes, and the request asks for a tool that reads",
		"weather__list_networks: its name and description share no word with the request but a verb",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("replacement_not_found %q does not say %q", why, want)
		}
	}
	for _, tool := range []string{"delete_weather_station", "record_weather_observation", "list_networks"} {
		if n := len(h.up.callsOf(tool)); n != 0 {
			t.Errorf("%s was called %d time(s)", tool, n)
		}
	}
}

// TestRepairNamesOnlyToolsTheCreatorMayUse: the closest tools a
// replacement_not_found names are tools the task's creator may call; one
// outside its allowlist is neither chosen nor named.
func TestRepairNamesOnlyToolsTheCreatorMayUse(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "Show the weather in a city today: the current weather of a city", param: "city", extra: "units", fails: true},
		repairTool{name: "delete_weather_station", description: "delete a weather station", param: "station_id"},
		repairTool{name: "station_report", description: "the weather report of a weather station", param: "station_id"},
	)
	ctx := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "key:0123456789ab", Scopes: agentsmcp.Scopes,
		Tools: []string{failingWeather, "weather__delete_weather_station"}})
	_, task := h.runAs(ctx, "Show the weather in Paris today", "metric")
	why := replacementNotFound(task)
	if task.Status != agentsmcp.TaskFailed || !strings.Contains(why, "weather__delete_weather_station") {
		t.Fatalf("task %s, replacement_not_found %q; want failed, naming the tool the creator may use", task.Status, why)
	}
	if strings.Contains(why, "station_report") || len(h.up.callsOf("station_report")) != 0 {
		t.Errorf("replacement_not_found %q names (or the task called) a tool outside the creator's allowlist", why)
	}
}
