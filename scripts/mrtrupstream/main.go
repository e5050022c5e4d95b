// Command mrtrupstream is an MCP server on go-sdk (v1.8.0, MCP 2026-07-28)
// for the e2e tests of the protocol bridge: its one tool, deploy_service,
// asks for a confirmation the multi round-trip way. Its first answer is
// input_required with an elicitation and a requestState; only a retry that
// carries the answer and echoes the state deploys. It is a test tool, and
// nothing linked into cmd/agents-mcp imports it.
//
// It serves stateless streamable HTTP on /mcp (so that a go-sdk client,
// such as agents-mcp's pool, negotiates 2026-07-28 through
// server/discover), and on GET /calls a JSON record of what reached it:
// each tools/call request with its MCP-Protocol-Version header, and each
// run of the tool with what it was given. It prints its base URL on the
// first line of standard output once it listens, then serves until SIGINT
// or SIGTERM:
//
//	go run ./scripts/mrtrupstream -addr 127.0.0.1:0
//	http://127.0.0.1:41234
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is the requestState of the input_required answer.
const State = "deploy-state-41"

// record is what GET /calls answers.
type record struct {
	mu sync.Mutex
	// Calls holds the MCP-Protocol-Version header of each tools/call request.
	Calls []string `json:"calls"`
	// Rounds holds, per run of the tool, "ask" (it answered input_required),
	// "declined", or "done:<requestState>:<approver>".
	Rounds []string `json:"rounds"`
}

func (r *record) add(list *[]string, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*list = append(*list, s)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mrtrupstream:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()

	rec := &record{Calls: []string{}, Rounds: []string{}} // [] rather than null before the first call
	s := mcp.NewServer(&mcp.Implementation{Name: "deployer", Version: "1.0.0"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				v := ""
				if ex := req.GetExtra(); ex != nil && ex.Header != nil {
					v = ex.Header.Get("Mcp-Protocol-Version")
				}
				rec.add(&rec.Calls, v)
			}
			return next(ctx, method, req)
		}
	})
	s.AddTool(&mcp.Tool{Name: "deploy_service", Description: "Deploy a service to production after a confirmation",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				rec.add(&rec.Rounds, "ask")
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
						Message:         "Deploy to production? Say who approves.",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"approver":{"type":"string"}},"required":["approver"]}`),
					}},
					RequestState: State,
				}, nil
			}
			er, _ := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if er == nil || er.Action != "accept" {
				rec.add(&rec.Rounds, "declined")
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not confirmed"}}}, nil
			}
			approver, _ := er.Content["approver"].(string)
			rec.add(&rec.Rounds, fmt.Sprintf("done:%s:%s", req.Params.RequestState, approver))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed, approved by " + approver}}}, nil
		})

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	mux.HandleFunc("GET /calls", func(w http.ResponseWriter, _ *http.Request) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec)
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("http://%s\n", ln.Addr())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
