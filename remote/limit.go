package remote

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The bound on upstream answers. Every message an upstream
// sends is read into memory whole before it is decoded, so one answer of
// 600 MiB cost gigabytes; it is now refused once it passes
// [Options.MaxResultBytes], on every transport and for every caller:
//
//   - streamable HTTP, go-sdk's client: [answerLimitRoundTripper] bounds the
//     response to each request (a JSON body, or each event of a stream) and,
//     past the bound, stops reading, closes the response and hands go-sdk
//     in its place the JSON-RPC error [resultTooLarge] for that request, so
//     that the call fails with a message that names the limit and the
//     session goes on; go-sdk's own bound on the events of the standalone
//     stream is set just above it;
//   - streamable HTTP, the raw path (rawcall.go): the same bound and error;
//   - legacy SSE and stdio: one stream carries every answer, so a message
//     past the bound cannot be skipped without reading it; the stream is
//     cut at the bound ([limitedLines]), the session ends and is
//     re-established, and the calls in flight fail with the same error.
//
// A call's context ending stops the reading too: the response is closed
// (drainingTransport, rawToolCall) or the session's stream is, for the
// transports that share one.

// DefaultMaxResultBytes is the default of [Options.MaxResultBytes]: go-sdk's
// own bound on one event, 16 MiB.
const DefaultMaxResultBytes = 16 << 20

// CodeResultTooLarge is the JSON-RPC error code of an upstream answer
// refused for its size: -32603, an internal error of the gateway, which
// every client understands; the message names the limit.
const CodeResultTooLarge = jsonrpc.CodeInternalError

// maxResultSetting names the setting in the refusal, so that an operator
// knows what to raise.
const maxResultSetting = "limits.max_result_bytes"

// resultTooLarge is the error of an answer of upstream name over limit bytes.
func resultTooLarge(name string, limit int64) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code: CodeResultTooLarge,
		Message: fmt.Sprintf("the answer of upstream %q is larger than %d bytes, the limit of one answer (%s); it was refused and not read further",
			name, limit, maxResultSetting),
	}
}

// errResultTooLarge marks a stream that was cut because one of its messages
// passed the bound (legacy SSE, stdio): the calls that fail with it are
// answered [resultTooLarge].
var errResultTooLarge = errors.New("an upstream message passed the answer size limit")

// maxResultBytes is the bound of u's answers.
func (u *upstream) maxResultBytes() int64 { return u.pool.opts.MaxResultBytes }

// eventSizeSlack is what go-sdk's bound on one event exceeds the answer
// bound by: the bytes of the event's field names and line ends, so that
// [answerLimitRoundTripper] refuses an answer (with a clear error) before
// go-sdk would (by failing the stream).
const eventSizeSlack = 64 << 10

// answerLimitRoundTripper bounds the responses to the POSTs of go-sdk's
// streamable client (see the comment at the top of this file). Responses
// other than a 200 with JSON or an event stream (202s, errors, the
// standalone GET stream) pass unchanged.
type answerLimitRoundTripper struct {
	base     http.RoundTripper
	limit    int64
	upstream string
}

func (t answerLimitRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &limitedJSONBody{t: t, req: req, body: resp.Body, size: resp.ContentLength}
		resp.ContentLength = -1 // the refusal may stand in for the body
	case strings.HasPrefix(ct, "text/event-stream"):
		// A small buffer: most events are small, and a long line is
		// joined from several reads (under the race detector, a larger
		// buffer per response made every call measurably slower).
		resp.Body = &limitedEventBody{t: t, req: req, body: resp.Body, br: bufio.NewReaderSize(resp.Body, 4096)}
	}
	return resp, nil
}

// refusal is the JSON-RPC response that stands in for the answer to req:
// resultTooLarge, or, when the call already ended (its context), a
// cancellation that nobody waits for. ok is false when req's id cannot be
// read (then there is nothing to stand in for).
func (t answerLimitRoundTripper) refusal(req *http.Request, ended bool) ([]byte, bool) {
	id, ok := requestID(req)
	if !ok {
		return nil, false
	}
	e := resultTooLarge(t.upstream, t.limit)
	if ended {
		e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call ended before its answer was read"}
	}
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	return out, err == nil
}

// requestID is the JSON-RPC id of the request whose body req carries.
func requestID(req *http.Request) (json.RawMessage, bool) {
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	defer body.Close()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(body).Decode(&msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil, false
	}
	return msg.ID, true
}

// limitedJSONBody is the JSON body of a response within the bound. Its
// first Read reads the body whole, up to one byte past the bound: an answer
// within it is served as it came; a longer one is not read further, its
// response is closed, and the refusal is served in its place. A body that
// fails to read because the call ended is replaced by a refusal too:
// go-sdk would otherwise take the failure for its connection's and end the
// session.
type limitedJSONBody struct {
	t      answerLimitRoundTripper
	req    *http.Request
	body   io.ReadCloser
	size   int64 // the Content-Length, -1 when unknown
	out    *bytes.Reader
	closed atomic.Bool
}

func (b *limitedJSONBody) Read(p []byte) (int, error) {
	if b.out == nil {
		data, err := b.fill()
		if err != nil {
			return 0, err
		}
		b.out = bytes.NewReader(data)
	}
	return b.out.Read(p)
}

func (b *limitedJSONBody) fill() ([]byte, error) {
	var buf []byte
	if b.size >= 0 && b.size <= b.t.limit {
		buf = make([]byte, 0, b.size+1) // +1: the read that finds the end
	}
	var data []byte
	over, err := b.size > b.t.limit, error(nil) // a declared length past the bound: nothing is read
	if !over {
		data, over, err = readUpTo(b.body, b.t.limit, buf)
	}
	switch {
	case over:
		_ = b.Close()
		if out, ok := b.t.refusal(b.req, false); ok {
			return out, nil
		}
		return nil, resultTooLarge(b.t.upstream, b.t.limit)
	case err != nil && b.req.Context().Err() != nil:
		if out, ok := b.t.refusal(b.req, true); ok {
			return out, nil
		}
	}
	return data, err
}

