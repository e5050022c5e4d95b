package api

import (
	"cmp"
	"log"
	"net/http"
	"time"
)

// The time limits of the HTTP server; see [NewServer].
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout bounds reading a request's headers and body
	// together: a 4 MiB body takes well under a second on any real link,
	// while a client trickling a byte a second would hold its connection
	// and handler for days.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that has sent no
	// request for this long, authenticated or not.
	DefaultIdleTimeout = 90 * time.Second
)

// ServerOptions set the time limits of [NewServer]; a zero field takes its
// default.
type ServerOptions struct {
	ReadHeaderTimeout time.Duration
	BodyReadTimeout   time.Duration
	IdleTimeout       time.Duration
	ErrorLog          *log.Logger
}

// NewServer returns the HTTP server for handler, with every time limit
// set, so that no connection is held by a client that sends nothing:
//
//   - headers must arrive within ReadHeaderTimeout, and headers plus body
//     within BodyReadTimeout. net/http lifts the read deadline once the
//     body has been read to its end (or at once when there is none), so the
//     long-lived answers of MCP (a legacy SSE stream, a streamable GET, a
//     long tool call answered over SSE) are not cut off; a test holds it
//     to that;
//   - between requests, a keep-alive connection lives IdleTimeout.
//
// There is no write timeout, for the same long-lived answers; their
// sessions have keepalive pings and timeouts of their own.
func NewServer(handler http.Handler, opts ServerOptions) *http.Server {
	readHeader := cmp.Or(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	bodyRead := max(cmp.Or(opts.BodyReadTimeout, DefaultBodyReadTimeout), readHeader)
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeader,
		ReadTimeout:       bodyRead,
		IdleTimeout:       cmp.Or(opts.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          opts.ErrorLog,
	}
}
