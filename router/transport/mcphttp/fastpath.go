package mcphttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/internal/panicerr"
	"github.com/agents-mcp/agents-mcp/router/internal/testknob"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// The tools/call fast path (ADR 0014). go-sdk's streamable server decodes a
// message about six times on its way to a tool handler (the batch, the
// request's _meta twice, the protocol version, the params), each time with
// a fresh decoder and a 32 KiB buffer, and answers through its session's
// connection and stream machinery. For the common call of a relayed tool
// the fast path reads the request once (parseFastToolCall), runs the
// router's own middleware chain and tool handler on it, exactly as go-sdk
// would call them, and writes the answer itself, framed as go-sdk frames
// it. Everything else goes to go-sdk unchanged.
//
// It serves the stateful /mcp endpoint and, through serveSSE
// (fastpath_sse.go), legacy SSE sessions. A stateless request gets a
// temporary go-sdk session whose log level is "info", so an upstream's log
// messages during the call go on the call's stream, which only that session
// can address. The fast path therefore leaves stateless requests to go-sdk.
//
// It takes a POST on the stateful /mcp endpoint only when all of these hold
// (fastPath.serve and parseFastToolCall decide; each is what makes the
// answer provably the one go-sdk would give):
//
//   - the body is one tools/call request of parseFastToolCall's plain form,
//     so without _meta: no progress token (progress would travel on the
//     request's stream, which only go-sdk's session can address), no
//     protocol version or Tasks extension in _meta;
//   - Content-Type is application/json, Accept names both JSON and event
//     streams, there is no Last-Event-ID, and Mcp-Protocol-Version is one
//     go-sdk supports and before 2026-07-28 (go-sdk's own checks, which then
//     pass; without the header go-sdk decides);
//   - Mcp-Session-Id names a session of this endpoint that go-sdk created,
//     that is still open, that has initialized (go-sdk holds its initialize
//     params and the client has begun working in it), and that belongs to
//     the request's principal (the rule session.Limits.ServeStateful applies, stricter
//     than go-sdk's user check); go-sdk acknowledges
//     notifications/initialized before it handles it, so a call that
//     overtakes it goes to go-sdk;
//   - its client declared neither sampling nor elicitation and has not set
//     a log level: then nothing the upstream sends during the call can be
//     relayed to the client (remote/forward.go refuses such requests
//     without contacting it, and a log message is dropped by go-sdk for a
//     session without a level), so nothing but the answer is written;
//   - the tool is a [mcpwire.QuietCaller]'s that reports a quiet call
//     now (a relayed upstream that will not ask the client for roots or
//     anything else on its own).
//
// What the fast path keeps from go-sdk's path: HTTP authentication and
// rate limits, which sit in front of both; the same middleware chain
// (allowlists, drain, request ids, tracing context, tasks) around the
// same tool handler (validation, the provider with its timeout
// and circuit breaker, the audit and tool-performance record), the
// request's auth info and headers in [mcp.RequestExtra], the answer's
// encoding ([jsonrpc.EncodeMessage]), the SSE framing with go-sdk's headers,
// the priming event and event ids in the same event store (so a client
// whose stream broke resumes with Last-Event-ID as before: a resumption of
// a stream whose call is still running waits for its answer), the
// idle-session timer (kept by session.Table for both paths), the refusal of
// a second call with an id in flight, and cancellation by
// notifications/cancelled, which arrives as a POST of its own and is passed
// on to go-sdk as well. As with go-sdk's stateful handler, a client that
// disconnects does not cancel its call (it may resume the stream); the
// session's end does.
//
// What differs, and why it does not matter: a call with the same id as a
// call in flight on go-sdk's path (or the reverse) is not refused (each
// path knows only its own ids); a session closed in the instant before
// a call arrives may still serve it; and the priming event is held back
// for up to defaultPrimingDelay (fastAnswer), so that a quick call's
// response is one write on the caller's connection instead of three. A
// client that loses the connection before the priming event arrives
// never had an id to resume with, and for a call shorter than the delay
// the answer arrives with it.
type fastPath struct {
	router Router
	table  *session.Table
	events mcp.EventStore

	mu       sync.Mutex
	inflight map[fastCallKey]*fastCall
	streams  map[string]*fastCall // by stream id, for resumption
	sessions map[string]int       // session id → calls in flight

	// taken counts the calls the fast path served (tests read it).
	taken atomic.Uint64
}

