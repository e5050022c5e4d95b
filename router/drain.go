package router

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTracker counts in-flight requests so that shutdown can wait for them,
// and refuses new requests once draining has begun.
type drainTracker struct {
	mu       sync.Mutex
	inflight int
	draining bool
	idle     chan struct{} // closed when draining and inflight reaches zero
}

func newDrainTracker() *drainTracker {
	return &drainTracker{idle: make(chan struct{})}
}

func (d *drainTracker) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// Notifications and answers to our own requests keep flowing while
		// draining: in-flight calls may depend on them (cancellation,
		// sampling results).
		if isNotification(method) {
			return next(ctx, method, req)
		}
		if !d.enter() {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errShuttingDown}
		}
		defer d.done()
		return next(ctx, method, req)
	}
}

// errShuttingDown is what a request refused while draining is told.
const errShuttingDown = "server is shutting down; retry on another replica or after restart"

// enter counts one more request in flight, or reports false when draining
// has begun; after true, the caller calls done when the request ends.
func (d *drainTracker) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.inflight++
	return true
}

func (d *drainTracker) done() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	if d.draining && d.inflight == 0 {
		close(d.idle)
	}
}

// Drain refuses new requests and waits until the in-flight ones have
// finished or ctx ends. It reports how many requests were still running.
func (r *Router) Drain(ctx context.Context) (stillRunning int) {
	d := r.drain
	d.mu.Lock()
	if !d.draining {
		d.draining = true
		if d.inflight == 0 {
			close(d.idle)
		}
	}
	d.mu.Unlock()
	select {
	case <-d.idle:
		return 0
	case <-ctx.Done():
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.inflight
	}
}

// Draining reports whether [Router.Drain] has been called.
func (r *Router) Draining() bool {
	r.drain.mu.Lock()
	defer r.drain.mu.Unlock()
	return r.drain.draining
}

// CloseSessions ends every connected MCP session (all transports), which
// ends their open streams, and reports how many had not ended when ctx did.
// Call it after [Router.Drain].
//
// The sessions are closed concurrently and the wait is bounded because a
// go-sdk session's Close waits for its outgoing calls: a keepalive ping in
// flight to a client that no longer answers holds it for half the
// keepalive interval, whatever the caller's deadline. Such a Close
// finishes in the background once the ping times out.
func (r *Router) CloseSessions(ctx context.Context) (stillOpen int) {
	var closing sync.WaitGroup
	for ss := range r.server.Sessions() {
		closing.Go(func() { _ = ss.Close() })
	}
	closed := make(chan struct{})
	go func() {
		closing.Wait()
		close(closed)
	}()
	select {
	case <-closed:
		return 0
	case <-ctx.Done():
		for range r.server.Sessions() {
			stillOpen++
		}
		return stillOpen
	}
}

func isNotification(method string) bool {
	return len(method) > len("notifications/") && method[:len("notifications/")] == "notifications/"
}
