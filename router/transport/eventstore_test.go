package transport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// after collects what the store replays of a stream after index.
func after(t *testing.T, s *EventStore, session, stream string, index int) ([]string, error) {
	t.Helper()
	var out []string
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

// TestEventStoreReplays resumes streams as go-sdk's MemoryEventStore does:
// the events after the index, nothing after the last one, and the session's
// streams gone once it closes.
func TestEventStoreReplays(t *testing.T) {
	ctx := context.Background()
	s := NewEventStore(1<<20, 100)
	for _, id := range []string{"", "a"} {
		if err := s.Open(ctx, "s1", id); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"", "one", "two"} { // "" is a priming event
		_ = s.Append(ctx, "s1", "a", []byte(d))
	}
	_ = s.Append(ctx, "s1", "", []byte("note"))
	for _, tc := range []struct {
		index int
		want  string
	}{{-1, ",one,two"}, {0, "one,two"}, {1, "two"}, {2, ""}, {7, ""}} {
		got, err := after(t, s, "s1", "a", tc.index)
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("after %d: %q, %v; want %q", tc.index, got, err, tc.want)
		}
	}
	if got, err := after(t, s, "s1", "", -1); err != nil || strings.Join(got, ",") != "note" {
		t.Errorf("standalone stream: %q, %v", got, err)
	}
	_ = s.SessionClosed(ctx, "s1")
	if _, err := after(t, s, "s1", "a", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("after the session closed: %v", err)
	}
	if s.nBytes != 0 || s.lru.Len() != 0 || len(s.sessions) != 0 {
		t.Errorf("closed session left %d bytes, %d streams, %d sessions", s.nBytes, s.lru.Len(), len(s.sessions))
	}
}

// TestEventStoreBounded opens a stream per call in one long session, as
// go-sdk does for every POST, far past both bounds: the store keeps at
// most its bounds, the recent streams stay resumable, the old ones fail
// as purged, and writing to a forgotten stream does not bring it back
// with its indexes restarted.
func TestEventStoreBounded(t *testing.T) {
	ctx := context.Background()
	const maxStreams, maxBytes = 50, 400
	for _, tc := range []struct {
		name string
		size int // bytes per answer: 4 hits the stream bound first, 20 the byte bound
	}{{"streams", 4}, {"bytes", 20}} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewEventStore(maxBytes, maxStreams)
			answer := strings.Repeat("x", tc.size)
			for i := range 1000 {
				id := fmt.Sprint(i)
				_ = s.Open(ctx, "long", id)
				_ = s.Append(ctx, "long", id, nil) // priming
				_ = s.Append(ctx, "long", id, []byte(answer))
				if s.lru.Len() > maxStreams || s.nBytes > maxBytes || len(s.sessions["long"]) != s.lru.Len() {
					t.Fatalf("after %d calls: %d streams (%d in the session), %d bytes", i+1, s.lru.Len(), len(s.sessions["long"]), s.nBytes)
				}
			}
			if got, err := after(t, s, "long", "999", 0); err != nil || len(got) != 1 || got[0] != answer {
				t.Errorf("the last call's stream: %q, %v", got, err)
			}
			if _, err := after(t, s, "long", "0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
				t.Errorf("the first call's stream: %v, want purged", err)
			}
			_ = s.Append(ctx, "long", "0", []byte("late"))
			if _, err := after(t, s, "long", "0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
				t.Errorf("a forgotten stream written again: %v, want purged", err)
			}
		})
	}
}

// TestEventStoreOneLargeStream trims the oldest events of a stream that is
// alone over the byte bound, keeping its indexes.
func TestEventStoreOneLargeStream(t *testing.T) {
	ctx := context.Background()
	s := NewEventStore(10, 100)
	_ = s.Open(ctx, "s", "")
	for _, d := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		_ = s.Append(ctx, "s", "", []byte(d))
	}
	if s.nBytes > 10 {
		t.Errorf("%d bytes kept", s.nBytes)
	}
	if got, err := after(t, s, "s", "", 1); err != nil || strings.Join(got, ",") != "cccc,dddd" {
		t.Errorf("after 1: %q, %v", got, err)
	}
	if _, err := after(t, s, "s", "", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("after 0 (bbbb dropped): %v, want purged", err)
	}
}
