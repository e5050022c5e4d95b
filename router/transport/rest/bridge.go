// Package rest is the REST bridge: POST /mcp-json, one tool call without
// an MCP session, for HTTP clients that do not speak MCP. It turns the
// request into a tools/call, has the router run it ([Router]), and
// answers in plain JSON ([BridgeResult], [BridgeError]).
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/internal/panicerr"
)

// Path is where the router's HTTP handler serves the REST bridge.
const Path = "/mcp-json"

// BridgeRequest is the body of POST /mcp-json: the tool to call and its
// arguments (an object, or absent for none).
type BridgeRequest struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params,omitempty"`
}

// BridgeResult is the answer of POST /mcp-json when the tool ran (HTTP 200),
// whether it succeeded or reported a failure of its own.
//
// Result is the tool's structuredContent when it sent one; otherwise its
// text content, joined by newlines, when all of its content is text;
// otherwise its whole content array, as MCP encodes it. IsError is the
// tool's isError: a failure of the tool itself (an upstream error, a
// missing file…) is a tool-level result, not an HTTP error, exactly as a
// tools/call answers it, and Result then carries the error text.
type BridgeResult struct {
	Result  any  `json:"result"`
	IsError bool `json:"isError"`
}

// BridgeError is the body of every answer of POST /mcp-json that is not
// 200. Tools lists, on 404, the tools the caller may use; Errors and
// Missing are, on 400 for arguments the schema rejects, what tools/validate
// reports (JSON pointers into params).
type BridgeError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Tools   []string                    `json:"tools,omitempty"`
	Errors  []agentsmcp.ValidationIssue `json:"errors,omitempty"`
	Missing []string                    `json:"missing,omitempty"`
}

// The error codes of [BridgeError].
const (
	BridgeMethodNotAllowed = "method_not_allowed" // 405
	BridgeUnsupportedType  = "unsupported_media"  // 415
	BridgeTooLarge         = "body_too_large"     // 413
	BridgeMalformed        = "malformed_request"  // 400: not JSON, or not {"tool", "params"}
	BridgeInvalidParams    = "invalid_params"     // 400: the schema rejects params
	BridgeUnknownTool      = "unknown_tool"       // 404: unknown, or not allowed for the caller
	BridgeRateLimited      = "rate_limited"       // 429: the rate limit of a caller without credentials of its own (the HTTP limiter in front answers the others, with its own body)
	BridgeQuotaExceeded    = "quota_exceeded"     // 429: the tool refused to store more for the caller's principal (agentsmcp.EQUOTA)
	BridgeUpstreamError    = "upstream_error"     // 502: the provider answered a JSON-RPC error
	BridgeUnavailable      = "unavailable"        // 503: shutting down
	BridgeInternal         = "internal_error"     // 500
)

// Router is what the REST bridge needs of the router.
type Router interface {
	// CallWithoutSession runs req, a tools/call of an HTTP caller without
	// an MCP session (its Extra carries the HTTP request's header and
	// token), on the path of a client's tools/call: the caller's
	// principal, request id and delegated token from req, the rate limit
	// of a caller without credentials of its own, the caller's
	// allowlist, the refusal while draining, argument validation, the
	// middleware every entry point runs, the provider, and the record of
	// the call. It reports what stopped the call before the provider as
	// [*RateLimited], [*UnknownTool], [ErrUnavailable] or
	// [*InvalidArguments]; a panic as [ErrInternal]; a provider's
	// JSON-RPC error as a *jsonrpc.Error and an [agentsmcp.EQUOTA] error
	// as itself. Any other failure of the provider is a tool-level error
	// result, as a tools/call answers it.
	CallWithoutSession(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// RateLimited refuses a caller without credentials of its own over the
// rate limit; it may retry after Wait.
type RateLimited struct{ Wait time.Duration }

func (e *RateLimited) Error() string {
	return fmt.Sprintf("rate limit exceeded; retry after %s", e.Wait.Round(time.Millisecond))
}

// UnknownTool refuses a tool that is unknown or outside the caller's
// allowlist (the same answer for both); Tools are those it may use,
// sorted.
type UnknownTool struct{ Tools []string }

func (e *UnknownTool) Error() string { return "unknown tool" }

// InvalidArguments refuses arguments that are not a JSON object of the
// tool's schema: Message is the summary, Issues and Missing what
// tools/validate reports.
type InvalidArguments struct {
	Message string
	Issues  []agentsmcp.ValidationIssue
	Missing []string
}

func (e *InvalidArguments) Error() string { return e.Message }

// The refusals of [Router.CallWithoutSession] that carry nothing more.
var (
	ErrUnavailable = errors.New("server is shutting down; retry on another replica or after restart")
	ErrInternal    = errors.New("internal error")
)

// New returns the handler of POST /mcp-json: one tool call without an MCP
// session. It takes the path of a client's tools/call: the credentials,
// the rate limit and the Host/Origin checks of /mcp are in front of it
// (the HTTP handler of the router wraps both alike), and
// [Router.CallWithoutSession] applies the rest. Bodies are bounded by
// maxBody; a panic is logged on logger and answered 500.
//
// The caller has no session, so it cannot be asked anything: a tool that
// needs to ask (sampling, elicitation, the agents' confirmation of a
// destructive step) behaves as for any client without those capabilities.
// The agents' executor then leaves the step waiting and the task paused.
func New(r Router, maxBody int64, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// A panic of the tool is the router's internal error (below);
		// anything else here answers 500 too, rather than a dropped
		// connection. Nothing is written before the end.
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				panicerr.Log(logger, panicerr.Recovered(v), "path", Path)
				writeBridgeError(w, http.StatusInternalServerError, BridgeInternal, "internal error", nil)
			}
		}()
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeBridgeError(w, http.StatusMethodNotAllowed, BridgeMethodNotAllowed, "use POST", nil)
			return
		}
		if !IsJSON(req.Header.Get("Content-Type")) {
			writeBridgeError(w, http.StatusUnsupportedMediaType, BridgeUnsupportedType, "the body must be sent with Content-Type: application/json", nil)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeBridgeError(w, http.StatusRequestEntityTooLarge, BridgeTooLarge,
					fmt.Sprintf("request body exceeds the limit of %d bytes", mbe.Limit), nil)
				return
			}
			writeBridgeError(w, http.StatusBadRequest, BridgeMalformed, "failed to read the request body", nil)
			return
		}
		call, msg := decodeBridgeRequest(body)
		if msg != "" {
			writeBridgeError(w, http.StatusBadRequest, BridgeMalformed, msg, nil)
			return
		}

		creq := &mcp.CallToolRequest{
			Params: &mcp.CallToolParamsRaw{Name: call.Tool, Arguments: call.Params},
			Extra:  &mcp.RequestExtra{Header: req.Header.Clone(), TokenInfo: sdkauth.TokenInfoFromContext(req.Context())},
		}
		res, err := r.CallWithoutSession(req.Context(), creq)
		if err != nil {
			writeCallError(w, call.Tool, err)
			return
		}
		out, err := json.Marshal(BridgeResult{Result: bridgeValue(res), IsError: res.IsError})
		if err != nil {
			writeBridgeError(w, http.StatusInternalServerError, BridgeInternal, "the tool's result cannot be encoded", nil)
			return
		}
		writeBridgeJSON(w, http.StatusOK, out)
	})
}

