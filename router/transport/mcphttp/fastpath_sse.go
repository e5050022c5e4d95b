package mcphttp

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// The tools/call fast path for legacy HTTP+SSE sessions (ADR 0014). On
// go-sdk's path a message POSTed to /messages?sessionId=… is decoded by
// the sse package, queued, read by go-sdk's connection and decoded again
// on its way to the tool handler, and the answer is encoded by go-sdk and
// written on the session's GET stream. The router owns that stream (the
// sse package), so the fast path can write the answer on it itself.
//
// serveSSE takes a POSTed message when all of these hold:
//
//   - it is one tools/call request of parseFastToolCall's plain form (so
//     without _meta: no progress token, which would ask for
//     notifications only go-sdk's session sends);
//   - the session is an open legacy SSE session of the POST's principal
//     (the sse package checks the principal too), it has initialized, its
//     client has set no log level, and [fastPath.quiet] holds for the
//     call: then nothing but the answer can be written for it;
//   - no call with its id is in flight on the fast path in that session.
//     A second one goes to go-sdk, which does not know the first and
//     serves it: a client that reuses an id in flight breaks the
//     protocol, and neither path can then tell the answers apart.
//
// The POST is answered 202 as for a queued message, and the call runs in
// a goroutine the session owns (see sse.Options.FastCall for why not in
// the POST), with a context that carries the stream's values, as go-sdk's
// handlers' contexts do, and ends with the session or with a
// notifications/cancelled naming its id (which then also goes on to
// go-sdk, which ignores an id it does not know). Its answer is written as
// one 'message' event under the stream's lock, as go-sdk's writes are, so
// events stay whole; answers to different calls are unordered on both
// paths. As on go-sdk's path, a cancelled call is still answered (with
// the handler's error) while the session is open.
//
// What differs, and why it does not matter: a fast-path call may overtake
// messages POSTed before it that go-sdk has not read yet. go-sdk itself
// runs every call but initialize concurrently once read, so a client
// cannot rely on the order of calls it has not seen answered; the
// notifications it handles in order are notifications/initialized (the
// fast path waits until the session has initialized),
// notifications/roots/list_changed (nothing a quiet call asks for) and
// notifications/cancelled (which names an earlier call). And the fast
// path does not wait for room in the session's queue: like go-sdk's
// concurrent calls, its calls are bounded by the HTTP rate limits, not by
// the queue.
func (f *fastPath) serveSSE(req *http.Request, sid string, body []byte, start func(func(context.Context) []byte) bool) bool {
	call, ok := parseFastToolCall(body)
	if !ok {
		f.cancelIn(sid, body) // the sse package checked the principal
		return false
	}
	ss, owner, initialized, logs := f.table.LegacySSE(sid)
	if ss == nil || !initialized || logs || owner != session.Owner(req) {
		return false
	}
	caps, quiet := f.quiet(ss, call.name)
	if !quiet {
		return false
	}
	// Registered before the 202, so that a notifications/cancelled the
	// client sends next finds the call.
	cancelled, cancel := context.WithCancel(context.Background())
	fc := newFastCall(cancel)
	key := fastCallKey{sid, call.id}
	if !f.begin(key, "", fc) {
		cancel()
		return false
	}
	// The header is the POST's, which ends before the call does.
	extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(req.Context()), Header: req.Header.Clone()}
	f.taken.Add(1) // before the answer can reach the client
	if !start(func(ctx context.Context) []byte {
		defer f.end(key, "", fc)
		defer cancel()
		callCtx, stop := context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(cancelled, stop)()
		return f.invoke(callCtx, ss, caps, extra, call)
	}) {
		f.taken.Add(^uint64(0))
		f.end(key, "", fc)
		cancel()
	}
	return true
}
