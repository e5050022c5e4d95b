package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/router"
)

// fakeEmbedder is a test double of agentsmcp.Embedder: it embeds with the
// hash embedder, counts what it was given, and lets a test make a call slow
// or fail through hook (which sees every call before it is answered).
type fakeEmbedder struct {
	mu    sync.Mutex
	texts []string
	hook  func(ctx context.Context, texts []string) error
}

func (f *fakeEmbedder) ID() string      { return "fake-" + embed.Hash{}.ID() }
func (f *fakeEmbedder) Dimensions() int { return embed.Hash{}.Dimensions() }

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, texts); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	f.texts = append(f.texts, texts...)
	f.mu.Unlock()
	return embed.Hash{}.Embed(ctx, texts)
}

func (f *fakeEmbedder) setHook(h func(ctx context.Context, texts []string) error) {
	f.mu.Lock()
	f.hook = h
	f.mu.Unlock()
}

// embedded returns how many texts were embedded so far, not counting the
// given queries.
func (f *fakeEmbedder) embedded(queries ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.texts {
		if !slices.Contains(queries, t) {
			n++
		}
	}
	return n
}

// isQuery tells a query embedding (one text, from a search) from the batch
// embedding of tool texts; the tools in these tests are more than one.
func isQuery(texts []string) bool { return len(texts) == 1 }

// mutableProvider is a provider whose tools a test replaces, then calls
// Router.Refresh.
type mutableProvider struct {
	name  string
	mu    sync.Mutex
	tools []*mcp.Tool
}

func (p *mutableProvider) Name() string { return p.name }
func (p *mutableProvider) Tools(context.Context) ([]*mcp.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools, nil
}
func (p *mutableProvider) CallTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}
func (p *mutableProvider) set(tools ...*mcp.Tool) {
	p.mu.Lock()
	p.tools = tools
	p.mu.Unlock()
}

func tool(name, description string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func smallCatalog() []*mcp.Tool {
	return []*mcp.Tool{
		tool("fs__list_directory", "List the files in a directory"),
		tool("fs__read_file", "Read a file from disk"),
		tool("gh__create_issue", "Create an issue in a repository"),
		tool("chat__post_message", "Post a message to a channel"),
	}
}

func newSmallRouter(t *testing.T) (*router.Router, *mutableProvider) {
	t.Helper()
	p := &mutableProvider{name: "up"}
	p.set(smallCatalog()...)
	r := router.New(router.Options{})
	if err := r.AddProvider(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return r, p
}

func TestToolIndexHybridAndWhy(t *testing.T) {
	r, _ := newSmallRouter(t)
	x := NewIndex(r, Options{Embedder: &fakeEmbedder{}})
	defer x.Close()
	waitEmbedded(t, x)
	res := x.Search(context.Background(), "open a ticket in the repo", "all", 3)
	if res.Mode != ModeHybrid || res.Note != "" {
		t.Fatalf("mode %q note %q, want hybrid", res.Mode, res.Note)
	}
	if len(res.Tools) == 0 || res.Tools[0].Name != "gh__create_issue" {
		t.Fatalf("results %+v, want gh__create_issue first", res.Tools)
	}
	m := res.Tools[0]
	if m.Source != "up" || m.Description == "" || m.Score <= 0 {
		t.Errorf("match %+v lacks source, description or score", m)
	}
	for _, want := range []string{"name: ticket→issue", "description: ticket→issue", "vector similarity"} {
		if !strings.Contains(m.Why, want) {
			t.Errorf("why %q lacks %q", m.Why, want)
		}
	}
}

func TestToolIndexQueryEmbeddingFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(ctx context.Context, texts []string) error
		note string
	}{
		{"fails", func(_ context.Context, texts []string) error {
			if isQuery(texts) {
				return errors.New("embedding service says 503: secret detail")
			}
			return nil
		}, "query embedding failed"},
		{"too slow", func(ctx context.Context, texts []string) error {
			if isQuery(texts) {
				<-ctx.Done() // a slow embedder that honours its context
				return ctx.Err()
			}
			return nil
		}, "timed out after 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newSmallRouter(t)
			f := &fakeEmbedder{}
			x := NewIndex(r, Options{Embedder: f, QueryTimeout: 50 * time.Millisecond})
			defer x.Close()
			waitEmbedded(t, x)
			f.setHook(tc.hook)
			start := time.Now()
			res := x.Search(context.Background(), "list the files in a folder", "all", 3)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("search took %s", d)
			}
			if res.Mode != ModeLexical || !strings.Contains(res.Note, tc.note) || strings.Contains(res.Note, "secret") {
				t.Errorf("mode %q note %q, want lexical with %q and no detail", res.Mode, res.Note, tc.note)
			}
			if len(res.Tools) == 0 || res.Tools[0].Name != "fs__list_directory" {
				t.Errorf("results %+v, want fs__list_directory first", res.Tools)
			}
			if strings.Contains(res.Tools[0].Why, "vector") {
				t.Errorf("lexical why %q mentions a vector", res.Tools[0].Why)
			}
		})
	}
}

