package toolsearch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

const widgetOutputSchema = `{"type":"object","properties":{"deleted":{"type":"integer"}},"required":["deleted"]}`

// newCatalogRouter registers the local tool "echo" (read-only, idempotent,
// titled through its annotations) and the upstream "up" with a destructive
// tool, an unannotated one and one that declares destructiveHint false.
func newCatalogRouter(t *testing.T) (*router.Router, *staticProvider) {
	t.Helper()
	l := localtools.New()
	err := localtools.Add(l, &mcp.Tool{
		Name:        "echo",
		Description: "Echo text back",
		Annotations: &mcp.ToolAnnotations{Title: "Echo", ReadOnlyHint: true, IdempotentHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, *echoOut, error) {
		return nil, &echoOut{Echo: in.Text}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	del := rawTool("up__delete_widgets", `{"type":"object","properties":{"color":{"type":"string"}}}`)
	del.Title = "Delete widgets"
	del.Description = "Delete every widget of a color"
	del.OutputSchema = json.RawMessage(widgetOutputSchema)
	del.Annotations = &mcp.ToolAnnotations{Title: "ignored: the tool's own title wins", DestructiveHint: new(true)}
	safe := rawTool("up__count_widgets", `{"type":"object"}`)
	safe.Annotations = &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true}
	up := &staticProvider{name: "up", tools: []*mcp.Tool{del, safe, rawTool("up__person", personSchema)}}
	return newRouterWith(t, l, up), up
}

// wireSchemas lists r's tools through a client session and returns the
// input and output schemas exactly as the client read them off the wire.
// (The client's side is logged: a message is logged there before the
// client sees it, on the server's side only after it was delivered.)
func wireSchemas(t *testing.T, r *router.Router) (input, output map[string]string) {
	t.Helper()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		log bytes.Buffer
	)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "catalog-test", Version: "1"}, nil).Connect(ctx, &mcp.LoggingTransport{Transport: ct, Writer: lockedWriter{&mu, &log}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	input, output = map[string]string{}, map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "read: ")
		if !ok {
			continue
		}
		var msg struct {
			Result struct {
				Tools []struct {
					Name         string          `json:"name"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil {
			continue
		}
		for _, tl := range msg.Result.Tools {
			input[tl.Name] = string(tl.InputSchema)
			output[tl.Name] = string(tl.OutputSchema)
		}
	}
	if len(input) == 0 {
		t.Fatalf("no tools/list answer in the wire log:\n%s", log.String())
	}
	return input, output
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func TestCatalogToolInfo(t *testing.T) {
	r, _ := newCatalogRouter(t)
	ctx := context.Background()
	var asked []string
	health := func(source string) string {
		asked = append(asked, source)
		if source == "up" {
			return "degraded"
		}
		return agentsmcp.HealthDown // never asked for local tools
	}
	var cat agentsmcp.ToolCatalog = toolsearch.NewCatalog(r, nil, health)

	tools, err := cat.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range tools {
		names = append(names, ti.Name)
	}
	if want := []string{"echo", "up__count_widgets", "up__delete_widgets", "up__person"}; !slices.Equal(names, want) {
		t.Fatalf("ListTools names = %q, want %q", names, want)
	}
	if !slices.Equal(asked, []string{"up"}) {
		t.Errorf("health asked for %q, want once for up", asked)
	}

	type flags struct {
		Source, Title, Health             string
		ReadOnly, Destructive, Idempotent bool
	}
	want := map[string]flags{
		"echo":               {Source: "local", Title: "Echo", Health: "ready", ReadOnly: true, Idempotent: true},
		"up__count_widgets":  {Source: "up", Health: "degraded", Idempotent: true},
		"up__delete_widgets": {Source: "up", Title: "Delete widgets", Health: "degraded", Destructive: true},
		"up__person":         {Source: "up", Health: "degraded"}, // no annotations: not claimed destructive
	}
	wireIn, wireOut := wireSchemas(t, r)
	for _, ti := range tools {
		got := flags{ti.Source, ti.Title, ti.Health, ti.ReadOnly, ti.Destructive, ti.Idempotent}
		if got != want[ti.Name] {
			t.Errorf("%s: %+v, want %+v", ti.Name, got, want[ti.Name])
		}
		if string(ti.InputSchema) != wireIn[ti.Name] {
			t.Errorf("%s input schema\n got %s\nwire %s", ti.Name, ti.InputSchema, wireIn[ti.Name])
		}
		if string(ti.OutputSchema) != wireOut[ti.Name] {
			t.Errorf("%s output schema\n got %s\nwire %s", ti.Name, ti.OutputSchema, wireOut[ti.Name])
		}
		one, err := cat.Tool(ctx, ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		oneJSON, _ := json.Marshal(one)
		listJSON, _ := json.Marshal(ti)
		if string(oneJSON) != string(listJSON) {
			t.Errorf("Tool(%s) = %s, ListTools has %s", ti.Name, oneJSON, listJSON)
		}
	}
	del, _ := cat.Tool(ctx, "up__delete_widgets")
	if string(del.OutputSchema) != widgetOutputSchema || string(del.InputSchema) != `{"type":"object","properties":{"color":{"type":"string"}}}` {
		t.Errorf("delete schemas = %s / %s, want the provider's bytes", del.InputSchema, del.OutputSchema)
	}
	person, _ := cat.Tool(ctx, "up__person")
	if string(person.InputSchema) != personSchema || person.OutputSchema != nil {
		t.Errorf("person schemas = %s / %s", person.InputSchema, person.OutputSchema)
	}

	// The schemas are copies: changing them leaves the router's alone.
	del.InputSchema[0] = 'X'
	if again, _ := cat.Tool(ctx, "up__delete_widgets"); again.InputSchema[0] != '{' {
		t.Error("a caller's change of a schema reached the router")
	}

	_, err = cat.Tool(ctx, "nope")
	if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Tool(nope) = %v, want ENOTFOUND", err)
	}
}

func TestCatalogHealthDefaults(t *testing.T) {
	r, _ := newCatalogRouter(t)
	ctx := context.Background()
	for name, health := range map[string]func(string) string{
		"nil health":     nil,
		"unknown source": func(string) string { return "" },
	} {
		tools, err := toolsearch.NewCatalog(r, nil, health).ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range tools {
			if ti.Health != agentsmcp.HealthReady {
				t.Errorf("%s: %s health = %q, want ready", name, ti.Name, ti.Health)
			}
		}
	}
	ti, err := toolsearch.NewCatalog(r, nil, func(string) string { return agentsmcp.HealthDown }).Tool(ctx, "up__person")
	if err != nil || ti.Health != agentsmcp.HealthDown {
		t.Errorf("down upstream: %+v, %v", ti, err)
	}
}

func TestCatalogSearchTools(t *testing.T) {
	r, up := newCatalogRouter(t)
	ctx := context.Background()
	index := toolsearch.NewIndex(r, toolsearch.Options{})
	defer index.Close()
	health := func(string) string { return "connecting" }

	for name, cat := range map[string]*toolsearch.Catalog{
		"index":    toolsearch.NewCatalog(r, index, health),
		"no index": toolsearch.NewCatalog(r, nil, health),
		// A nil *Index (a variable never set) is no ranker, not a panic.
		"nil *Index": toolsearch.NewCatalog(r, (*toolsearch.Index)(nil), health),
	} {
		t.Run(name, func(t *testing.T) {
			matches, err := cat.SearchTools(ctx, "delete widgets", 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(matches) == 0 || len(matches) > 2 {
				t.Fatalf("got %d matches, want 1 or 2", len(matches))
			}
			m := matches[0]
			if m.Name != "up__delete_widgets" || m.Source != "up" || !m.Destructive || m.Health != "connecting" ||
				m.Title != "Delete widgets" || string(m.OutputSchema) != widgetOutputSchema {
				t.Errorf("best match = %+v", m)
			}
			if m.Score <= 0 || !strings.Contains(m.Why, "delete") {
				t.Errorf("score %v why %q, want the ranking's", m.Score, m.Why)
			}
			for i := 1; i < len(matches); i++ {
				if matches[i].Score > matches[i-1].Score {
					t.Errorf("matches not best first: %v then %v", matches[i-1].Score, matches[i].Score)
				}
			}
			// Local tools are searched too.
			if local, _ := cat.SearchTools(ctx, "echo text", 0); len(local) == 0 || local[0].Name != "echo" || local[0].Health != "ready" {
				t.Errorf("search for echo = %+v", local)
			}
			if none, err := cat.SearchTools(ctx, "", 5); err != nil || none == nil || len(none) != 0 {
				t.Errorf("empty query = %v, %v; want an empty list", none, err)
			}
		})
	}

	// The catalog follows the router.
	up.setTools(rawTool("up__person", personSchema))
	if err := r.Refresh(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	cat := toolsearch.NewCatalog(r, index, nil)
	if _, err := cat.Tool(ctx, "up__delete_widgets"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("removed tool: err = %v", err)
	}
	if matches, _ := cat.SearchTools(ctx, "delete widgets", 5); slices.ContainsFunc(matches, func(m *agentsmcp.ToolMatch) bool { return m.Name == "up__delete_widgets" }) {
		t.Error("search still finds a removed tool")
	}
}
