// Package pending tracks work that must finish before a connection or a
// server may close: JSON-RPC calls read and not yet answered, and HTTP
// requests being served.
package pending

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Calls tracks the ids of JSON-RPC calls received on one connection until
// their responses are sent. The zero value is ready to use.
type Calls struct {
	mu   sync.Mutex
	ids  map[jsonrpc.ID]func() // id → its unit of work in open
	open Counter
}

// Received records msg if it is a call (a request with an id).
func (c *Calls) Received(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[jsonrpc.ID]func(){}
	}
	if _, dup := c.ids[req.ID]; !dup {
		c.ids[req.ID] = c.open.Add()
	}
}

// Sent forgets the call that msg answers, if msg is a response.
func (c *Calls) Sent(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	c.mu.Lock()
	done, ok := c.ids[resp.ID]
	delete(c.ids, resp.ID)
	c.mu.Unlock()
	if ok {
		done()
	}
}

// Wait blocks until every recorded call has been answered or ctx ends, and
// returns how many are still unanswered.
func (c *Calls) Wait(ctx context.Context) int { return c.open.Wait(ctx) }

// Counter counts units of work in progress. The zero value is ready to use.
type Counter struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced whenever n reaches zero
}

// Add records the start of one unit of work; call the returned func when it
// ends.
func (c *Counter) Add() (done func()) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.n--
			if c.n == 0 && c.changed != nil {
				close(c.changed)
				c.changed = nil
			}
		})
	}
}

// Wait blocks until no work is in progress or ctx ends, and returns how many
// units are still running.
func (c *Counter) Wait(ctx context.Context) int {
	c.mu.Lock()
	if c.n == 0 {
		c.mu.Unlock()
		return 0
	}
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	changed := c.changed
	c.mu.Unlock()
	select {
	case <-changed:
		return 0
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.n
	}
}
