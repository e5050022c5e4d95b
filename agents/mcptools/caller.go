package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// elicitTimeout bounds how long a question waits for the user before the
// task pauses instead (resume_task then answers it).
const elicitTimeout = 10 * time.Minute

// SessionCaller is the [agents.Caller] of a tools/call request: progress goes to the
// request's progress token, questions through MCP elicitation when the
// client declared it.
type SessionCaller struct {
	session *mcp.ServerSession
	token   any             // the request's progress token; nil: no progress wanted
	reqVals context.Context // the request's values, without its cancellation
	logger  *slog.Logger
	// mrtr: the client speaks MCP 2026-07-28 or later, where a server
	// cannot send it requests; the call asks with input_required instead.
	mrtr bool
	// caps are the protocol capabilities of the call's client.
	caps mcpwire.Capabilities

	mu      sync.Mutex
	last    float64 // progress must increase
	sent    bool
	stopped bool
}

// NewSessionCaller returns the [agents.Caller] for req, a tools/call being served.
// Call Detach when the request returns: progress notifications are only
// valid while it is in flight.
func NewSessionCaller(ctx context.Context, req *mcp.CallToolRequest, logger *slog.Logger) *SessionCaller {
	c := &SessionCaller{session: req.Session, logger: logger, reqVals: context.WithoutCancel(ctx), mrtr: agents.IsMRTRClient(ctx, req), caps: mcpwire.CallCapabilities(ctx, req)}
	if req.Params != nil {
		c.token = req.Params.GetProgressToken()
	}
	return c
}

// Detach stops progress: the request it belonged to has ended.
func (c *SessionCaller) Detach() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

// Progress implements [agents.Caller].
func (c *SessionCaller) Progress(_ context.Context, done, total int, message string) {
	if c.session == nil || c.token == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The lock also orders the notifications, which progress requires.
	if c.stopped || (c.sent && float64(done) <= c.last) {
		return
	}
	c.last, c.sent = float64(done), true
	// The request's values, not the caller's context: the notification
	// belongs on the waiting request's stream.
	ctx, cancel := context.WithTimeout(c.reqVals, 5*time.Second)
	defer cancel()
	err := c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: c.token, Progress: float64(done), Total: float64(total), Message: message,
	})
	if err != nil && c.logger != nil {
		c.logger.Debug("progress notification not sent", "error", err)
	}
}

// Elicit implements [agents.Caller].
func (c *SessionCaller) Elicit(ctx context.Context, message string, schema json.RawMessage) (json.RawMessage, bool, error) {
	if c.mrtr {
		// The task pauses; the waiting call then asks with an
		// input_required result (Tools.inputRequired).
		return nil, false, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "the client is asked through input_required results, not elicitation")
	}
	if c.session == nil || c.caps.Channel() != mcpwire.ChannelSession || !c.caps.Elicitation() {
		return nil, false, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "the client does not support elicitation")
	}
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return nil, false, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "nobody waits for the task any more")
	}
	rctx, cancel := context.WithTimeout(c.reqVals, elicitTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if !agents.ClientAnswers(rctx, c.session) {
		// Declared, but not reachable: the task pauses, as for a client
		// without elicitation, rather than wait for an answer that
		// cannot come.
		return nil, false, agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "the client declared elicitation but does not answer the server's requests on its transport")
	}
	res, err := c.session.Elicit(rctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, false, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "elicitation failed: %v", err)
	}
	agents.NoteClientAnswered(c.session)
	if res.Action != "accept" {
		return nil, false, nil
	}
	values, err := json.Marshal(res.Content)
	if err != nil {
		return nil, false, fmt.Errorf("elicitation answer: %w", err)
	}
	return values, true, nil
}

// Session implements [agents.Caller].
func (c *SessionCaller) Session() *mcp.ServerSession { return c.session }

// Request implements [agents.Caller].
func (c *SessionCaller) Request() context.Context { return c.reqVals }
