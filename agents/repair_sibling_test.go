package agents_test

import (
	"context"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
)

// TestRepairTakesTheFailedToolsSibling: the failed tool's upstream has
// another tool for the same need, worded like the failed tool but not
// like the request ("every line of a song, as sung"), and a third for
// another need. The search for the sub-goal finds neither, and the
// sibling's parameter ("track") is not the failed one's ("song"): the
// value would move by its type alone. The repair takes the sibling worded
// like the failed tool and asks for its value, as a first plan of that
// tool would, instead of ending with replacement_not_found; the other
// sibling is never called.
func TestRepairTakesTheFailedToolsSibling(t *testing.T) {
	h := newRepairHarnessNamed(t, "music",
		repairTool{name: "song_lyrics", description: "the lyrics of a song", param: "song", fails: true},
		repairTool{name: "sung_verses", description: "every line of a song, as sung", param: "track"},
		repairTool{name: "artist_biography", description: "the life story of a musician", param: "artist"},
	)
	plan, task := h.run("Show the lyrics of Yesterday", "Yesterday")
	if plan.Steps[0].Tool != "music__song_lyrics" {
		t.Fatalf("the plan uses %s; the test needs music__song_lyrics first", plan.Steps[0].Tool)
	}
	s := task.Steps[0]
	if why := replacementNotFound(task); why != "" || s.RepairedTool != "music__sung_verses" || s.Status != agentsmcp.StepWaitingInput || !strings.Contains(s.Error, "track") {
		t.Fatalf("task %s, step %+v, replacement_not_found %q; want it repaired with music__sung_verses, asking for track", task.Status, s, why)
	}
	task = h.resumeWith(task, `{"track":"Yesterday"}`)
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("after the answer: task %s: %s", task.Status, task.Error)
	}
	if got := h.up.callsOf("sung_verses"); len(got) != 1 || got[0] != "Yesterday" {
		t.Errorf("calls of the sibling: %q; want one with the track the user gave", got)
	}
	if got := h.up.callsOf("artist_biography"); len(got) != 0 {
		t.Errorf("the sibling of another need was called: %q", got)
	}
}

// TestRepairNeverLandsOnAMetaTool: the request shares a word with one of
// the server's own tools ("tasks" and get_similar_tasks), which takes any
// text and would "succeed" with the request as its query. The failed
// upstream tool is not replaced by it: the step fails with
// replacement_not_found, which names it and why.
func TestRepairNeverLandsOnAMetaTool(t *testing.T) {
	h := newRepairHarnessWith(t, "tracker", true,
		repairTool{name: "project_tasks", description: "open tasks of a project", param: "project", fails: true},
	)
	plan, task := h.run("List the open tasks of project Apollo", "Apollo")
	if plan.Steps[0].Tool != "tracker__project_tasks" {
		t.Fatalf("the plan uses %s; the test needs tracker__project_tasks first", plan.Steps[0].Tool)
	}
	for _, s := range task.Steps {
		if s.RepairedTool != "" {
			t.Fatalf("step %s repaired with %s; want no replacement (history %+v)", s.StepID, s.RepairedTool, task.History)
		}
	}
	why := replacementNotFound(task)
	if task.Status != agentsmcp.TaskFailed || !strings.Contains(why, "get_similar_tasks: one of this server's own tools") {
		t.Fatalf("task %s, replacement_not_found %q; want failed, naming get_similar_tasks as one of the server's own tools", task.Status, why)
	}
}

