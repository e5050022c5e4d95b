package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/ferrettest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childEnv makes the test binary act as agents-mcp: TestMain runs the
// command line after "--" instead of the tests. It lets a test kill a real
// server process with SIGKILL.
const childEnv = "AGENTS_MCP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		main2(args)
		return
	}
	code := m.Run()
	ferrettest.Cleanup()
	os.Exit(code)
}

// main2 is main with explicit arguments.
func main2(args []string) {
	os.Args = append([]string{"agents-mcp"}, args...)
	main()
}

// serverProcess is agents-mcp serve in a child process.
type serverProcess struct {
	cmd  *exec.Cmd
	base string
	logs *syncBuffer
}

func startServerProcess(t *testing.T, dataDir string, env ...string) *serverProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, logs: &syncBuffer{}}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.logs.Write(append(sc.Bytes(), '\n'))
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving" {
				addr <- rec.Addr
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start: %s", p.logs.String())
	}
	return p
}

func (p *serverProcess) client(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "persist-test", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.logs.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", name, res.Content[0].(*mcp.TextContent).Text)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// findInsight polls query_memory until the insight is found by meaning, as
// the vector index catches up asynchronously.
func findInsight(t *testing.T, cs *mcp.ClientSession, query, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := callTool(t, cs, "query_memory", map[string]any{"query": query, "kinds": []string{"insights"}})
		items, _ := out["items"].([]any)
		if len(items) > 0 && items[0].(map[string]any)["id"] == id && out["mode"] == "semantic" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("insight %s not found by query_memory: %v", id, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestInsightSurvivesKill9RightAfterTheCallReturned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir := t.TempDir()
	first := startServerProcess(t, dir)
	cs := first.client(t)
	out := callTool(t, cs, "store_insight", map[string]any{
		"text": "the billing upstream rejects requests without an idempotency key", "type": "pitfall",
	})
	id := out["insight"].(map[string]any)["id"].(string)
	// No grace: the process dies the moment the call has returned.
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	second := startServerProcess(t, dir)
	findInsight(t, second.client(t), "billing requests need an idempotency key", id)

	// A graceful restart keeps it too, and saves the vector index, so the
	// third start loads it rather than rebuilding it.
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.cmd.Wait(); err != nil {
		t.Fatalf("graceful stop: %v\n%s", err, second.logs.String())
	}
	third := startServerProcess(t, dir)
	findInsight(t, third.client(t), "idempotency key for billing", id)
	if !logsSoon(third.logs.String, `"status":"loaded"`) {
		t.Errorf("third start did not load the saved vector index:\n%s", third.logs.String())
	}

	// A damaged index file: set aside, rebuilt from the store.
	if err := third.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = third.cmd.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "vectors-*.hnsw"))
	if len(files) != 1 {
		t.Fatalf("index files: %v", files)
	}
	if err := os.WriteFile(files[0], []byte("AMCPHNSW\x01\x00\x00\x00 truncated"), 0o600); err != nil {
		t.Fatal(err)
	}
	fourth := startServerProcess(t, dir)
	findInsight(t, fourth.client(t), "billing idempotency", id)
	if !strings.Contains(fourth.logs.String(), "set aside") {
		t.Errorf("the corrupt index was not reported:\n%s", fourth.logs.String())
	}
	if aside, _ := filepath.Glob(files[0] + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("corrupt file not kept for inspection: %v", aside)
	}
}

func TestReindexRebuildsTheEmbeddedIndexWithProgress(t *testing.T) {
	dir := t.TempDir()
	p := startServerProcess(t, dir)
	cs := p.client(t)
	var ids []string
	for _, text := range []string{"rotate the staging credentials monthly", "archive logs older than ninety days"} {
		out := callTool(t, cs, "store_insight", map[string]any{"text": text})
		ids = append(ids, out["insight"].(map[string]any)["id"].(string))
	}
	// Every routed call feeds tool performance, off the call's path.
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := callTool(t, cs, "get_tool_performance", map[string]any{"tool": "store_insight"})
		tools, _ := out["tools"].([]any)
		if len(tools) == 1 && tools[0].(map[string]any)["calls"] == float64(2) && tools[0].(map[string]any)["successRate"] == float64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store_insight performance = %v, want 2 successful calls", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	var stderr syncBuffer
	if code := run(t.Context(), []string{"reindex", "--data-dir", dir}, envOf(nil), io.Discard, &stderr); code != 0 {
		t.Fatalf("reindex exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"reindex insights  2/2 (100%)", "reindex learnings 0/0", "reindex done"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("reindex output lacks %q:\n%s", want, stderr.String())
		}
	}
	again := startServerProcess(t, dir)
	if !logsSoon(again.logs.String, `"status":"loaded"`) {
		t.Errorf("the rebuilt index was not loaded:\n%s", again.logs.String())
	}
	findInsight(t, again.client(t), "archive old logs", ids[1])
}

// logsSoon reports whether logs() holds want within 15 s: serve is ready
// before its vector index has loaded (indexload.go), which it logs when
// the load ends.
func logsSoon(logs func() string, want string) bool {
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(logs(), want) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
