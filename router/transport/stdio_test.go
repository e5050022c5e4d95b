package transport_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

func TestStdioAnswersRequestsReadBeforeEOF(t *testing.T) {
	local := localtools.New()
	_ = localtools.Add(local, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finished"}}}, nil, nil
	})
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(t.Context(), local); err != nil {
		t.Fatal(err)
	}

	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	}, "\n") + "\n"
	outR, outW := io.Pipe()
	transport := &router.StdioTransport{
		Grace: 5 * time.Second,
		Inner: &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(input)), Writer: routertest.NopWriteCloser{Writer: outW}},
	}
	runDone := make(chan error, 1)
	go func() {
		runDone <- r.Server().Run(context.Background(), transport)
		outW.Close()
	}()
	var lines []string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	<-runDone
	got := strings.Join(lines, "\n")
	if !strings.Contains(got, `"id":2`) || !strings.Contains(got, "finished") {
		t.Fatalf("the call read before EOF was not answered; output:\n%s", got)
	}
}