type fastCallKey struct {
	session string
	id      jsonrpc.ID
}

type fastCall struct {
	cancel context.CancelFunc
	done   chan struct{} // closed by finish once the answer is stored or the call ended
	finish func()
}

// newFastCall returns a call in flight that cancel ends.
func newFastCall(cancel context.CancelFunc) *fastCall {
	done := make(chan struct{})
	return &fastCall{cancel: cancel, done: done, finish: sync.OnceFunc(func() { close(done) })}
}

func newFastPath(r Router, table *session.Table, events mcp.EventStore) *fastPath {
	return &fastPath{
		router: r, table: table, events: events,
		inflight: map[fastCallKey]*fastCall{}, streams: map[string]*fastCall{}, sessions: map[string]int{},
	}
}

// fastProtocolVersions are the Mcp-Protocol-Version values the fast path
// serves: those go-sdk's server supports (the router does not narrow them)
// before the sessionless revision.
var fastProtocolVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool {
	return mcpwire.Revision(v).Sessionless()
})

// serve answers req if it is a fast-path call and reports whether it did;
// when it reports false it has written nothing. body is req's body.
func (f *fastPath) serve(w http.ResponseWriter, req *http.Request, body []byte) bool {
	sid := req.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return false
	}
	version := req.Header.Get("Mcp-Protocol-Version")
	if !slices.Contains(fastProtocolVersions, version) || baseMediaType(req.Header.Get("Content-Type")) != "application/json" ||
		len(req.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if jsonOK, streamOK := streamableAccepts(req.Header.Values("Accept")); !jsonOK || !streamOK {
		return false
	}
	call, ok := parseFastToolCall(body)
	if !ok {
		return false
	}
	ss, owner, initialized, logs, ended := f.table.Streamable(sid)
	if ss == nil || !initialized || logs || owner != session.Owner(req) {
		return false
	}
	caps, quiet := f.quiet(ss, call.name)
	if !quiet {
		return false
	}
	f.table.StartPOST(sid)
	defer f.table.EndPOST(sid)
	f.taken.Add(1)
	f.answer(w, req, sid, ss, caps, ended, version, call)
	return true
}

// quiet reports whether a call of tool name in ss, an initialized session
// whose client set no log level, can only produce its answer: the client
// declared neither sampling nor elicitation, and the tool is a
// [mcpwire.QuietCaller]'s that reports a quiet call now. caps are the
// session's protocol capabilities, computed here once for the call: the
// fast path is the edge of its requests.
func (f *fastPath) quiet(ss *mcp.ServerSession, name string) (caps mcpwire.Capabilities, ok bool) {
	init := ss.InitializeParams()
	if init == nil {
		return caps, false
	}
	caps = mcpwire.SessionCapabilities(init)
	if caps.Sampling() || caps.Elicitation() {
		return caps, false
	}
	return caps, f.router.QuietTool(name)
}

