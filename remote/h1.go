package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HTTPTransport is the pool's HTTP transport ([NewHTTPTransport]): net/http's
// Transport for every request but the raw path's POSTs (rawcall.go) to a
// plain-HTTP upstream, which it writes and reads itself, over HTTP/1.1
// keep-alive connections of its own, on the caller's goroutine.
//
// Why: net/http runs a read loop and a write loop goroutine per connection
// and hands each request, response and body end across channels to them,
// several goroutine wake-ups per call; perf put half of the raw upstream
// call of a relayed tools/call in those loops. Here the caller writes the
// request and reads the response itself; the connection goes back to an
// idle pool (bounded per host by MaxIdleConnsPerHost, in all by
// MaxIdleConns, closed after IdleConnTimeout) when the response body has
// been read to its end.
//
// It dials with the Transport's DialContext, so the egress policy checks
// every connection as on net/http's path, and uses the Transport's settings
// when a request is sent. Everything unusual stays on net/http's path: https
// (net/http negotiates HTTP/2 by ALPN and owns the TLS settings), a proxy
// that the Transport's Proxy chooses for the request, HTTP/1 turned off in
// Protocols, DisableKeepAlives, a ResponseHeaderTimeout or MaxConnsPerHost
// (neither is enforced here), no DialContext, Expect or Upgrade requests,
// non-ASCII host names, and platforms where an idle connection cannot be
// probed without blocking (h1probe_other.go).
//
// The fields of the embedded Transport configure both paths; change them
// before the first request only, as with net/http.
type HTTPTransport struct {
	*http.Transport
	h1 h1Pool
}

// rawRequestKey marks the context of a raw-path request, the only requests
// [HTTPTransport] carries itself.
type rawRequestKey struct{}

// withRawRequest marks ctx's requests as the raw path's.
func withRawRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, rawRequestKey{}, true)
}

// RoundTrip sends req on its own connections when it is a raw-path POST the
// single-goroutine client can carry, on net/http's Transport otherwise.
func (t *HTTPTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context().Value(rawRequestKey{}) == nil || !t.carriesH1(req) {
		return t.Transport.RoundTrip(req)
	}
	return t.roundTripH1(req)
}

// CloseIdleConnections closes the idle connections of both paths.
func (t *HTTPTransport) CloseIdleConnections() {
	t.Transport.CloseIdleConnections()
	t.h1.closeIdle()
}

// carriesH1 reports whether req can go on the single-goroutine client (see
// [HTTPTransport] for what cannot).
func (t *HTTPTransport) carriesH1(req *http.Request) bool {
	if !h1ProbeSupported || req.URL.Scheme != "http" || req.Method == http.MethodConnect ||
		t.DialContext == nil || t.DisableKeepAlives || t.ResponseHeaderTimeout != 0 || t.MaxConnsPerHost != 0 ||
		(t.Protocols != nil && !t.Protocols.HTTP1()) ||
		req.Header.Get("Expect") != "" || req.Header.Get("Upgrade") != "" || !asciiHost(req.URL.Hostname()) {
		return false
	}
	if t.Proxy != nil {
		if p, err := t.Proxy(req); err != nil || p != nil {
			return false
		}
	}
	return true
}

func asciiHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			return false
		}
	}
	return h != ""
}

// aLongTimeAgo is a deadline in the past: set on a connection, it makes a
// blocked read or write return at once.
var aLongTimeAgo = time.Unix(1, 0)

// errH1HeaderTooLarge is the error of a response whose header exceeds the
// Transport's MaxResponseHeaderBytes.
var errH1HeaderTooLarge = errors.New("the upstream's response header is too large")

func (t *HTTPTransport) roundTripH1(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	closeBody := func() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
	}
	if ctx.Err() != nil {
		closeBody()
		return nil, context.Cause(ctx)
	}
	c, err := t.h1Conn(ctx, h1Addr(req.URL))
	if err != nil {
		closeBody()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	// The context's end unblocks the write or the read in progress; the
	// connection is then discarded (its stream is mid-message).
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, c.abort)
	}
	resp, err := c.roundTrip(req, t.maxHeaderBytes())
	if err != nil {
		if stop != nil {
			stop()
		}
		c.close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	t.h1.served.Add(1)
	keep := !resp.Close && !req.Close && c.raw != nil
	if resp.Body == http.NoBody {
		c.release(keep, stop)
		return resp, nil
	}
	resp.Body = &h1Body{c: c, body: resp.Body, ctx: ctx, stop: stop, keep: keep}
	return resp, nil
}

