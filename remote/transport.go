package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/egress"
)

// transport builds the MCP transport of one connection attempt. Its
// long-lived parts (the SSE stream, the stdio child) live until sessionCtx
// ends; stopSession ends it early if the attempt fails.
func (u *upstream) transport(sessionCtx context.Context, stopSession context.CancelFunc) (mcp.Transport, *process, error) {
	switch u.cfg.Transport {
	case TransportStreamable:
		// go-sdk needs its own streamable connection unwrapped (it
		// type-asserts it for an unexported method), so notifications
		// are counted in the HTTP response streams instead.
		client := u.httpClient()
		if u.usesOAuth() {
			// The pool's own session carries the shared credential.
			client, _ = u.oauthClient("")
		}
		return u.streamableTransport(client), nil, nil
	case TransportSSE:
		client := u.httpClient()
		client = &http.Client{
			Transport:     limitedEventStreams{base: client.Transport, limit: u.maxResultBytes(), tooLarge: &u.tooLarge},
			CheckRedirect: client.CheckRedirect,
		}
		return taskCaptureTransport{inner: noteCountingTransport{read: &u.notesRead, inner: &sessionScopedTransport{
			inner:       &mcp.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: client, MaxEventSize: int(u.maxResultBytes() + eventSizeSlack)},
			sessionCtx:  sessionCtx,
			stopSession: stopSession,
		}}}, nil, nil
	case TransportStdio:
		proc, err := u.newProcess()
		if err != nil {
			return nil, nil, err
		}
		return taskCaptureTransport{inner: noteCountingTransport{inner: proc.transport(u.maxResultBytes(), &u.tooLarge), read: &u.notesRead}}, proc, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", u.cfg.Transport)
}

// streamableTransport is go-sdk's streamable client transport over client,
// with what the pool adds to its requests and responses: the bound on
// answers (limit.go), the count of notifications (settle) and the capture
// of task results (tasks.go).
func (u *upstream) streamableTransport(client *http.Client) *mcp.StreamableClientTransport {
	limited := answerLimitRoundTripper{base: client.Transport, limit: u.maxResultBytes(), upstream: u.cfg.Name}
	return &mcp.StreamableClientTransport{
		Endpoint: u.cfg.URL,
		HTTPClient: &http.Client{
			Transport:     taskRoundTripper{base: noteCountingRoundTripper{base: limited, read: &u.notesRead}},
			CheckRedirect: client.CheckRedirect,
		},
		// Above the bound: answerLimitRoundTripper refuses an answer
		// first, with a clear error; this bounds the standalone stream.
		MaxEventSize: int(u.maxResultBytes() + eventSizeSlack),
	}
}

// httpClient is the pool's pooled client with the upstream's headers added
// to the requests for the upstream's own origin. It has no overall timeout:
// streams are long-lived, and each call is bounded by its context.
//
// Credentials go only to the configured origin (scheme, host and port):
// the pool's client refuses redirects to another origin, and a request to
// another origin (the POST endpoint a legacy SSE upstream names) goes
// without the headers.
func (u *upstream) httpClient() *http.Client {
	if len(u.cfg.Headers) == 0 {
		return u.pool.http
	}
	origin, err := url.Parse(u.cfg.URL)
	if err != nil {
		return u.pool.http // unreachable: the URL was validated
	}
	return &http.Client{
		Transport:     &headerTransport{base: u.pool.http.Transport, headers: u.cfg.Headers, origin: origin},
		CheckRedirect: u.pool.http.CheckRedirect,
	}
}

// headerTransport adds fixed headers (credentials, usually) to the requests
// for one origin.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  *url.URL
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !egress.SameOrigin(req.URL, t.origin) {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// drainGrace is how long the response to a POST may still be read after its
// request's context has ended, once the response headers are in.
const drainGrace = time.Second

// drainingTransport lets the response of a POST (a call, or a notification)
// be read to its end after the call's context is cancelled, so that its
// connection is reused. go-sdk hands a call its answer as soon as the answer's
// event arrives and reads the rest of the response (the end of the SSE
// stream) afterwards, with the call's context; [upstream.CallTool] cancels
// that context as it returns, and net/http then closed the connection instead
// of reusing it: about one relayed call in twenty opened a new upstream
// connection. Cancellation still applies as before while waiting for the
// response headers, and a response body still unread drainGrace after the
// context ended (a hung upstream) is aborted.
type drainingTransport struct {
	base http.RoundTripper
}

func (t drainingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return t.base.RoundTrip(req)
	}
	parent := req.Context()
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	var headersIn atomic.Bool
	var grace atomic.Pointer[time.Timer]
	stop := context.AfterFunc(parent, func() {
		if headersIn.Load() {
			grace.Store(time.AfterFunc(drainGrace, func() { cancel(context.Cause(parent)) }))
			return
		}
		cancel(context.Cause(parent))
	})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		cancel(nil)
		return nil, err
	}
	headersIn.Store(true)
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() {
		stop()
		if g := grace.Load(); g != nil {
			g.Stop()
		}
		cancel(nil)
	}}
	return resp, nil
}

