package router

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport serves MCP over stdin/stdout like [mcp.StdioTransport], with
// one difference that matters to scripts: when stdin ends, the connection
// stays open until every request already read has been answered (or Grace
// passes). Without this, `echo '{…}' | agents-mcp stdio` often loses its
// answer, because the SDK closes the session, cancelling in-flight
// handlers, as soon as its read fails.
type StdioTransport struct {
	// Grace bounds the wait for in-flight answers after stdin ends; zero
	// means 30 seconds.
	Grace time.Duration
	// Inner is the transport to wrap; nil means &mcp.StdioTransport{}. Tests
	// set an in-memory transport.
	Inner mcp.Transport
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inner := t.Inner
	if inner == nil {
		inner = &mcp.StdioTransport{}
	}
	c, err := inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	grace := t.Grace
	if grace == 0 {
		grace = 30 * time.Second
	}
	return &answerBeforeEOFConn{Connection: c, grace: grace, pending: map[jsonrpc.ID]bool{}, changed: make(chan struct{})}, nil
}

// answerBeforeEOFConn tracks the ids of calls read and not yet answered, and
// delays reporting a read failure until there are none.
type answerBeforeEOFConn struct {
	mcp.Connection
	grace time.Duration

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	changed chan struct{} // closed and replaced whenever pending shrinks
}

func (c *answerBeforeEOFConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending[req.ID] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
	timer := time.NewTimer(c.grace)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n, changed := len(c.pending), c.changed
		c.mu.Unlock()
		if n == 0 {
			return nil, err
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, err
		case <-ctx.Done():
			return nil, err
		}
	}
}

func (c *answerBeforeEOFConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.pending[resp.ID] {
			delete(c.pending, resp.ID)
			close(c.changed)
			c.changed = make(chan struct{})
		}
		c.mu.Unlock()
	}
	return err
}
