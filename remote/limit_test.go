package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router"
)

// hugeUpstream is a real HTTP server that speaks just enough of MCP's
// streamable HTTP (2025-11-25) to be an upstream, and answers a tools/call
// of "huge" with a text result of size bytes, written in chunks with a
// pause between them (an upstream slowly streaming a 200 MiB answer), as
// JSON or as an event stream. It counts what it wrote of such answers and
// notes when a write failed: the reader closed the connection. "small"
// answers at once. Nothing in it reads the answers: it is the upstream
// under attack, not a test double of agents-mcp.
type hugeUpstream struct {
	size    int64
	chunk   int
	pause   time.Duration
	sse     bool
	declare bool // a JSON answer says its length (Content-Length)

	written     atomic.Int64 // bytes of huge answers written
	initialized atomic.Int32 // initialize requests: one per session
	closed      chan time.Time
}

func newHugeUpstream(t *testing.T, size int64, sse bool) (*hugeUpstream, *httpUpstream) {
	h := &hugeUpstream{size: size, chunk: 256 << 10, pause: time.Millisecond, sse: sse, closed: make(chan time.Time, 16)}
	return h, serveHTTP(t, func() http.Handler { return h })
}

func (h *hugeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &msg) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch {
	case msg.Method == "initialize":
		h.initialized.Add(1)
		w.Header().Set("Mcp-Session-Id", "huge-session")
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"huge","version":"1"}}`)
	case len(msg.ID) == 0:
		w.WriteHeader(http.StatusAccepted) // notifications
	case msg.Method == "tools/list":
		answer(`{"tools":[{"name":"huge","inputSchema":{"type":"object"}},{"name":"small","inputSchema":{"type":"object"}}]}`)
	case msg.Method == "ping":
		answer(`{}`)
	case msg.Method == "tools/call" && msg.Params.Name == "small":
		answer(`{"content":[{"type":"text","text":"small answer"}]}`)
	case msg.Method == "tools/call" && msg.Params.Name == "huge":
		h.stream(w, msg.ID)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
	}
}

// stream writes the huge answer, chunk by chunk, until it is whole or a
// write fails.
func (h *hugeUpstream) stream(w http.ResponseWriter, id json.RawMessage) {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	tail := `"}]}}`
	if h.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		head, tail = "event: message\ndata: "+head, tail+"\n\n"
	} else {
		w.Header().Set("Content-Type", "application/json")
		if h.declare {
			w.Header().Set("Content-Length", fmt.Sprint(int64(len(head))+h.size+int64(len(tail))))
		}
	}
	rc := http.NewResponseController(w)
	write := func(p []byte) bool {
		n, err := w.Write(p)
		h.written.Add(int64(n))
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			select {
			case h.closed <- time.Now():
			default:
			}
			return false
		}
		return true
	}
	if !write([]byte(head)) {
		return
	}
	chunk := []byte(strings.Repeat("x", h.chunk))
	for left := h.size; left > 0; left -= int64(len(chunk)) {
		if left < int64(len(chunk)) {
			chunk = chunk[:left]
		}
		if !write(chunk) {
			return
		}
		time.Sleep(h.pause)
	}
	write([]byte(tail))
}

// heapPeak samples the heap while f runs and returns the most it grew
// above what it was before.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return peak.Load()
}

const (
	mib = 1 << 20
	// socketSlack is what an upstream may write past what was read: the
	// kernel's socket buffers on loopback and the readers' buffers.
	socketSlack = 12 * mib
)

