// Package panicerr is a panic recovered while serving one request, shared
// by the router's dispatch and its transports so that both contain a
// panic to its request and log it the same way.
package panicerr

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error is a panic recovered while serving one request.
type Error struct {
	value any
	stack []byte
}

// Error does not show the value: callers get "internal error" (see
// agentsmcp.ErrorMessage); the log gets the rest.
func (e *Error) Error() string { return "internal error (a panic, logged)" }

// Recovered wraps v, a value recover returned, with the stack of the
// panic; it must be called in the deferred function that recovered.
func Recovered(v any) *Error { return &Error{value: v, stack: debug.Stack()} }

// New is a panic of value recovered elsewhere with its stack.
func New(value any, stack []byte) *Error { return &Error{value: value, stack: stack} }

// Log logs e at ERROR, with attrs saying which request panicked.
func Log(logger *slog.Logger, e *Error, attrs ...any) {
	logger.Error("a request handler panicked; the request got an internal error",
		append(attrs, "panic", fmt.Sprint(e.value), "stack", string(e.stack))...)
}

// Is reports whether err is a recovered panic.
func Is(err error) bool {
	_, ok := errors.AsType[*Error](err)
	return ok
}

// Internal is the JSON-RPC error of a request whose handler panicked.
func Internal() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
}
