// Package transport holds the parts of the router's transports that know
// nothing of the router: the stdio transport that answers what it read
// before EOF, the bounded event store of the stateful streamable
// endpoint, go-sdk's priming event made a default event, and the
// protection against DNS rebinding in front of every HTTP path.
package transport

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/internal/pending"
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
	return &answerBeforeEOFConn{Connection: c, grace: grace}, nil
}

// answerBeforeEOFConn delays reporting a read failure until every call read
// so far has been answered.
type answerBeforeEOFConn struct {
	mcp.Connection
	grace time.Duration
	calls pending.Calls
}

func (c *answerBeforeEOFConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.calls.Received(msg)
		return msg, nil
	}
	wait, cancel := context.WithTimeout(ctx, c.grace)
	defer cancel()
	c.calls.Wait(wait)
	return nil, err
}

func (c *answerBeforeEOFConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	c.calls.Sent(msg)
	return err
}
