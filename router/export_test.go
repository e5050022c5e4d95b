package router

import (
	"time"

	"github.com/agents-mcp/agents-mcp/router/internal/testknob"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
)

// KnownMethodsForTest exposes the guard's method table to the external tests.
func KnownMethodsForTest() map[string]string { return mcphttp.KnownMethods() }

// SetPrimingDelayForTest sets how long the tools/call fast path holds its
// priming event back, and returns what restores the default.
func SetPrimingDelayForTest(d time.Duration) (restore func()) {
	testknob.PrimingDelay.Store(int64(d))
	return func() { testknob.PrimingDelay.Store(0) }
}
