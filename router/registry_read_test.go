package router_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The read side of the registry keeps its contract with derived indexes:
// snapshots are sorted, an unchanged tool keeps its *RegisteredTool, a
// changed one gets a new one, and every change bumps the generation and
// signals a watch until the watch is stopped.
func TestRegistryReadSide(t *testing.T) {
	ctx := context.Background()
	up := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__b", `{"type":"object"}`), rawTool("up__a", personSchema)}}
	r := newRouterWith(t, up)
	changes, stop := r.WatchTools()

	gen, tools := r.ToolSnapshot()
	if len(tools) != 2 || tools[0].Tool.Name != "up__a" || tools[1].Tool.Name != "up__b" {
		t.Fatalf("snapshot %v, want up__a, up__b", tools)
	}
	if a := tools[0]; a.Source != "up" || string(a.InputSchema) != personSchema {
		t.Errorf("up__a: source %q schema %s", a.Source, a.InputSchema)
	}
	if g := r.ToolsGeneration(); g != gen {
		t.Errorf("generation %d, snapshot's %d", g, gen)
	}
	if got, ok := r.RegisteredTool("up__a"); !ok || got != tools[0] {
		t.Errorf("RegisteredTool(up__a) = %p, %v; want the snapshot's %p", got, ok, tools[0])
	}
	if _, ok := r.RegisteredTool("nope"); ok {
		t.Error("RegisteredTool found an unknown tool")
	}

	// Change up__b only.
	changed := rawTool("up__b", `{"type":"object"}`)
	changed.Description = "changed"
	up.setTools(rawTool("up__a", personSchema), changed)
	if err := r.Refresh(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after a change")
	}
	gen2, tools2 := r.ToolSnapshot()
	if gen2 == gen || r.ToolsGeneration() != gen2 {
		t.Errorf("generation %d after a change, was %d", gen2, gen)
	}
	if tools2[0] != tools[0] {
		t.Error("the unchanged up__a is a new *RegisteredTool")
	}
	if tools2[1] == tools[1] || tools2[1].Tool.Description != "changed" {
		t.Errorf("the changed up__b: %+v", tools2[1].Tool)
	}

	// A stopped watch is not signalled.
	stop()
	up.setTools(rawTool("up__a", personSchema))
	if err := r.Refresh(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Error("a stopped watch was signalled")
	default:
	}
	if _, tools3 := r.ToolSnapshot(); len(tools3) != 1 {
		t.Errorf("snapshot after removal: %d tools", len(tools3))
	}
}