// writeCallError answers a call of tool that [Router.CallWithoutSession]
// refused or that failed.
func writeCallError(w http.ResponseWriter, tool string, err error) {
	var (
		limited *RateLimited
		unknown *UnknownTool
		invalid *InvalidArguments
		werr    *jsonrpc.Error
	)
	switch {
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(limited.Wait.Seconds()))))
		writeBridgeError(w, http.StatusTooManyRequests, BridgeRateLimited, limited.Error(), nil)
	case errors.As(err, &unknown):
		// The same answer for both: a tool outside the allowlist does
		// not exist for this caller.
		writeBridgeError(w, http.StatusNotFound, BridgeUnknownTool, fmt.Sprintf("unknown tool %q; the tools this credential may use are listed in \"tools\"", tool),
			func(b *BridgeError) { b.Tools = unknown.Tools })
	case errors.Is(err, ErrUnavailable):
		writeBridgeError(w, http.StatusServiceUnavailable, BridgeUnavailable, ErrUnavailable.Error(), nil)
	case errors.As(err, &invalid):
		writeBridgeError(w, http.StatusBadRequest, BridgeInvalidParams, invalid.Message, func(b *BridgeError) {
			b.Errors, b.Missing = invalid.Issues, invalid.Missing
		})
	case errors.As(err, &werr):
		writeBridgeError(w, http.StatusBadGateway, BridgeUpstreamError,
			fmt.Sprintf("tool %q: JSON-RPC error %d: %s", tool, werr.Code, werr.Message), nil)
	case agentsmcp.ErrorCode(err) == agentsmcp.EQUOTA:
		// The caller's principal holds all its quota allows: an HTTP
		// client's 429, where MCP gets an isError result.
		writeBridgeError(w, http.StatusTooManyRequests, BridgeQuotaExceeded, agentsmcp.ErrorMessage(err), nil)
	default: // ErrInternal, or what the Router's contract does not allow
		writeBridgeError(w, http.StatusInternalServerError, BridgeInternal, "internal error", nil)
	}
}

// decodeBridgeRequest parses the body of POST /mcp-json, or says what is
// wrong with it.
func decodeBridgeRequest(body []byte) (BridgeRequest, string) {
	var call BridgeRequest
	body = bytes.TrimSpace(body)
	if len(body) == 0 || !json.Valid(body) {
		return call, "the body is not valid JSON"
	}
	if body[0] != '{' {
		return call, `the body must be a JSON object {"tool": "<name>", "params": {…}}`
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return call, `the body must be a JSON object {"tool": "<name>", "params": {…}}`
	}
	for k := range members {
		if k != "tool" && k != "params" {
			return call, fmt.Sprintf(`unknown member %q: the body has only "tool" and "params"`, k)
		}
	}
	if err := json.Unmarshal(members["tool"], &call.Tool); err != nil || members["tool"] == nil {
		return call, `"tool" is required` + " and must be a string"
	}
	if call.Tool == "" {
		return call, `"tool" is required`
	}
	if params := bytes.TrimSpace(members["params"]); len(params) > 0 && string(params) != "null" {
		if params[0] != '{' {
			return call, `"params" must be a JSON object`
		}
		call.Params = params
	}
	return call, ""
}

// bridgeValue is [BridgeResult.Result] of res.
func bridgeValue(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	texts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			return res.Content
		}
		texts = append(texts, t.Text)
	}
	return strings.Join(texts, "\n")
}

func writeBridgeError(w http.ResponseWriter, status int, code, msg string, fill func(*BridgeError)) {
	var b BridgeError
	b.Error.Code, b.Error.Message = code, msg
	if fill != nil {
		fill(&b)
	}
	out, _ := json.Marshal(b)
	writeBridgeJSON(w, status, out)
}

func writeBridgeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// IsJSON reports whether a Content-Type names JSON.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
