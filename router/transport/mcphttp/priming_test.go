package mcphttp_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

type sseEvent struct {
	name, id, data string
	named          bool // an event: line was present
}

// readEvents parses a text/event-stream body as the SSE standard does.
func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			cur.data = strings.Join(data, "\n")
			out = append(out, cur)
			cur, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.name, cur.named = value, true
		case "id":
			cur.id = value
		case "data":
			data = append(data, value)
		}
	}
	return out
}

// The priming event that opens a resumable stream (2025-11-25) is an event
// with an id and empty data, of the default type "message": a client that
// handles only message events (the Python SDK warned "Unknown SSE event:
// prime" and never kept the id) records its id, and resuming from that id
// replays the answer.
func TestPrimingEventIsAMessageEventWithAnID(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	sid := routertest.Initialize(t, srv.URL+"/mcp")
	headers := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	resp, body := routertest.Post(t, srv.URL+"/mcp", []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`), headers)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/list answered %s, not a stream: %s", ct, body)
	}
	events := readEvents(t, bytes.NewReader(body))
	if len(events) < 2 {
		t.Fatalf("want a priming event and the answer, got %q", body)
	}
	prime := events[0]
	if prime.id == "" || prime.data != "" {
		t.Errorf("priming event %+v: want an id and empty data", prime)
	}
	for _, e := range events {
		if e.named && e.name != "message" {
			t.Errorf("event of type %q (a client that handles message events drops it): %+v", e.name, e)
		}
	}
	if !strings.Contains(events[1].data, `"id":5`) || !strings.Contains(events[1].data, "search_tools") {
		t.Fatalf("second event is not the answer: %+v", events[1])
	}

	// Resuming from the priming id replays the answer.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", prime.id)
	replay, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Body.Close()
	if replay.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(replay.Body)
		t.Fatalf("resume from %q: %d %s", prime.id, replay.StatusCode, b)
	}
	replayed := readEvents(t, replay.Body)
	if len(replayed) == 0 || !strings.Contains(replayed[0].data, `"id":5`) {
		t.Fatalf("resume from the priming id replayed %+v", replayed)
	}
}
