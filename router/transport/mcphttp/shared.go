package mcphttp

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/transport"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// This file wires the sharing of stateful sessions and of their streams'
// events between replicas (ADR 0016; router/transport/session's shared.go
// and router/transport's sharedevents.go).

// sharedSessions returns the sharing of opts, or nil when the sessions
// stay in this replica. idle is the sessions' idle timeout (zero: none).
func sharedSessions(opts Options, idle time.Duration, logger *slog.Logger) *session.Shared {
	if opts.SharedSessions == nil || opts.Stateless || opts.SessionIDs == nil {
		return nil
	}
	return &session.Shared{Store: opts.SharedSessions, Mint: opts.SessionIDs, TTL: idle, Logger: logger}
}

// sharedEvents returns the event store of stateful /mcp: this replica's,
// written through to the shared log when opts has one.
func sharedEvents(opts Options, logger *slog.Logger) mcp.EventStore {
	local := transport.NewEventStore(transport.EventStoreMaxBytes, transport.EventStoreMaxStreams)
	if opts.SharedSessions == nil || opts.SharedEvents == nil {
		return local
	}
	return &transport.SharedEventStore{Local: local, Log: opts.SharedEvents, Logger: logger}
}

// recordLogLevel shares the log level that a POST of a stateful session
// sets (logging/setLevel), so that a replica that opens the session again
// relays the same log messages.
// It also keeps the shared state of a session this replica holds from
// expiring while the fast path alone serves it.
func recordLogLevel(shared *session.Shared, table *session.Table, req *http.Request, body []byte) {
	sid := req.Header.Get("Mcp-Session-Id")
	if shared == nil || sid == "" {
		return
	}
	if _, ok := table.OwnerOf(sid); ok {
		shared.Refresh(req.Context(), sid)
	}
	if !bytes.Contains(body, []byte(`"logging/setLevel"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Level string `json:"level"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "logging/setLevel" || msg.Params.Level == "" {
		return
	}
	shared.SetLogLevel(req.Context(), sid, msg.Params.Level)
}