// TestOversizedAnswersAreRefusedOnEveryPath: an upstream streaming a
// 200 MiB answer is refused at the bound (the default, 16 MiB) on the path
// of callers that want the answer decoded (in-process calls, the REST
// bridge, callers of 2026-07-28: go-sdk's client) and on the raw path of a
// 2025 session, for an answer as JSON and as an event stream: the call
// fails with a JSON-RPC error that names the limit, the upstream gets to
// write little more than the bound before its connection is closed, the
// heap does not grow by the answer, and the session goes on (the next call
// works, without a new initialize).
func TestOversizedAnswersAreRefusedOnEveryPath(t *testing.T) {
	const size = 200 * mib
	for _, sse := range []bool{false, true} {
		for _, raw := range []bool{false, true} {
			name := fmt.Sprintf("sse=%v/raw=%v", sse, raw)
			t.Run(name, func(t *testing.T) {
				h, hs := newHugeUpstream(t, size, sse)
				e := newEnv(t, fastOptions())
				cfg := streamableConfig("big", hs.URL())
				cfg.ProtocolVersion = "2025-11-25"
				cfg.Timeout = 30 * time.Second
				e.add(cfg)
				var err error
				var res *mcp.CallToolResult
				grew := heapPeak(func() {
					if raw {
						// A 2025 session's call through the router: the raw path.
						cs := e.httpCaller(nil, callerVersion)
						res, err = cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "big__huge", Arguments: map[string]any{}})
					} else {
						u, _ := e.pool.get("big")
						res, err = u.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "big__huge", Arguments: json.RawMessage(`{}`)}})
					}
				})
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != CodeResultTooLarge ||
					!strings.Contains(rpcErr.Message, "larger than 16777216 bytes") || !strings.Contains(rpcErr.Message, "limits.max_result_bytes") {
					t.Fatalf("an answer of 200 MiB: %v (result %v), want a JSON-RPC error %d naming the limit", err, res != nil, CodeResultTooLarge)
				}
				select {
				case <-h.closed:
				case <-time.After(5 * time.Second):
					t.Errorf("the upstream's connection was not closed (it wrote %d bytes)", h.written.Load())
				}
				if w := h.written.Load(); w > DefaultMaxResultBytes+socketSlack {
					t.Errorf("the upstream wrote %d MiB of its answer before it was cut, want at most %d MiB", w/mib, (DefaultMaxResultBytes+socketSlack)/mib)
				}
				t.Logf("the heap grew by at most %d MiB; the upstream wrote %d MiB", grew/mib, h.written.Load()/mib)
				// Reading stays within a few times the bound (the answer's
				// bytes as read, go-sdk's copy of an event, garbage not yet
				// collected), never the answer's 200 MiB.
				if grew > 5*DefaultMaxResultBytes+16*mib {
					t.Errorf("the heap grew by %d MiB during the call", grew/mib)
				}
				u, _ := e.pool.get("big")
				small, err := u.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "big__small", Arguments: json.RawMessage(`{}`)}})
				if err != nil || resultText(small) != "small answer" {
					t.Errorf("the next call: %v %v", resultText(small), err)
				}
				if n := h.initialized.Load(); n != 1 {
					t.Errorf("%d initialize requests: the session did not survive the refusal", n)
				}
			})
		}
	}
}

// TestTimedOutCallStopsReading: an upstream that streams an answer slowly
// (a few hundred KiB a second, never past the bound) is cut off when the
// call ends: after the caller's timeout the upstream sees its connection
// closed within the drain grace, and the session goes on.
func TestTimedOutCallStopsReading(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			h, hs := newHugeUpstream(t, 200*mib, sse)
			h.chunk, h.pause = 16<<10, 50*time.Millisecond
			e := newEnv(t, fastOptions())
			cfg := streamableConfig("slow", hs.URL())
			cfg.ProtocolVersion = "2025-11-25"
			e.add(cfg)
			u, _ := e.pool.get("slow")
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := u.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "slow__huge", Arguments: json.RawMessage(`{}`)}})
			ended := time.Now()
			if err == nil {
				t.Fatal("the call did not time out")
			}
			select {
			case at := <-h.closed:
				if d := at.Sub(ended); d > drainGrace+2*time.Second {
					t.Errorf("the upstream's connection was closed %s after the call ended", d)
				}
			case <-time.After(drainGrace + 5*time.Second):
				t.Fatalf("the upstream's connection is still open %s after the call ended (it wrote %d bytes)", time.Since(ended), h.written.Load())
			}
			small, err := u.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "slow__small", Arguments: json.RawMessage(`{}`)}})
			if err != nil || resultText(small) != "small answer" {
				t.Errorf("the next call: %v %v", resultText(small), err)
			}
			if n := h.initialized.Load(); n != 1 {
				t.Errorf("%d initialize requests: the session did not survive the timed-out call", n)
			}
		})
	}
}

