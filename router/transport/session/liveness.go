package session

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file decides when a session is alive, the same way for every
// client, whatever it can receive:
//
//   - A session whose client sends requests is alive: every request (a
//     POST on /mcp, a message POSTed to a legacy SSE session) resets its
//     idleness, whether or not the client answers pings.
//   - Only an idle session is pinged (no request for a whole keepalive
//     interval), and only when its client has a stream that carries
//     the ping: a legacy SSE session's stream, or a streamable session's
//     open GET stream. A streamable client without a GET stream (the
//     default of several client libraries) is never pinged: the ping would
//     have nowhere to go.
//   - An answered ping counts as activity. A client that has answered
//     pings and then misses [MissedPings] in a row while idle is taken
//     for dead (its process hung, its network gone) and its session is
//     closed. A client that has never answered one (some transports drop
//     every request of the server) is judged by its requests alone.
//   - A session that received no request and answered no ping for the idle
//     timeout ([Limits.Idle]) is closed, whatever the client.

// MissedPings is how many pings in a row a client that answered pings
// before may miss, while idle, before its session is closed.
const MissedPings = 3

// liveness is what the keepalive of one session knows, under the
// [Table]'s lock.
type liveness struct {
	lastRequest time.Time // the last request, or answered ping
	streams     int       // open GET streams of a streamable session
	answered    bool      // the client has answered a ping
	missed      int       // pings missed in a row since lastRequest
}

// request records a request of the client.
func (l *liveness) request() {
	l.lastRequest = time.Now()
	l.missed = 0
}

// Touch records that a message was POSTed to the legacy SSE session id:
// the session is active, and its idle timer starts again.
func (t *Table) Touch(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil {
		e.live.request()
		if e.posts == 0 && e.idleEnd != nil {
			e.idleEnd.Reset(e.idle)
		}
	}
}

// streamOpen records a GET stream of the streamable session id, which
// carries the server's pings, until the returned function is called.
func (t *Table) streamOpen(id string) (closed func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byID[id]
	if e == nil || e.legacy {
		return func() {}
	}
	e.live.streams++
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		e.live.streams--
	}
}

// keepAlive pings ss, the session of e, while it is idle and its client
// has a stream for the ping (see the top of this file), until it ends.
func (t *Table) keepAlive(ss *mcp.ServerSession, e *sessionEntry, l Limits) {
	tick := time.NewTicker(l.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-e.ended.Done():
			return
		case <-tick.C:
		}
		t.mu.Lock()
		since := e.live.lastRequest
		ping := e.initialized && e.posts == 0 && time.Since(since) >= l.KeepAlive &&
			(e.legacy || e.live.streams > 0)
		t.mu.Unlock()
		if !ping {
			continue
		}
		// Half an interval to answer, as go-sdk's own keepalive gives.
		ctx, cancel := context.WithTimeout(e.ended, l.KeepAlive/2)
		err := ss.Ping(ctx, nil)
		cancel()
		t.mu.Lock()
		dead := false
		switch {
		case err == nil:
			e.live.answered = true
			e.live.request()
			if e.posts == 0 && e.idleEnd != nil {
				e.idleEnd.Reset(e.idle)
			}
		case e.live.lastRequest.Equal(since) && e.ended.Err() == nil:
			// Missed while no request came: a request in the meantime
			// says more than the ping.
			e.live.missed++
			dead = e.live.answered && e.live.missed >= MissedPings
		}
		missed := e.live.missed
		t.mu.Unlock()
		if dead {
			if l.Logger != nil {
				l.Logger.Info("closing a session whose client stopped answering pings while idle",
					"session_id", ss.ID(), "missed", missed)
			}
			_ = ss.Close()
			return
		}
	}
}