// answer runs call and writes its answer as go-sdk's servePOST and
// streamableServerConn.Write would for a stateful, SSE-mode handler with
// an event store.
func (f *fastPath) answer(w http.ResponseWriter, req *http.Request, sid string, ss *mcp.ServerSession, caps mcpwire.Capabilities,
	ended context.Context, version string, call fastToolCall) {
	streamID := rand.Text()
	ctx := req.Context()

	// The call's context: the request's values, not its end (go-sdk's
	// handler does not end with the POST either), ended by
	// notifications/cancelled or by the session's end.
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ended, cancel)
	defer stop()
	fc := newFastCall(cancel)
	key := fastCallKey{sid, call.id}
	// The duplicate check comes before the stream is opened, as in
	// go-sdk: a refused request must leave no stream in the event store,
	// where it would push out other sessions' resumable streams.
	if !f.begin(key, streamID, fc) {
		writeJSONRPCErrorTo(w, http.StatusBadRequest, call.id, &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("duplicate in-flight request ID %v", call.id.Raw()),
		})
		return
	}
	defer f.end(key, streamID, fc)
	if err := f.events.Open(ctx, sid, streamID); err != nil {
		http.Error(w, fmt.Sprintf("storing stream: %v", err), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")

	idx := 0
	out := &fastAnswer{w: w}
	// Every return from here on writes what is held back, so the client
	// gets the priming event even when the call ends without an answer,
	// and stops the timer, so nothing is written after the handler
	// returned.
	defer out.finish(nil)
	if mcpwire.Revision(version).Primes() {
		// go-sdk's priming event, with the event line transport.PrimingWriter
		// removes (router/transport/priming.go).
		if err := f.events.Append(ctx, sid, streamID, nil); err != nil {
			f.router.Logger().Warn(fmt.Sprintf("Storing priming event: %v", err))
		}
		out.prime(appendSSE(nil, nil, streamID, 0, false), primingDelay())
		idx = 1
	}

	data := f.invoke(callCtx, ss, caps, &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(ctx), Header: req.Header}, call)
	if data == nil {
		return
	}
	if ended.Err() != nil {
		return // go-sdk delivers nothing on a closed session
	}
	if f.events.Append(ctx, sid, streamID, data) == nil {
		fc.finish() // a resumption now finds the answer stored
	}
	out.finish(appendSSE(nil, data, streamID, idx, true))
}

// defaultPrimingDelay is how long the fast path holds the priming event
// back before it flushes it alone (ADR 0014). A relayed call that answers
// sooner, most of them even at 32 clients on a loaded machine, sends the
// priming event and its answer in one write; a longer call's client gets
// its resumption id this much later than go-sdk would send it.
const defaultPrimingDelay = 10 * time.Millisecond

// primingDelay is defaultPrimingDelay unless a test set another
// (testknob.PrimingDelay).
func primingDelay() time.Duration {
	if d := testknob.PrimingDelay.Load(); d != 0 {
		return time.Duration(d)
	}
	return defaultPrimingDelay
}

// fastAnswer writes a fast-path call's response so that a quick call
// costs one write on the caller's connection: the priming event is held
// back and goes out with the answer, unless the call outlasts the delay
// given to prime, when a timer flushes it alone so that the client gets
// its resumption id while the call runs. The answer is not flushed:
// net/http writes it, with the headers and the end of the body (a
// Content-Length when the whole body fits its buffer), when the handler
// returns.
//
// mu serializes the timer and the handler on the ResponseWriter, which
// is not safe for concurrent use.
type fastAnswer struct {
	w http.ResponseWriter

	mu      sync.Mutex
	pending []byte      // the priming event, until written
	timer   *time.Timer // flushes pending; nil without a priming event
	done    bool        // finish ran: nothing more may be written
}

// prime holds the priming event back for up to delay.
func (a *fastAnswer) prime(event []byte, delay time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending = event
	a.timer = time.AfterFunc(delay, a.flushPending)
}

// flushPending is the timer's: it writes and flushes the priming event
// unless the answer has been written meanwhile.
func (a *fastAnswer) flushPending() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done || a.pending == nil {
		return
	}
	_, _ = a.w.Write(a.pending)
	a.pending = nil
	_ = http.NewResponseController(a.w).Flush()
}

// finish writes the priming event if it is still held back, then answer
// (nil for none), in one Write, and ends the writing: a timer that fires
// after it writes nothing. Only the first call writes.
func (a *fastAnswer) finish(answer []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	a.done = true
	if a.timer != nil {
		a.timer.Stop()
	}
	b := a.pending
	a.pending = nil
	if b == nil {
		b = answer
	} else {
		b = append(b, answer...)
	}
	if len(b) > 0 {
		_, _ = a.w.Write(b)
	}
}