// A query embedder that ignores its context must not hold the search past
// the timeout either.
func TestToolIndexQueryEmbedderIgnoringContext(t *testing.T) {
	r, _ := newSmallRouter(t)
	f := &fakeEmbedder{}
	x := NewIndex(r, Options{Embedder: f, QueryTimeout: 20 * time.Millisecond})
	defer x.Close()
	waitEmbedded(t, x)
	release := make(chan struct{})
	defer close(release)
	f.setHook(func(_ context.Context, texts []string) error {
		if isQuery(texts) {
			<-release
		}
		return nil
	})
	res := x.Search(context.Background(), "read a file", "all", 3)
	if res.Mode != ModeLexical || !strings.Contains(res.Note, "timed out") {
		t.Fatalf("mode %q note %q", res.Mode, res.Note)
	}
}

func TestToolIndexLexicalUntilToolsEmbedded(t *testing.T) {
	r, _ := newSmallRouter(t)
	f := &fakeEmbedder{}
	gate := make(chan struct{})
	f.setHook(func(ctx context.Context, texts []string) error {
		if !isQuery(texts) {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	x := NewIndex(r, Options{Embedder: f})
	defer x.Close()
	res := x.Search(context.Background(), "post a message", "all", 3)
	if res.Mode != ModeLexical || !strings.Contains(res.Note, "not ready (4 of 4 tools missing)") {
		t.Fatalf("before embedding: mode %q note %q", res.Mode, res.Note)
	}
	if len(res.Tools) == 0 || res.Tools[0].Name != "chat__post_message" {
		t.Fatalf("lexical results %+v", res.Tools)
	}
	close(gate)
	waitEmbedded(t, x)
	if res := x.Search(context.Background(), "post a message", "all", 3); res.Mode != ModeHybrid {
		t.Fatalf("after embedding: mode %q note %q", res.Mode, res.Note)
	}
}

func TestToolIndexEmbedsEachToolOnce(t *testing.T) {
	r, p := newSmallRouter(t)
	f := &fakeEmbedder{}
	x := NewIndex(r, Options{Embedder: f})
	defer x.Close()
	waitEmbedded(t, x)
	if n := f.embedded(); n != 4 {
		t.Fatalf("embedded %d texts for 4 tools", n)
	}

	// One tool changes, one is new, one is gone, two are as they were.
	tools := smallCatalog()
	tools[1] = tool("fs__read_file", "Read the whole text of a file")
	tools[3] = tool("chat__add_reaction", "Add an emoji reaction to a message")
	p.set(tools...)
	if err := r.Refresh(context.Background(), "up"); err != nil {
		t.Fatal(err)
	}
	// The lexical index follows at once, before any embedding.
	if res := x.Search(context.Background(), "emoji", "all", 1); len(res.Tools) != 1 || res.Tools[0].Name != "chat__add_reaction" {
		t.Fatalf("new tool not found: %+v", res)
	}
	waitEmbedded(t, x)
	if n := f.embedded("emoji"); n != 6 {
		t.Errorf("embedded %d texts in all, want 6 (4 + the changed and the new tool)", n)
	}
	x.mu.Lock()
	cached := len(x.vectors)
	x.mu.Unlock()
	if cached != 4 {
		t.Errorf("%d cached vectors, want 4 (the gone and the old version dropped)", cached)
	}

	// A refresh that changes nothing embeds nothing.
	if err := r.Refresh(context.Background(), "up"); err != nil {
		t.Fatal(err)
	}
	r.RemoveProvider("nobody")
	time.Sleep(20 * time.Millisecond)
	if n := f.embedded("emoji"); n != 6 {
		t.Errorf("embedded %d texts after a no-op refresh, want 6", n)
	}
}

func TestToolIndexRetriesFailedToolEmbedding(t *testing.T) {
	r, _ := newSmallRouter(t)
	f := &fakeEmbedder{}
	var mu sync.Mutex
	fail := true
	f.setHook(func(_ context.Context, texts []string) error {
		mu.Lock()
		defer mu.Unlock()
		if fail && !isQuery(texts) {
			fail = false
			return errors.New("embedding service unavailable")
		}
		return nil
	})
	x := NewIndex(r, Options{Embedder: f})
	defer x.Close()
	waitEmbedded(t, x) // the retry after 1s succeeds
	if res := x.Search(context.Background(), "read a file", "all", 1); res.Mode != ModeHybrid {
		t.Fatalf("mode %q note %q", res.Mode, res.Note)
	}
}

// watchCounter is a router as the index's Registry, counting the watches
// of its tool set that are open.
type watchCounter struct {
	*router.Router
	open atomic.Int32
}

func (w *watchCounter) WatchTools() (<-chan struct{}, func()) {
	changes, stop := w.Router.WatchTools()
	w.open.Add(1)
	var once sync.Once
	return changes, func() {
		once.Do(func() { w.open.Add(-1) })
		stop()
	}
}

func TestToolIndexCloseStopsEmbedding(t *testing.T) {
	r, _ := newSmallRouter(t)
	reg := &watchCounter{Router: r}
	f := &fakeEmbedder{}
	started := make(chan struct{})
	var once sync.Once
	f.setHook(func(ctx context.Context, texts []string) error {
		once.Do(func() { close(started) })
		<-ctx.Done() // blocks until Close cancels
		return ctx.Err()
	})
	x := NewIndex(reg, Options{Embedder: f})
	<-started
	done := make(chan struct{})
	go func() {
		x.Close()
		x.Close() // idempotent
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the embedding goroutine")
	}
	if watchers := reg.open.Load(); watchers != 0 {
		t.Errorf("%d watches of the router left open after Close", watchers)
	}
}

func TestToolIndexScope(t *testing.T) {
	r, _ := newSmallRouter(t)
	local := localtools.New()
	x := NewIndex(r, Options{})
	defer x.Close()
	if err := AddSearchTools(local, x); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(context.Background(), local); err != nil {
		t.Fatal(err)
	}
	for scope, want := range map[string]string{"local": "search_tools", "remote": "fs__list_directory", "all": "search_tools"} {
		res := x.Search(context.Background(), "search for a tool that lists files", scope, 10)
		if len(res.Tools) == 0 || res.Tools[0].Name != want {
			t.Errorf("scope %s: %v, want %s first", scope, matchNames(res.Tools), want)
		}
		for _, m := range res.Tools {
			if !inScope(scope, m.Source) {
				t.Errorf("scope %s: %s from %s", scope, m.Name, m.Source)
			}
		}
	}
}

// search_tools answers through MCP in lexical mode, with a note and no
// error, when the query cannot be embedded.
func TestSearchToolsCallWithFailingEmbedder(t *testing.T) {
	ctx := context.Background()
	r, _ := newSmallRouter(t)
	f := &fakeEmbedder{}
	local := localtools.New()
	x := NewIndex(r, Options{Embedder: f, QueryTimeout: 100 * time.Millisecond})
	defer x.Close()
	if err := AddSearchTools(local, x); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, x)
	f.setHook(func(_ context.Context, texts []string) error {
		if isQuery(texts) {
			return errors.New("boom")
		}
		return nil
	})

	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"query": "send a chat message", "limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	var got Result
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Mode != ModeLexical || got.Note == "" || len(got.Tools) == 0 || got.Tools[0].Name != "chat__post_message" || got.Tools[0].Why == "" {
		t.Fatalf("structured result %s", data)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "why: ") || !strings.Contains(text, "Ranking: lexical (query embedding failed") {
		t.Errorf("text result %q", text)
	}
}

// Searches run while the tool set changes and tools are embedded (run with
// -race).
func TestToolIndexConcurrent(t *testing.T) {
	r, p := newSmallRouter(t)
	x := NewIndex(r, Options{Embedder: &fakeEmbedder{}})
	defer x.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				res := x.Search(context.Background(), fmt.Sprintf("read file %d", i), "all", 5)
				if len(res.Tools) == 0 {
					t.Errorf("goroutine %d: no result", g)
					return
				}
			}
		})
	}
	for i := range 20 {
		tools := smallCatalog()
		tools = append(tools, tool(fmt.Sprintf("up__extra_%d", i), "An extra tool"))
		p.set(tools...)
		if err := r.Refresh(context.Background(), "up"); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	waitEmbedded(t, x)
}
