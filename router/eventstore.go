package router

import (
	"container/list"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of [eventStore] on the stateful streamable endpoint.
const (
	// eventStoreMaxBytes is the most event data kept, as go-sdk's
	// MemoryEventStore keeps by default.
	eventStoreMaxBytes = 10 << 20
	// eventStoreMaxStreams is the most streams kept, across sessions:
	// 16,384 answers are about 16 s of calls at 1,000 calls/s, and a
	// client resumes a broken stream as soon as it reconnects.
	eventStoreMaxStreams = 1 << 14
)

// eventStore is the [mcp.EventStore] of the stateful streamable endpoint:
// it keeps the events written on recent streams, so that a client whose
// stream broke can resume it with Last-Event-ID.
//
// It replaces go-sdk's MemoryEventStore, which bounds the bytes it keeps
// but keeps an entry for every stream a session ever opened, until the
// session ends. go-sdk opens a stream for every POST and never says when
// one has ended, so a long-lived session grew the process by about 200
// bytes per call without bound, and every garbage collection with it (the
// soak benchmark). This store bounds the bytes and the number of
// streams, and forgets the least recently written streams whole. A resume
// from a forgotten stream fails as one from purged events does
// ([mcp.ErrEventsPurged], which go-sdk answers with HTTP 400); events
// written later to a forgotten stream are not kept, so that a stream's
// event indexes never restart from zero. A stream alone over the byte
// bound loses its oldest events instead.
type eventStore struct {
	maxBytes, maxStreams int

	mu       sync.Mutex
	nBytes   int
	lru      list.List                           // of *storedStream, least recently written first
	sessions map[string]map[string]*list.Element // session ID → stream ID → its element in lru
}

// storedStream is the events kept of one stream: data[i] is the event of
// index first+i.
type storedStream struct {
	session, id string
	first       int
	data        [][]byte
	size        int // bytes in data
}

func newEventStore(maxBytes, maxStreams int) *eventStore {
	return &eventStore{maxBytes: maxBytes, maxStreams: maxStreams, sessions: map[string]map[string]*list.Element{}}
}

var _ mcp.EventStore = (*eventStore)(nil)

// Open implements [mcp.EventStore]: go-sdk opens each stream, before
// writing to it, when the stream starts.
func (s *eventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	streams := s.sessions[sessionID]
	if streams == nil {
		streams = map[string]*list.Element{}
		s.sessions[sessionID] = streams
	}
	if e, ok := streams[streamID]; ok {
		s.lru.MoveToBack(e)
		return nil
	}
	streams[streamID] = s.lru.PushBack(&storedStream{session: sessionID, id: streamID})
	s.evict()
	return nil
}

// Append implements [mcp.EventStore]. Data for a stream that was never
// opened or was forgotten is not kept.
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.sessions[sessionID][streamID]
	if !ok {
		return nil
	}
	st := e.Value.(*storedStream)
	st.data = append(st.data, data)
	st.size += len(data)
	s.nBytes += len(data)
	s.lru.MoveToBack(e)
	s.evict()
	return nil
}

// After implements [mcp.EventStore].
func (s *eventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var data [][]byte
	var err error
	if e, ok := s.sessions[sessionID][streamID]; !ok {
		err = fmt.Errorf("stream %q of session %q is not kept: %w", streamID, sessionID, mcp.ErrEventsPurged)
	} else if st := e.Value.(*storedStream); index+1 < st.first {
		err = fmt.Errorf("stream %q of session %q, after index %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
	} else if start := index + 1 - st.first; start < len(st.data) {
		data = slices.Clone(st.data[start:]) // evict clears the slots it drops
	}
	s.mu.Unlock()
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

// SessionClosed implements [mcp.EventStore].
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.sessions[sessionID] {
		s.nBytes -= e.Value.(*storedStream).size
		s.lru.Remove(e)
	}
	delete(s.sessions, sessionID)
	return nil
}

// evict forgets the least recently written streams while the store is
// over a bound, keeping the most recent one, and then drops the oldest
// events of that one while it alone is over the byte bound, keeping its
// last event. It needs s.mu.
func (s *eventStore) evict() {
	for s.lru.Len() > 1 && (s.nBytes > s.maxBytes || s.lru.Len() > s.maxStreams) {
		st := s.lru.Remove(s.lru.Front()).(*storedStream)
		s.nBytes -= st.size
		if streams := s.sessions[st.session]; len(streams) > 1 {
			delete(streams, st.id)
		} else {
			delete(s.sessions, st.session)
		}
	}
	if s.nBytes <= s.maxBytes || s.lru.Len() == 0 {
		return
	}
	st := s.lru.Back().Value.(*storedStream)
	for s.nBytes > s.maxBytes && len(st.data) > 1 {
		n := len(st.data[0])
		st.data[0] = nil
		st.data = st.data[1:]
		st.first++
		st.size -= n
		s.nBytes -= n
	}
}
