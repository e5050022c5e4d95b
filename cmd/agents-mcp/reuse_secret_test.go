package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReusedPlanNeverCarriesAnotherRequestsSecret: the builtin planner
// reuses a plan for the next request of its family, taking the literal
// arguments that came from the old request from the new one. The server
// stores requests redacted, so a secret the old request gave is not text
// of the stored request: it looked like a constant of the plan and was
// sent again, with the next request, to the tool.
func TestReusedPlanNeverCarriesAnotherRequestsSecret(t *testing.T) {
	families := []benchFamily{{
		name:  "notes",
		slots: []benchSlot{{"note", []string{"note"}}},
		tools: []benchTool{{name: "post_note", description: "post a note to the board",
			params: []benchParam{{"note", "string", "what the note says"}}}},
	}}
	bs := startBenchServer(t, families, false)
	up := bs.ups["notes"]
	for _, request := range []string{`Post the note "the db password=hunter2 rotates"`, `Post the note "delta epsilon"`} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := bs.client.CallTool(ctx, &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"request": request}})
		cancel()
		if err != nil || out.IsError {
			t.Fatalf("%s: %v %s", request, err, textOf(out))
		}
		bs.settle(t)
	}
	var notes []string
	for _, c := range up.since(0) {
		notes = append(notes, c.args["note"].(string))
	}
	if !slices.Equal(notes, []string{"the db password=hunter2 rotates", "delta epsilon"}) {
		t.Errorf("notes posted %q; want the first request's, then the second's", notes)
	}
	if strings.Contains(strings.Join(notes[1:], " "), "hunter2") {
		t.Errorf("the second request sent the first one's secret")
	}
}