// TestReplacementNotFoundNamesTheClosestTools: nothing can take the
// request, even with the user's help. replacement_not_found names the
// closest tools and why each was turned down: the sibling worded unlike
// the failed tool (another need of its upstream), and the server's own
// tool that shares the request's word.
func TestReplacementNotFoundNamesTheClosestTools(t *testing.T) {
	h := newRepairHarnessWith(t, "tracker", true,
		repairTool{name: "project_tasks", description: "open tasks of a project", param: "project", fails: true},
		repairTool{name: "billing_rates", description: "hourly rates of a consultant", param: "consultant"},
	)
	_, task := h.run("List the open tasks of project Apollo", "Apollo")
	why := replacementNotFound(task)
	t.Log(why)
	if task.Status != agentsmcp.TaskFailed {
		t.Fatalf("task %s; want failed (history %+v)", task.Status, task.History)
	}
	for _, want := range []string{
		"closest:",
		"tracker__billing_rates: another tool of its upstream, not worded like the failed tool",
		"get_similar_tasks: one of this server's own tools",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("replacement_not_found %q does not say %q", why, want)
		}
	}
	if n := len(h.up.callsOf("billing_rates")); n != 0 {
		t.Errorf("billing_rates was called %d time(s)", n)
	}
}

// TestRepairTakesASiblingTheSearchFoundByItsServer: the request names the
// upstream ("music"), so the search for the sub-goal finds the sibling by
// its server's name, though its own words share none with the request.
// Worded like the failed tool, it is still the sibling that serves the
// same need, and the repair asks for the two values it lacks.
func TestRepairTakesASiblingTheSearchFoundByItsServer(t *testing.T) {
	h := newRepairHarnessNamed(t, "music",
		repairTool{name: "song_lyrics", description: "the lyrics of a song in a language", param: "song", extra: "language", fails: true},
		repairTool{name: "sung_verses", description: "every line of a song, as sung in a tongue", param: "track", extra: "tongue"},
	)
	plan, task := h.run("Show the music lyrics of 'Yesterday' in Greek", "Greek")
	if plan.Steps[0].Tool != "music__song_lyrics" {
		t.Fatalf("the plan uses %s; the test needs music__song_lyrics first", plan.Steps[0].Tool)
	}
	s := task.Steps[0]
	if why := replacementNotFound(task); why != "" || s.RepairedTool != "music__sung_verses" || s.Status != agentsmcp.StepWaitingInput {
		t.Fatalf("task %s, step %+v, replacement_not_found %q; want it repaired with music__sung_verses, asking for what it lacks", task.Status, s, why)
	}
	task = h.resumeWith(task, `{"track":"Yesterday","tongue":"Greek"}`)
	if got := h.up.callsOf("sung_verses"); task.Status != agentsmcp.TaskSucceeded || len(got) != 1 || got[0] != "Yesterday Greek" {
		t.Fatalf("after the answer: task %s (%s), calls of the sibling %q; want one with the values the user gave", task.Status, task.Error, got)
	}
}

// TestRepairPrefersTheFamilysServingTool: two tools could replace the
// failed one and both take its city: one worded like the request, never
// tried, and one worded apart that served the request's family before.
// The family's evidence outweighs the words: the repair takes the tool
// that served it.
func TestRepairPrefersTheFamilysServingTool(t *testing.T) {
	h := newRepairHarnessNamed(t, "meteo",
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "weather_conditions", description: "weather conditions", param: "city"},
		repairTool{name: "sky_report", description: "sky cover and readings, now", param: "city"},
	)
	ctx := context.Background()
	const lima = "What is the weather in Lima today?"
	if err := h.db.CreateLearning(ctx, &agentsmcp.Learning{Query: lima, Goal: agents.FamilyOf(lima), Steps: []string{"meteo__sky_report"},
		Tools: []string{"meteo__sky_report"}, Sources: []string{"meteo"}, Outcome: agentsmcp.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	plan, task := h.run("What is the weather in Paris today?", "Paris")
	if plan.Steps[0].Tool != "meteo__current_weather" {
		t.Fatalf("the plan uses %s; the test needs meteo__current_weather first", plan.Steps[0].Tool)
	}
	if s := task.Steps[0]; s.RepairedTool != "meteo__sky_report" || task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s, step repaired with %q; want it repaired with the family's tool meteo__sky_report (history %+v)", task.Status, s.RepairedTool, task.History)
	}
	if got := h.up.callsOf("weather_conditions"); len(got) != 0 {
		t.Errorf("the tool the family never used was called: %q", got)
	}
}
