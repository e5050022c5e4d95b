package transport

import (
	"bytes"
	"net/http"
)

// primeEventName is the line go-sdk v1.8.0 starts its priming event with
// (the event with an id and empty data that opens a resumable stream,
// 2025-11-25). The spec names no event type for it, so an SSE parser gives
// it the default, "message"; a client that handles only message events
// (the Python SDK) drops a "prime" event with a warning and never records
// its id, so it cannot resume the stream.
var primeEventName = []byte("event: prime\n")

// PrimingWriter sends go-sdk's priming event without its event line, so
// that it is of the default type. go-sdk writes each event with one Write
// (a test checks the stream a client sees).
type PrimingWriter struct{ http.ResponseWriter }

// Write writes b, without the event line if b is the priming event.
func (p PrimingWriter) Write(b []byte) (int, error) {
	rest, ok := bytes.CutPrefix(b, primeEventName)
	if !ok {
		return p.ResponseWriter.Write(b)
	}
	n, err := p.ResponseWriter.Write(rest)
	if err != nil {
		return n, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection (go-sdk flushes
// every event).
func (p PrimingWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }
