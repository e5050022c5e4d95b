package httptools_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/httptools"
)

// TestServerLimitBoundsEverySource: the server's bound on one answer
// (Options.MaxResultBytes, limits.max_result_bytes) applies to a source
// that allows itself more: an API streaming a 200 MiB answer slowly is
// refused with a tool error that names the server's limit, and it gets to
// write little more than that limit before its connection is closed.
func TestServerLimitBoundsEverySource(t *testing.T) {
	var written atomic.Int64
	closed := make(chan struct{}, 1)
	a := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 200 << 20 / len(chunk) {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err == nil {
				err = http.NewResponseController(w).Flush()
			}
			if err != nil {
				closed <- struct{}{}
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	src := httptools.Source{
		Name: "api", BaseURL: a.URL, Timeout: 30 * time.Second, MaxResponseBytes: 1 << 30,
		Endpoints: []httptools.Endpoint{{Name: "huge", Method: "GET", Path: "/huge"}},
	}
	s := newStackWith(t, httptools.Options{MaxResultBytes: 1 << 20}, src)
	res := s.call(t, "api__huge", nil)
	if !res.IsError || !strings.Contains(text(res), "larger than the limit of 1048576 bytes (limits.max_result_bytes)") {
		t.Fatalf("a 200 MiB answer: isError=%v %.300q", res.IsError, text(res))
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Errorf("the API's connection is still open (it wrote %d bytes)", written.Load())
	}
	if w := written.Load(); w > 1<<20+12<<20 {
		t.Errorf("the API wrote %d MiB before the answer was cut", w>>20)
	}
}
