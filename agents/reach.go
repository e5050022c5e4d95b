package agents

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReachTimeout bounds how long [ClientAnswers] waits for the client's
// answer to a ping.
const ReachTimeout = 5 * time.Second

// AnsweredRecently is how long a session whose client answered a request
// of the server (a ping, an elicitation, a sampling request) counts as
// answering without a new ping: a task that asks its client several
// questions in a row pings once, not before each.
const AnsweredRecently = 5 * time.Second

// maxAnsweredSessions bounds the sessions [ClientAnswers] remembers; past
// it, the ones whose answer is too old to count are forgotten first, then
// the oldest (which are pinged again when next asked).
const maxAnsweredSessions = 1024

// ClientAnswers reports whether the client of ss answers a request of the
// server sent now, with ctx's values (those of the request being served,
// so that over streamable HTTP the ping travels on that request's
// stream): true at once when it answered one within [AnsweredRecently]
// (see [NoteClientAnswered]), else it pings and waits at most
// [ReachTimeout].
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
	if answered.recent(ss) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, ReachTimeout)
	defer cancel()
	if ss.Ping(ctx, nil) != nil {
		answered.forget(ss)
		return false
	}
	answered.note(ss)
	return true
}

// NoteClientAnswered records that the client of ss has just answered a
// request of the server (an elicitation or a sampling request), so that
// [ClientAnswers] need not ping it again within [AnsweredRecently].
func NoteClientAnswered(ss *mcp.ServerSession) {
	if ss != nil {
		answered.note(ss)
	}
}

// answered is the process's record of when each session's client last
// answered: sessions are the process's, and so is this bounded memory of
// them.
var answered = &answeredSessions{now: time.Now}

// answeredSessions remembers, per session, when its client last answered
// a request of the server; at most maxAnsweredSessions sessions.
type answeredSessions struct {
	now func() time.Time

	mu sync.Mutex
	at map[*mcp.ServerSession]time.Time
}

// recent reports whether ss's client answered within AnsweredRecently.
func (a *answeredSessions) recent(ss *mcp.ServerSession) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.at[ss]
	return ok && a.now().Sub(at) < AnsweredRecently
}

func (a *answeredSessions) note(ss *mcp.ServerSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if a.at == nil {
		a.at = map[*mcp.ServerSession]time.Time{}
	}
	if _, ok := a.at[ss]; !ok && len(a.at) >= maxAnsweredSessions {
		var oldest *mcp.ServerSession
		for s, at := range a.at {
			if now.Sub(at) >= AnsweredRecently {
				delete(a.at, s)
			} else if oldest == nil || at.Before(a.at[oldest]) {
				oldest = s
			}
		}
		if len(a.at) >= maxAnsweredSessions {
			delete(a.at, oldest)
		}
	}
	a.at[ss] = now
}

func (a *answeredSessions) forget(ss *mcp.ServerSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.at, ss)
}

func (a *answeredSessions) size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}
