// Command agents-mcp is the Agents MCP Server: an MCP router, orchestrator and
// memory for AI agents. See README.md for usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	// In a container with a memory limit, let the collector work harder near
	// it rather than the process be killed (docs/scaling.md); a bad limit
	// file only costs that.
	if _, err := setMemoryLimitFromCgroup(os.Getenv, cgroupV2MemoryMax, cgroupV1MemoryMax); err != nil {
		fmt.Fprintf(os.Stderr, "agents-mcp: memory limit not set from the cgroup: %v\n", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: agents-mcp <command> [flags]

Commands:
  serve     serve MCP over HTTP (/mcp streamable, /sse legacy) plus /healthz, /readyz
  stdio     serve MCP over stdin/stdout
  reindex   rebuild the vector index from the store, with progress
  healthcheck  GET /healthz (or --path) of the local server; exit 0 on 200 (for container health checks)
  version   print the version

Run "agents-mcp serve -h" for the flags; every setting is listed in docs/configuration.md.
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serveCommand(ctx, args[1:], getenv, stderr)
	case "stdio":
		err = stdioCommand(ctx, args[1:], getenv, stderr)
	case "reindex":
		err = reindexCommand(ctx, args[1:], getenv, stderr)
	case "healthcheck":
		err = healthcheckCommand(ctx, args[1:], getenv, stderr)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "agents-mcp %s\n", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "agents-mcp: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return 0 // stopped by a signal: a normal end
	}
	fmt.Fprintf(stderr, "agents-mcp: %v\n", err)
	return 1
}