// releasingBody releases its request's context when closed.
type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// sessionScopedTransport connects the SSE client transport with the
// session's context instead of the connect attempt's: the SDK opens the
// event stream with the context it is given, so the attempt's timeout would
// otherwise end the stream right after the handshake. The attempt's context
// still bounds the connect itself.
type sessionScopedTransport struct {
	inner       mcp.Transport
	sessionCtx  context.Context
	stopSession context.CancelFunc
}

func (t *sessionScopedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stop := context.AfterFunc(ctx, t.stopSession)
	conn, err := t.inner.Connect(t.sessionCtx)
	if !stop() {
		// The attempt ended while connecting; the stream is being torn
		// down with the session context.
		if conn != nil {
			_ = conn.Close()
		}
		return nil, fmt.Errorf("connect: %w", ctx.Err())
	}
	return conn, err
}

// noteCountingTransport counts the progress and log notifications its
// connection reads, in the order the upstream sent them, so that a call's
// answer can wait for those sent before it (see [upstream.settle]).
type noteCountingTransport struct {
	inner mcp.Transport
	read  *atomic.Int64
}

func (t noteCountingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &noteCountingConn{Connection: conn, read: t.read}, nil
}

type noteCountingConn struct {
	mcp.Connection
	read *atomic.Int64
}

func (c *noteCountingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && isCountedNote(req.Method) {
		c.read.Add(1)
	}
	return msg, err
}

func isCountedNote(method string) bool {
	return method == "notifications/progress" || method == "notifications/message"
}

// countedNoteTokens are the counted notifications' method names as JSON
// strings. Quoted this way they cannot occur inside another JSON string (its
// quotes would be escaped), so in an event stream they mark the
// notifications themselves; a string value equal to one (rare) costs one
// settle wait, no more.
var countedNoteTokens = [][]byte{[]byte(`"notifications/progress"`), []byte(`"notifications/message"`)}

// noteCountingRoundTripper counts the counted notifications in the event
// streams of streamable HTTP responses as go-sdk reads them, before it
// decodes and queues their messages.
type noteCountingRoundTripper struct {
	base http.RoundTripper
	read *atomic.Int64
}

func (t noteCountingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &noteCountingBody{ReadCloser: resp.Body, read: t.read}
	return resp, nil
}

// noteCountingBody counts countedNoteTokens in what is read through it,
// including those split across reads.
type noteCountingBody struct {
	io.ReadCloser
	read *atomic.Int64
	tail []byte // the previous read's last bytes, shorter than any token
}

func (b *noteCountingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.count(p[:n])
	}
	return n, err
}

func (b *noteCountingBody) count(chunk []byte) {
	const keep = len(`"notifications/progress"`) - 1 // the longest token, less one byte
	var found int64
	for _, tok := range countedNoteTokens {
		found += int64(bytes.Count(chunk, tok))
		if len(b.tail) > 0 {
			// Occurrences straddling the boundary; both sides are
			// shorter than tok, so none is counted twice.
			edge := slices.Concat(b.tail[max(0, len(b.tail)-(len(tok)-1)):], chunk[:min(len(chunk), len(tok)-1)])
			found += int64(bytes.Count(edge, tok))
		}
	}
	if found > 0 {
		b.read.Add(found)
	}
	if len(chunk) >= keep {
		b.tail = append(b.tail[:0], chunk[len(chunk)-keep:]...)
	} else {
		b.tail = append(b.tail, chunk...)
		b.tail = b.tail[max(0, len(b.tail)-keep):]
	}
}
