package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The codes of error bodies.
const (
	CodeInvalid         = "invalid"
	CodeNotFound        = "not_found"
	CodeConflict        = "conflict"
	CodeUnauthenticated = "unauthenticated"
	CodeForbidden       = "forbidden"
	CodeUnavailable     = "unavailable"
	CodeInternal        = "internal"
	CodeRateLimited     = "rate_limited"
	CodeQuotaExceeded   = "quota_exceeded" // 429: the principal holds all its quota allows (agentsmcp.EQUOTA)
)

// ErrorBody is the error of a response: {"error": ErrorBody}. Message is
// meant for the caller and never holds internal details.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// httpError is a failure that belongs to HTTP rather than to the domain
// (a body too large, a missing scope): it carries its own status.
type httpError struct {
	status int
	body   ErrorBody
}

func (e *httpError) Error() string { return e.body.Code + ": " + e.body.Message }

func errorf(status int, code, format string, args ...any) *httpError {
	return &httpError{status: status, body: ErrorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func invalidf(format string, args ...any) *httpError {
	return errorf(http.StatusBadRequest, CodeInvalid, format, args...)
}

func notFoundf(format string, args ...any) *httpError {
	return errorf(http.StatusNotFound, CodeNotFound, format, args...)
}

func unavailable(what string) *httpError {
	return errorf(http.StatusServiceUnavailable, CodeUnavailable, "%s is not configured on this server", what)
}

// statusOf maps an error to its response: the one place where application
// error codes become HTTP statuses. EUNAUTHORIZED from a service means a
// backend refused the server's own credentials (an embedder's API key),
// not that the caller lacks rights, so it is unavailable like any other
// backend failure; ENOTIMPLEMENTED likewise means the server cannot serve
// the request as configured. Errors without an application code are
// internal, with a generic message.
func statusOf(err error) (int, ErrorBody) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.body
	}
	msg := agentsmcp.ErrorMessage(err)
	switch agentsmcp.ErrorCode(err) {
	case agentsmcp.EINVALID:
		return http.StatusBadRequest, ErrorBody{CodeInvalid, msg}
	case agentsmcp.ENOTFOUND:
		return http.StatusNotFound, ErrorBody{CodeNotFound, msg}
	case agentsmcp.ECONFLICT:
		return http.StatusConflict, ErrorBody{CodeConflict, msg}
	case agentsmcp.EQUOTA:
		return http.StatusTooManyRequests, ErrorBody{CodeQuotaExceeded, msg}
	case agentsmcp.EUNAVAILABLE, agentsmcp.EUNAUTHORIZED, agentsmcp.ENOTIMPLEMENTED:
		return http.StatusServiceUnavailable, ErrorBody{CodeUnavailable, msg}
	}
	return http.StatusInternalServerError, ErrorBody{CodeInternal, "internal error"}
}

// fail answers err. Internal errors are logged with the request's route,
// and their details stay in the log.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := statusOf(err)
	if status == http.StatusInternalServerError {
		h.opts.Logger.Error("admin API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if st := auditStateFrom(r.Context()); st != nil {
		st.err = &body
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="agents-mcp"`)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]ErrorBody{"error": body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, notFoundf("no route %s %s", r.Method, r.URL.Path))
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, errorf(http.StatusMethodNotAllowed, CodeInvalid, "method %s is not allowed on %s", r.Method, r.URL.Path))
}

// Page is the body of every list: Items, and Next, the cursor of the
// following page ("" on the last page). Mode, on searches with q, says
// how the items were ranked: "semantic", or "lexical" when the vector
// search was unavailable and the store's word filter answered.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next"`
	Mode  string `json:"mode,omitempty"`
}

func newPage[T any](items []T, next, mode string) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{Items: items, Next: next, Mode: mode}
}