// readUpTo reads r to its end into buf (from its length 0), or until it
// holds one byte more than limit: over then reports that r is longer
// (what is left of it is not read). buf grows by doubling, never past
// limit+1 bytes, so that a body of the limit costs at most about one and
// a half times that while it is read (bytes.Buffer would take three).
func readUpTo(r io.Reader, limit int64, buf []byte) (data []byte, over bool, err error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(max(2*int64(cap(buf)), 4<<10), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) > limit:
			return buf, true, nil
		case errors.Is(err, io.EOF):
			return buf, false, nil
		case err != nil:
			return buf, false, err
		}
	}
}

func (b *limitedJSONBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.body.Close()
}

// limitedEventBody is an event stream whose events are each within the
// bound. It passes the stream on line by line, a line once it is whole, so
// that what it passes is always well-formed; when the event being read
// passes the bound, it stops reading, closes the response, ends the event
// under a name go-sdk skips (its data was partly passed on already), and
// ends the stream with the refusal as the answer's event.
type limitedEventBody struct {
	t         answerLimitRoundTripper
	req       *http.Request
	body      io.ReadCloser
	br        *bufio.Reader
	pending   []byte // read, not yet passed on
	line      []byte // the line being read, while longer than br's buffer
	eventSize int64  // bytes of the event being read
	done      bool
	closed    atomic.Bool
}

func (b *limitedEventBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.done {
			return 0, io.EOF
		}
		if err := b.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// next reads the next whole line into pending, or cuts the stream.
func (b *limitedEventBody) next() error {
	for {
		chunk, err := b.br.ReadSlice('\n')
		b.eventSize += int64(len(chunk))
		if b.eventSize > b.t.limit {
			return b.cut()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			b.line = append(b.line, chunk...)
			continue
		}
		line := chunk
		if len(b.line) > 0 {
			line = append(b.line, chunk...)
			b.line = b.line[:0]
		}
		if err != nil {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				b.pending, b.done = line, true
				return nil
			}
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			b.eventSize = 0 // an event ends at an empty line
		}
		b.pending = line
		return nil
	}
}

// cut ends the stream at an event past the bound.
func (b *limitedEventBody) cut() error {
	b.line = nil
	_ = b.Close()
	refusal, ok := b.t.refusal(b.req, false)
	if !ok {
		return resultTooLarge(b.t.upstream, b.t.limit)
	}
	b.pending = append([]byte("event: agents-mcp-refused\n\nevent: message\ndata: "), refusal...)
	b.pending = append(b.pending, "\n\n"...)
	b.done = true
	return nil
}

func (b *limitedEventBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.body.Close()
}

// streamCut is the error of the calls that failed because their
// session's stream (legacy SSE, stdio) was cut at a message over limit
// bytes: the answer of one of them, most likely theirs.
func streamCut(name string, limit int64) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code: CodeResultTooLarge,
		Message: fmt.Sprintf("upstream %q sent a message larger than %d bytes, the limit of one answer (%s): it was refused and not read further, and the upstream's session was reconnected",
			name, limit, maxResultSetting),
	}
}

// limitedMessages cuts a stream that carries every message of a session
// (a stdio child's output: a message per line; a legacy SSE stream: a
// message per event, which ends at an empty line) at the first message
// longer than limit: nothing more of it is read, the read fails with
// errResultTooLarge, and the time is recorded in tooLarge, so that the
// calls the cut fails are told why ([upstream.tooLargeSince]).
type limitedMessages struct {
	r        io.Reader
	limit    int64
	events   bool // a message is an event, not a line
	size     int64
	lineLen  int64 // bytes of the line being read but its line end
	cut      bool
	tooLarge *atomic.Int64
}

func (l *limitedMessages) Read(p []byte) (int, error) {
	if l.cut {
		return 0, errResultTooLarge
	}
	if room := l.limit + 1 - l.size; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.account(p[:n])
	if l.size > l.limit {
		l.cut = true
		l.tooLarge.Store(time.Now().UnixNano())
		return 0, errResultTooLarge
	}
	return n, err
}

// account counts b into the message being read.
func (l *limitedMessages) account(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.size += int64(len(b))
			l.lineLen += int64(len(bytes.TrimRight(b, "\r")))
			return
		}
		l.size += int64(i + 1)
		l.lineLen += int64(len(bytes.TrimRight(b[:i], "\r")))
		if !l.events || l.lineLen == 0 {
			l.size = 0 // the message ends here
		}
		l.lineLen = 0
		b = b[i+1:]
	}
}

// limitedEventStreams cuts the event streams of a legacy SSE session at an
// event over the bound ([limitedMessages]).
type limitedEventStreams struct {
	base     http.RoundTripper
	limit    int64
	tooLarge *atomic.Int64
}

func (t limitedEventStreams) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = readCloser{Reader: &limitedMessages{r: resp.Body, limit: t.limit, events: true, tooLarge: t.tooLarge}, Closer: resp.Body}
	}
	return resp, err
}

type readCloser struct {
	io.Reader
	io.Closer
}

// tooLargeSince reports whether u's session stream was cut at an oversized
// message since start (a call's beginning).
func (u *upstream) tooLargeSince(start time.Time) bool {
	at := u.tooLarge.Load()
	return at != 0 && at >= start.UnixNano()
}