func (t *HTTPTransport) maxHeaderBytes() int64 {
	if t.MaxResponseHeaderBytes > 0 {
		return t.MaxResponseHeaderBytes
	}
	return 10 << 20 // net/http's default
}

// h1Addr is the host:port that u's requests connect to.
func h1Addr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// h1Conn returns an idle connection to addr that is still open, or a new
// one.
func (t *HTTPTransport) h1Conn(ctx context.Context, addr string) (*h1Conn, error) {
	for {
		c := t.h1.take(addr)
		if c == nil {
			break
		}
		if c.alive() {
			return c, nil
		}
		c.close() // closed by the upstream while idle, or unsolicited bytes
	}
	conn, err := t.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	t.h1.dialed.Add(1)
	c := &h1Conn{t: t, key: addr, conn: conn, readLimit: math.MaxInt64}
	c.br = bufio.NewReaderSize(c, 4096)
	c.bw = bufio.NewWriterSize(conn, 4096)
	if sc, ok := conn.(syscall.Conn); ok {
		// Without it the connection cannot be probed when idle, so it
		// is not kept.
		c.raw, _ = sc.SyscallConn()
	}
	return c, nil
}

// h1Conn is one connection of the single-goroutine client. It has one user
// at a time: the request it carries, or the idle pool.
type h1Conn struct {
	t         *HTTPTransport
	key       string
	conn      net.Conn
	raw       syscall.RawConn // for the idle probe; nil: never kept
	br        *bufio.Reader   // reads through the conn's Read, for readLimit
	bw        *bufio.Writer
	readLimit int64 // bytes left to read for a response header

	// Set under the pool's lock.
	idleSince time.Time
	idleTimer *time.Timer
}

// Read reads from the connection within readLimit, so that an upstream
// cannot make a response header grow without bound.
func (c *h1Conn) Read(p []byte) (int, error) {
	if c.readLimit <= 0 {
		return 0, errH1HeaderTooLarge
	}
	if int64(len(p)) > c.readLimit {
		p = p[:c.readLimit]
	}
	n, err := c.conn.Read(p)
	c.readLimit -= int64(n)
	return n, err
}

// roundTrip writes req (one write of the buffered request) and reads the
// response header, skipping informational (1xx) responses as net/http does.
func (c *h1Conn) roundTrip(req *http.Request, maxHeader int64) (*http.Response, error) {
	if err := req.Write(c.bw); err != nil { // closes req.Body
		return nil, err
	}
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	for range 5 {
		c.readLimit = maxHeader
		resp, err := http.ReadResponse(c.br, req)
		c.readLimit = math.MaxInt64
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("the upstream switched protocols, which was not asked for")
		}
		if resp.StatusCode >= 200 {
			return resp, nil
		}
	}
	return nil, fmt.Errorf("the upstream sent too many informational (1xx) responses")
}

// abort makes the connection's blocked read or write return now.
func (c *h1Conn) abort() { _ = c.conn.SetDeadline(aLongTimeAgo) }

func (c *h1Conn) close() { _ = c.conn.Close() }

// release ends the request the connection carried: back to the idle pool
// when keep holds and the request's context did not end (its AfterFunc,
// stopped by stop, may have set a past deadline), closed otherwise.
func (c *h1Conn) release(keep bool, stop func() bool) {
	if stop != nil && !stop() {
		keep = false
	}
	if keep {
		c.t.h1.put(c)
		return
	}
	c.close()
}

// h1Body is a response body of the single-goroutine client. Read to its
// end, it returns the connection to the idle pool; closed before, it drains
// what has already arrived (the end of a chunked body often has) without
// waiting, and discards the connection if that is not the end.
type h1Body struct {
	ctx  context.Context
	body io.ReadCloser // as http.ReadResponse made it
	keep bool          // the connection may carry another request

	mu      sync.Mutex
	c       *h1Conn     // nil once released
	stop    func() bool // stops the context's AfterFunc; nil when ctx cannot end
	reading bool
	closed  bool
	err     error // what Read returns once the connection is released
}

