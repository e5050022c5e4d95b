package remote

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

func TestNoteCountingBodyCountsNotificationsSplitAcrossReads(t *testing.T) {
	stream := strings.Join([]string{
		`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1}}` + "\n\n",
		`event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n\n",
		// Inside a string the quotes are escaped: not a notification.
		`event: message` + "\n" + `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"say \"notifications/progress\""}]}}` + "\n\n",
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n\n",
		`data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n\n",
	}, "")
	readers := map[string]func(io.Reader) io.Reader{
		"whole":     func(r io.Reader) io.Reader { return r },
		"byte":      iotest.OneByteReader,
		"half":      iotest.HalfReader,
		"ten-bytes": func(r io.Reader) io.Reader { return &chunked{r: r, n: 10} },
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			var read atomic.Int64
			b := &noteCountingBody{ReadCloser: io.NopCloser(wrap(strings.NewReader(stream))), read: &read}
			got, err := io.ReadAll(b)
			if err != nil || string(got) != stream {
				t.Fatalf("the stream must pass unchanged: err %v", err)
			}
			if read.Load() != 3 {
				t.Errorf("counted %d notifications; want 3 (two progress, one log)", read.Load())
			}
		})
	}
}

// chunked reads at most n bytes at a time.
type chunked struct {
	r io.Reader
	n int
}

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