// TestMaxResultBytesIsConfigurable: the bound is Options.MaxResultBytes,
// on both paths: below it an answer passes whole, above it is refused
// naming that bound.
func TestMaxResultBytesIsConfigurable(t *testing.T) {
	e, _, _ := rawEnv(t, router.Options{}, func(o *Options) { o.MaxResultBytes = 64 << 10 })
	cs := e.httpCaller(nil, callerVersion)
	u, _ := e.pool.get("up")
	inProcess := func(args string) (*mcp.CallToolResult, error) {
		return u.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__echo", Arguments: json.RawMessage(args)}})
	}
	fits := `{"text":"` + strings.Repeat("a", 60<<10) + `"}`
	over := `{"text":"` + strings.Repeat("a", 70<<10) + `"}`
	if res, err := call(testCtx(t, 10*time.Second), cs, "up__echo", fits); err != nil || res.IsError || resultText(res) != fits {
		t.Errorf("raw path, within the bound: %v", err)
	}
	if res, err := inProcess(fits); err != nil || resultText(res) != fits {
		t.Errorf("go-sdk path, within the bound: %v", err)
	}
	if _, err := call(testCtx(t, 10*time.Second), cs, "up__echo", over); err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Errorf("raw path, over the bound: %.300v", err)
	}
	if _, err := inProcess(over); err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Errorf("go-sdk path, over the bound: %v", err)
	}
}

// TestOversizedAnswersOverLegacySSEAndStdio: on the transports whose one
// stream carries every answer, a message over the bound cuts the stream:
// the call fails with an error that names the limit, and the upstream is
// reconnected and answers again.
func TestOversizedAnswersOverLegacySSEAndStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"sse", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			opts := fastOptions()
			opts.MaxResultBytes = 256 << 10
			e := newEnv(t, opts)
			var cfg agentsmcp.UpstreamConfig
			if kind == "sse" {
				fx := newFixture("sse")
				hs := serveSSE(t, fx.server)
				cfg = agentsmcp.UpstreamConfig{Name: "old", Transport: TransportSSE, URL: hs.URL(), Timeout: 10 * time.Second, MaxBackoff: 300 * time.Millisecond}
			} else {
				cfg = agentsmcp.UpstreamConfig{Name: "old", Transport: TransportStdio, Command: exe, Env: map[string]string{stdioServerEnv: "1"}, Timeout: 10 * time.Second, MaxBackoff: 300 * time.Millisecond}
			}
			e.add(cfg)
			u, _ := e.pool.get("old")
			echo := func(text string) (*mcp.CallToolResult, error) {
				args, _ := json.Marshal(map[string]string{"text": text})
				return u.CallTool(testCtx(t, 15*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "old__echo", Arguments: args}})
			}
			_, err := echo(strings.Repeat("z", 1<<20))
			if err == nil || !strings.Contains(err.Error(), "larger than 262144 bytes") || !strings.Contains(err.Error(), "limits.max_result_bytes") {
				t.Fatalf("an answer of 1 MiB over a bound of 256 KiB: %v", err)
			}
			e.waitState("old", StateReady, 10*time.Second)
			var res *mcp.CallToolResult
			for range 50 { // the first calls may meet the session being replaced
				if res, err = echo("fine"); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil || !strings.Contains(resultText(res), "fine") {
				t.Errorf("after the refusal: %v %v", resultText(res), err)
			}
		})
	}
}

// TestDeclaredOversizedAnswerIsNotRead: a JSON answer whose Content-Length
// is past the bound is refused before any of it is read.
func TestDeclaredOversizedAnswerIsNotRead(t *testing.T) {
	h, hs := newHugeUpstream(t, 200*mib, false)
	h.declare = true
	e := newEnv(t, fastOptions())
	cfg := streamableConfig("big", hs.URL())
	cfg.ProtocolVersion = "2025-11-25"
	e.add(cfg)
	u, _ := e.pool.get("big")
	_, err := u.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "big__huge", Arguments: json.RawMessage(`{}`)}})
	if err == nil || !strings.Contains(err.Error(), "larger than 16777216 bytes") {
		t.Fatalf("a declared answer of 200 MiB: %v", err)
	}
	select {
	case <-h.closed:
	case <-time.After(5 * time.Second):
		t.Errorf("the upstream's connection was not closed (it wrote %d bytes)", h.written.Load())
	}
}