var (
	errH1ReadClosed     = errors.New("http: read on closed response body")
	errH1ConcurrentRead = errors.New("http: concurrent read on response body")
)

func (b *h1Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return 0, errH1ReadClosed
	case b.c == nil:
		err := b.err
		b.mu.Unlock()
		return 0, err
	case b.reading:
		b.mu.Unlock()
		return 0, errH1ConcurrentRead
	}
	b.reading = true
	b.mu.Unlock()

	n, err := b.body.Read(p)

	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	switch {
	case b.closed:
		// Close came during the read and aborted it; the connection
		// is mid-message.
		b.releaseLocked(false, errH1ReadClosed)
	case err == io.EOF:
		b.releaseLocked(b.keep, io.EOF)
	case err != nil:
		if b.ctx.Err() != nil {
			err = context.Cause(b.ctx)
		}
		b.releaseLocked(false, err)
	}
	return n, err
}

// h1DrainLimit bounds what Close reads of a body's rest to keep its
// connection.
const h1DrainLimit = 64 << 10

func (b *h1Body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.c == nil {
		return nil
	}
	if b.reading {
		// The Read in progress returns now and discards the connection.
		b.c.abort()
		return nil
	}
	_ = b.c.conn.SetReadDeadline(aLongTimeAgo)
	var buf [512]byte
	var err error
	for n, read := 0, 0; err == nil && read <= h1DrainLimit; read += n {
		n, err = b.body.Read(buf[:])
	}
	if err == io.EOF && b.c.conn.SetReadDeadline(time.Time{}) == nil {
		b.releaseLocked(b.keep, errH1ReadClosed)
	} else {
		b.releaseLocked(false, errH1ReadClosed)
	}
	return nil
}

func (b *h1Body) releaseLocked(keep bool, err error) {
	c := b.c
	b.c, b.err = nil, err
	c.release(keep, b.stop)
}

// h1Pool holds the idle connections of the single-goroutine client, newest
// last, per host:port.
type h1Pool struct {
	mu   sync.Mutex
	idle map[string][]*h1Conn
	n    int // idle connections in all

	dialed atomic.Int64 // connections made, for tests
	served atomic.Int64 // responses read, for tests
}

// take removes and returns the newest idle connection to key, or nil.
func (p *h1Pool) take(key string) *h1Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	conns := p.idle[key]
	if len(conns) == 0 {
		return nil
	}
	c := conns[len(conns)-1]
	conns[len(conns)-1] = nil
	p.idle[key] = conns[:len(conns)-1]
	p.n--
	if c.idleTimer != nil {
		c.idleTimer.Stop() // if it fired already, expire finds c in use
	}
	return c
}

// put makes c idle, or closes it when the pool is full.
func (p *h1Pool) put(c *h1Conn) {
	t := c.t
	perHost := t.MaxIdleConnsPerHost
	if perHost == 0 {
		perHost = http.DefaultMaxIdleConnsPerHost
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if perHost < 0 || len(p.idle[c.key]) >= perHost || (t.MaxIdleConns > 0 && p.n >= t.MaxIdleConns) {
		c.close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*h1Conn{}
	}
	p.idle[c.key] = append(p.idle[c.key], c)
	p.n++
	c.idleSince = time.Now()
	if d := t.IdleConnTimeout; d > 0 {
		if c.idleTimer == nil {
			c.idleTimer = time.AfterFunc(d, func() { p.expire(c, d) })
		} else {
			c.idleTimer.Reset(d)
		}
	}
}

// expire closes c if it is still idle and has been for d (it may have been
// taken and put back since its timer fired).
func (p *h1Pool) expire(c *h1Conn, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(c.idleSince) < d || !p.removeLocked(c) {
		return
	}
	c.close()
}

func (p *h1Pool) removeLocked(c *h1Conn) bool {
	conns := p.idle[c.key]
	for i, x := range conns {
		if x == c {
			p.idle[c.key] = append(conns[:i], conns[i+1:]...)
			conns[len(conns)-1] = nil
			p.n--
			return true
		}
	}
	return false
}

func (p *h1Pool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, conns := range p.idle {
		for _, c := range conns {
			if c.idleTimer != nil {
				c.idleTimer.Stop()
			}
			c.close()
		}
		delete(p.idle, key)
	}
	p.n = 0
}
