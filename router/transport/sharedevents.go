package transport

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the [SharedEventStore].
const (
	// SharedEventMaxAge is how long an event stays resumable on any
	// replica: a client resumes a broken stream as soon as it reconnects.
	SharedEventMaxAge = 5 * time.Minute
	// SharedEventMaxBytes is the largest event shared; a larger one (a
	// big tool result) is resumable only on the replica that wrote it.
	SharedEventMaxBytes = 256 << 10
	// SharedEventMaxPerStream is the most events of one stream shared:
	// a call's stream carries its progress and its answer.
	SharedEventMaxPerStream = 1024
	// sharedEventTimeout bounds each call to the shared store.
	sharedEventTimeout = 5 * time.Second
)

// EventLog keeps the events of streams for every replica (memory/mongo
// implements it). EventsAfter returns the unexpired events of a stream
// above index after, in order, with their indexes.
type EventLog interface {
	AppendMCPEvent(ctx context.Context, session, stream string, index int, data []byte, expires time.Time) error
	MCPEventsAfter(ctx context.Context, session, stream string, after, limit int) (indexes []int, data [][]byte, err error)
}

// SharedEventStore is the [mcp.EventStore] of replicas that share their
// sessions: it writes every event to this replica's [EventStore] and, for
// the streams of requests (whose ids go-sdk draws at random), to the
// shared [EventLog] too, so that a client resumes a stream with
// Last-Event-ID on any replica. A resume reads the local store first and
// the shared log for a stream this replica did not write.
//
// The standalone GET stream of a session has the same id ("") on every
// replica, and each replica numbers its events from zero: it is not
// shared, and resumes only on the replica that wrote it (a client that
// reconnects elsewhere opens a new one).
//
// Bounds: events older than [SharedEventMaxAge], larger than
// [SharedEventMaxBytes] or past the [SharedEventMaxPerStream]th of a
// stream are not shared. A replay that would skip one fails as one from
// purged events does ([mcp.ErrEventsPurged], HTTP 400 from go-sdk): never
// a stream with a hole in it.
type SharedEventStore struct {
	Local  *EventStore
	Log    EventLog
	Logger *slog.Logger
}

var _ mcp.EventStore = (*SharedEventStore)(nil)

// Open implements [mcp.EventStore].
func (s *SharedEventStore) Open(ctx context.Context, sessionID, streamID string) error {
	return s.Local.Open(ctx, sessionID, streamID)
}

// Append implements [mcp.EventStore].
func (s *SharedEventStore) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	if err := s.Local.Append(ctx, sessionID, streamID, data); err != nil {
		return err
	}
	if streamID == "" || len(data) > SharedEventMaxBytes {
		return nil
	}
	index, ok := s.Local.lastIndex(sessionID, streamID)
	if !ok || index >= SharedEventMaxPerStream {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedEventTimeout)
	defer cancel()
	if err := s.Log.AppendMCPEvent(ctx, sessionID, streamID, index, data, time.Now().Add(SharedEventMaxAge)); err != nil && s.Logger != nil {
		// The event still reaches the client; only a resume on another
		// replica will miss it (and fail rather than skip it).
		s.Logger.Warn("an event could not be shared with the other replicas", "session", sessionID, "error", err)
	}
	return nil
}

// After implements [mcp.EventStore].
func (s *SharedEventStore) After(ctx context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	if streamID == "" || s.Local.keeps(sessionID, streamID) {
		return s.Local.After(ctx, sessionID, streamID, index)
	}
	rctx, cancel := context.WithTimeout(ctx, sharedEventTimeout)
	indexes, data, err := s.Log.MCPEventsAfter(rctx, sessionID, streamID, index, SharedEventMaxPerStream)
	cancel()
	// No event after index: the stream's answer is not written yet (its
	// call runs on another replica), and the client will ask again.
	for i, at := range indexes {
		if err == nil && at != index+1+i {
			err = fmt.Errorf("stream %q of session %q, after index %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
		}
	}
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements [mcp.EventStore]: a session that ends on this
// replica may live on in another, so only the local events go; the
// shared ones expire.
func (s *SharedEventStore) SessionClosed(ctx context.Context, sessionID string) error {
	return s.Local.SessionClosed(ctx, sessionID)
}

// keeps reports whether this replica keeps the stream.
func (s *EventStore) keeps(sessionID, streamID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[sessionID][streamID]
	return ok
}

// lastIndex returns the index of the last event kept of the stream.
func (s *EventStore) lastIndex(sessionID, streamID string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.sessions[sessionID][streamID]
	if !ok {
		return 0, false
	}
	st := e.Value.(*storedStream)
	return st.first + len(st.data) - 1, true
}
