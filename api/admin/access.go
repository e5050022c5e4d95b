package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file holds what every route goes through: the scope check, the body
// limit and strict decoding, and the audit of writes.

// handlerFunc is a route's handler; a returned error is answered by
// [Handler.fail] (the handler has written nothing then).
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// authorize checks that the request's principal carries scope.
func authorize(r *http.Request, scope string) error {
	p := agentsmcp.PrincipalFrom(r.Context())
	if p == nil {
		return errorf(http.StatusUnauthorized, CodeUnauthenticated, "authentication is required")
	}
	if !p.HasScope(scope) {
		return errorf(http.StatusForbidden, CodeForbidden, "this request needs scope %s", scope)
	}
	return nil
}

// read wraps a read-only route: scope admin:read.
func (h *Handler) read(next handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer h.recoverPanic(w, r)
		if err := authorize(r, agentsmcp.ScopeAdminRead); err != nil {
			h.refuse(w, r, err, agentsmcp.ScopeAdminRead)
			return
		}
		if err := next(w, r); err != nil {
			h.fail(w, r, err)
		}
	}
}

// write wraps a route that changes something: scope admin:write, the body
// read within MaxBodyBytes (and then available again as r.Body), and an
// audit entry whatever the outcome. scrub, when set, removes
// route-specific secrets from the body before it is redacted for the
// audit trail.
func (h *Handler) write(next handlerFunc, scrub func(json.RawMessage) json.RawMessage) http.HandlerFunc {
	return h.writeLimit(h.opts.MaxBodyBytes, next, scrub)
}

// writeLimit is write with a body limit of its own, for the routes whose
// bodies may be larger than MaxBodyBytes (an inline OpenAPI document).
func (h *Handler) writeLimit(limit int64, next handlerFunc, scrub func(json.RawMessage) json.RawMessage) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &auditState{}
		r = r.WithContext(context.WithValue(r.Context(), auditKey{}, st))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() { h.audit(r, st, rec.status, start) }()
		defer h.recoverPanic(rec, r)

		if err := authorize(r, agentsmcp.ScopeAdminWrite); err != nil {
			h.refuse(rec, r, err, agentsmcp.ScopeAdminWrite)
			return
		}
		if err := checkNotCrossSite(r); err != nil {
			h.fail(rec, r, err)
			return
		}
		body, err := readBody(rec, r, limit)
		if err != nil {
			h.fail(rec, r, err)
			return
		}
		if len(body) > 0 {
			if scrub != nil {
				st.arguments = redact.Arguments(scrub(body))
			} else {
				st.arguments = redact.Arguments(body)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := next(rec, r); err != nil {
			h.fail(rec, r, err)
		}
	}
}

// recoverPanic answers a handler's panic as an internal error (when
// nothing was written yet) instead of dropping the connection, so the
// caller gets a JSON error and the write is audited as failed.
func (h *Handler) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	h.opts.Logger.Error("admin API handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
	status, body := statusOf(errors.New("panic"))
	if st := auditStateFrom(r.Context()); st != nil {
		st.err = &body
	}
	writeJSON(w, status, map[string]ErrorBody{"error": body})
}

// refuse answers a failed scope check, with the challenge RFC 6750 asks
// for on a 403.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error, scope string) {
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusForbidden {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agents-mcp", error="insufficient_scope", scope="`+scope+`"`)
	}
	h.fail(w, r, err)
}

// checkNotCrossSite refuses a write that a web page of another site could
// have sent. Every write, even one without a body, must say
// "Content-Type: application/json": a browser sends that type cross-site
// only after a CORS preflight, which this API never grants, while a form
// or a bodiless fetch needs none. And an Origin header, when a browser
// sent one, must be the server's own: the DNS-rebinding check in front of
// the whole server admits some other origins (loopback pages, the
// configured allowed_origins) that may call /mcp but not change the
// server.
func checkNotCrossSite(r *http.Request) error {
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return errorf(http.StatusForbidden, CodeForbidden, "admin writes are refused from another origin (Origin %s, Host %s)", strconv.Quote(redact.QuoteMessage(origin)), strconv.Quote(redact.QuoteMessage(r.Host)))
		}
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return errorf(http.StatusUnsupportedMediaType, CodeInvalid, "admin writes must be sent with Content-Type: application/json, even without a body")
	}
	return nil
}

// readBody reads the request body within limit (its JSON type was checked
// by checkNotCrossSite).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errorf(http.StatusRequestEntityTooLarge, CodeInvalid, "the request body exceeds %d bytes", limit)
	} else if err != nil {
		return nil, invalidf("the request body could not be read")
	}
	return body, nil
}

// decodeBody decodes the JSON body of r into v strictly: one JSON value,
// no field that v does not have.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return invalidf("the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return invalidf("a JSON request body is required")
	}
	return decodeStrict(body, v)
}

// noBody checks that a request which takes no body has none (an empty
// object is accepted too).
func noBody(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return invalidf("the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return decodeStrict(body, &struct{}{})
}

func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidf("request body: %s", describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalidf("request body: more than one JSON value")
	}
	return nil
}

// describeJSONError words a decoding error for the caller, without
// echoing the body.
func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return "not valid JSON (at byte " + strconv.FormatInt(syntax.Offset, 10) + ")"
	case errors.As(err, &typ):
		if typ.Field != "" {
			return "field " + typ.Field + " must be " + jsonType(typ.Type.Kind().String())
		}
		return "must be a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "truncated JSON"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "ptr":
		return "of another type"
	}
	return "a number"
}

// auditState collects, while a write runs, what its audit entry needs.
type auditState struct {
	arguments json.RawMessage
	err       *ErrorBody
}

type auditKey struct{}

func auditStateFrom(ctx context.Context) *auditState {
	st, _ := ctx.Value(auditKey{}).(*auditState)
	return st
}

// maxRequestIDBytes bounds the X-Request-Id kept in the audit trail.
const maxRequestIDBytes = 128

// audit records the entry of one write.
func (h *Handler) audit(r *http.Request, st *auditState, status int, start time.Time) {
	if h.opts.Audit == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	e := &agentsmcp.AuditEntry{
		At:        start.UTC(),
		RequestID: requestID(r),
		Kind:      agentsmcp.AuditAdminWrite,
		Target:    storedform.TruncateUTF8(r.Method+" "+routePattern(r), agentsmcp.MaxAuditFieldBytes),
		Transport: "admin",
		Arguments: st.arguments,
		Outcome:   agentsmcp.AuditOK,
		Latency:   time.Since(start),
	}
	e.Principal = storedform.TruncateUTF8(agentsmcp.PrincipalIDFrom(r.Context()), agentsmcp.MaxAuditFieldBytes)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests:
		e.Outcome = agentsmcp.AuditDenied
	case status >= 400:
		e.Outcome = agentsmcp.AuditError
	}
	if st.err != nil && e.Outcome != agentsmcp.AuditOK {
		e.Error = storedform.TruncateUTF8(st.err.Code+": "+st.err.Message, agentsmcp.MaxAuditErrorBytes)
	}
	h.opts.Audit.Record(e)
}

// routePattern is the route of r as declared ("/admin/v1/upstreams/{name}"),
// so that audit targets group by route rather than by id.
func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return r.URL.Path
}

// requestID is the caller's X-Request-Id when it is short printable
// ASCII; anything else is dropped rather than stored.
func requestID(r *http.Request) string {
	id := r.Header.Get("X-Request-Id")
	if len(id) > maxRequestIDBytes {
		return ""
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return ""
		}
	}
	return id
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
