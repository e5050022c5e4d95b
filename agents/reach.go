package agents

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReachTimeout bounds how long [ClientAnswers] waits for the client's
// answer to a ping.
const ReachTimeout = 5 * time.Second

// ClientAnswers reports whether the client of ss answers a request of the
// server sent now, with ctx's values (those of the request being served,
// so that over streamable HTTP the ping travels on that request's
// stream): it pings, and waits at most [ReachTimeout].
//
// A client may declare elicitation or sampling and still never see the
// server's requests: some transports drop them (mark3labs/mcp-go's legacy
// SSE client does), and a streamable session has no stream for them
// outside a request. Asking such a client would wait for the whole
// question's timeout; a ping first tells in seconds that it cannot answer,
// and the caller falls back to what it does for a client without the
// capability (a paused task that resume_task answers).
func ClientAnswers(ctx context.Context, ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, ReachTimeout)
	defer cancel()
	return ss.Ping(ctx, nil) == nil
}