// invoke runs call in ss through the router's middleware and tool handler
// and returns the encoded answer; nil only if not even an error answer
// could be encoded. A panic on the way (the chain contains its own, so
// this is the encoding's) answers -32603 for the call's id (as router/recover.go describes).
func (f *fastPath) invoke(ctx context.Context, ss *mcp.ServerSession, caps mcpwire.Capabilities, extra *mcp.RequestExtra, call fastToolCall) (data []byte) {
	defer func() {
		if v := recover(); v != nil {
			panicerr.Log(f.router.Logger(), panicerr.Recovered(v), "method", "tools/call", "tool", call.name, "in", "the fast path")
			data, _ = encodeResponse(call.id, nil, panicerr.Internal())
		}
	}()
	res, err := f.router.CallTool(mcpwire.WithCapabilities(ctx, caps), &mcp.CallToolRequest{
		Session: ss,
		Params:  &mcp.CallToolParamsRaw{Name: call.name, Arguments: call.args},
		Extra:   extra,
	})
	data, encErr := encodeResponse(call.id, res, err)
	if encErr != nil {
		// The client must still get an answer for its id.
		f.router.Logger().Error("tools/call fast path: encoding the answer", "error", encErr)
		if data, encErr = encodeResponse(call.id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "the result could not be encoded"}); encErr != nil {
			return nil
		}
	}
	return data
}

// begin registers a call in flight; false if its id is already in flight
// on the session.
func (f *fastPath) begin(key fastCallKey, streamID string, fc *fastCall) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.inflight[key]; dup {
		return false
	}
	f.inflight[key] = fc
	if streamID != "" { // "" for a legacy SSE call, which has no stream of its own
		f.streams[streamID] = fc
	}
	f.sessions[key.session]++
	return true
}

func (f *fastPath) end(key fastCallKey, streamID string, fc *fastCall) {
	f.mu.Lock()
	delete(f.inflight, key)
	if streamID != "" {
		delete(f.streams, streamID)
	}
	if f.sessions[key.session]--; f.sessions[key.session] <= 0 {
		delete(f.sessions, key.session)
	}
	f.mu.Unlock()
	fc.finish()
}

// cancelFrom cancels the fast-path call a notifications/cancelled POST
// names, if there is one; the POST then goes on to go-sdk, which answers
// it and cancels its own call of that id, if any.
func (f *fastPath) cancelFrom(req *http.Request, body []byte) {
	sid := req.Header.Get("Mcp-Session-Id")
	if _, owner, _, _, _ := f.table.Streamable(sid); owner != session.Owner(req) {
		return // not the caller's session (or none): go-sdk refuses it
	}
	f.cancelIn(sid, body)
}

// cancelIn cancels the fast-path call of session sid that body, a
// notifications/cancelled from the session's client, names, if there is
// one.
func (f *fastPath) cancelIn(sid string, body []byte) {
	f.mu.Lock()
	n := f.sessions[sid]
	f.mu.Unlock()
	if n == 0 || !bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "notifications/cancelled" {
		return
	}
	id, err := jsonrpc.MakeID(msg.Params.RequestID)
	if err != nil {
		return
	}
	f.mu.Lock()
	fc := f.inflight[fastCallKey{sid, id}]
	f.mu.Unlock()
	if fc != nil {
		fc.cancel()
	}
}

// awaitResumed holds a GET that resumes (Last-Event-ID) the stream of a
// fast-path call still running until its answer is stored, so that
// go-sdk, which replays a stream it does not know from the event store,
// replays the answer.
func (f *fastPath) awaitResumed(req *http.Request) {
	streamID, _, ok := strings.Cut(req.Header.Get("Last-Event-ID"), "_")
	if !ok {
		return
	}
	f.mu.Lock()
	fc := f.streams[streamID]
	f.mu.Unlock()
	if fc == nil {
		return
	}
	select {
	case <-fc.done:
	case <-req.Context().Done():
	}
}

