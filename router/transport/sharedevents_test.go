package transport

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memoryLog is an [EventLog] in memory, standing for the store shared
// by replicas (memory/mongo's is tested end to end in cmd/agents-mcp).
type memoryLog struct {
	mu     sync.Mutex
	events map[string]map[int][]byte // session/stream → index → data
}

func (l *memoryLog) AppendMCPEvent(_ context.Context, session, stream string, index int, data []byte, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := session + "/" + stream
	if l.events[k] == nil {
		l.events[k] = map[int][]byte{}
	}
	l.events[k][index] = data
	return nil
}

func (l *memoryLog) MCPEventsAfter(_ context.Context, session, stream string, after, limit int) ([]int, [][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var idx []int
	for i := range l.events[session+"/"+stream] {
		if i > after {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	var data [][]byte
	for _, i := range idx {
		data = append(data, l.events[session+"/"+stream][i])
	}
	return idx, data, nil
}

func collect(t *testing.T, s mcp.EventStore, session, stream string, after int) ([]string, error) {
	t.Helper()
	var out []string
	for d, err := range s.After(t.Context(), session, stream, after) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

// TestSharedEventStoreResumesElsewhere: a stream written through one
// replica's store resumes through another's; the standalone stream and
// events past a hole are not replayed from the shared log.
func TestSharedEventStoreResumesElsewhere(t *testing.T) {
	ctx := context.Background()
	log := &memoryLog{events: map[string]map[int][]byte{}}
	a := &SharedEventStore{Local: NewEventStore(1<<20, 100), Log: log}
	b := &SharedEventStore{Local: NewEventStore(1<<20, 100), Log: log}
	for _, stream := range []string{"call", ""} {
		if err := a.Open(ctx, "s", stream); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"prime", "progress", "answer"} {
			if err := a.Append(ctx, "s", stream, []byte(d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := collect(t, b, "s", "call", 0)
	if err != nil || len(got) != 2 || got[0] != "progress" || got[1] != "answer" {
		t.Fatalf("resume of the call's stream on b after 0: %q, %v", got, err)
	}
	if got, err := collect(t, b, "s", "", 0); len(got) != 0 {
		t.Fatalf("the standalone stream was shared: %q, %v", got, err)
	}

	// A lost event (index 1) makes the replay fail, not skip it.
	log.mu.Lock()
	delete(log.events["s/call"], 1)
	log.mu.Unlock()
	if _, err := collect(t, b, "s", "call", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("replay over a hole: %v, want ErrEventsPurged", err)
	}
	// Events too large are not shared.
	big := make([]byte, SharedEventMaxBytes+1)
	_ = a.Open(ctx, "s", "big")
	_ = a.Append(ctx, "s", "big", big)
	if got, _ := collect(t, b, "s", "big", -1); len(got) != 0 {
		t.Fatalf("an event over %d bytes was shared", SharedEventMaxBytes)
	}
}