// encodeResponse encodes the answer to a request as go-sdk's jsonrpc2
// connection does (processResult, NewResponse, EncodeMessage).
func encodeResponse(id jsonrpc.ID, res mcp.Result, err error) ([]byte, error) {
	if raw, ok := res.(rawJSONResult); ok && err == nil {
		if data, ok := encodeRawResponse(id, raw.RawResultJSON()); ok {
			return data, nil
		}
	}
	return encodeResponseValue(id, res, err)
}

// rawJSONResult is a result that is JSON already: the router's relayed
// upstream result, which encodes as the upstream's bytes.
type rawJSONResult interface {
	mcp.Result
	RawResultJSON() json.RawMessage
}

// placeholderResult is the result encodeRawResponse has go-sdk encode in
// the envelope of a string id, and the envelope's end after it.
const placeholderResult = "0}"

// encodeRawResponse is encodeResponseValue for a result that is JSON
// already, in one pass over it where the generic encoding makes two (the
// result's MarshalJSON output is validated and compacted by the result's
// encoding, then again as the envelope's RawMessage) and without
// reflection for a numeric id: the envelope is written as go-sdk's encoder
// writes it (a numeric id as encoding/json writes an int64; a string id by
// go-sdk's own encoding, around a placeholder result), and the result is
// compacted in its place as encoding/json compacts a marshaler's output (no
// HTML escaping, as go-sdk's encoder sets). The bytes are the same; false
// if raw is not valid JSON, left to the generic encoding to report.
func encodeRawResponse(id jsonrpc.ID, raw json.RawMessage) ([]byte, bool) {
	b := bytes.NewBuffer(make([]byte, 0, len(raw)+64))
	if n, ok := id.Raw().(int64); ok {
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		b.Write(strconv.AppendInt(b.AvailableBuffer(), n, 10))
		b.WriteString(`,"result":`)
	} else {
		envelope, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: json.RawMessage(placeholderResult[:1])})
		if err != nil || !bytes.HasSuffix(envelope, []byte(placeholderResult)) {
			return nil, false
		}
		b.Write(envelope[:len(envelope)-len(placeholderResult)])
	}
	if json.Compact(b, raw) != nil {
		return nil, false
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

// encodeResponseValue is encodeResponse for any result.
func encodeResponseValue(id jsonrpc.ID, res mcp.Result, err error) ([]byte, error) {
	if res != nil && err != nil {
		res = nil // go-sdk discards a result given with an error
	}
	resp := &jsonrpc.Response{ID: id, Error: err}
	if res != nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return nil, err
		}
		resp.Result = bytes.TrimRight(b.Bytes(), "\n")
	} else if err == nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call returned no result"}
	}
	return jsonrpc.EncodeMessage(resp)
}

// appendSSE appends one event to b as go-sdk's writeEvent writes it: the
// answer as a "message" event, or the priming event (nil data) without an
// event line (see transport.PrimingWriter).
func appendSSE(b, data []byte, streamID string, idx int, message bool) []byte {
	if b == nil {
		b = make([]byte, 0, len(data)+len(streamID)+48)
	}
	if message {
		b = append(b, "event: message\n"...)
	}
	b = append(b, "id: "...)
	b = append(b, streamID...)
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(idx), 10)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return b
}

// writeJSONRPCErrorTo is go-sdk's writeJSONRPCError.
func writeJSONRPCErrorTo(w http.ResponseWriter, status int, id jsonrpc.ID, jerr *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: jerr}); err == nil {
		_, _ = w.Write(data)
	}
}

// streamableAccepts is go-sdk's check of a streamable POST's Accept
// header.
func streamableAccepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			token := strings.TrimSpace(raw)
			base, _, _ := strings.Cut(token, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// baseMediaType is go-sdk's: the media type without parameters, "" if
// value does not parse.
func baseMediaType(value string) string {
	mt, _, err := mime.ParseMediaType(value)
	if err != nil {
		return ""
	}
	return mt
}
