package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// RESTBridgePath is where [HTTPHandler] serves the REST bridge.
const RESTBridgePath = "/mcp-json"

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

// serveBridge is POST /mcp-json: one tool call without an MCP session. It
// takes the path of a client's tools/call: the credentials, the rate limit
// and the Host/Origin checks of /mcp are in front of it (the same wrapping
// in [Router.HTTPHandler]), and here the caller's allowlist, the refusal
// while draining, argument validation, the middleware added with
// [Router.Use], the provider, and the record of [Options.OnToolCall] (so
// the audit trail) apply as they do there.
//
// The caller has no session, so it cannot be asked anything: a tool that
// needs to ask (sampling, elicitation, the agents' confirmation of a
// destructive step) behaves as for any client without those capabilities.
// The agents' executor then leaves the step waiting and the task paused.
func (r *Router) serveBridge(maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// A panic of the tool is dispatch's internal error (below);
		// anything else here answers 500 too, rather than a dropped
		// connection (recover.go). Nothing is written before the end.
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logPanic(r.logger, recovered(v), "path", RESTBridgePath)
				writeBridgeError(w, http.StatusInternalServerError, BridgeInternal, "internal error", nil)
			}
		}()
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeBridgeError(w, http.StatusMethodNotAllowed, BridgeMethodNotAllowed, "use POST", nil)
			return
		}
		if !isJSON(req.Header.Get("Content-Type")) {
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

		// The caller, as accessMiddleware finds it for /mcp: the principal
		// that authentication put in the TokenInfo, else the default one,
		// which is then subject to Admit (the HTTP rate limit is in front).
		ctx := req.Context()
		creq := &mcp.CallToolRequest{
			Params: &mcp.CallToolParamsRaw{Name: call.Tool, Arguments: call.Params},
			Extra:  &mcp.RequestExtra{Header: req.Header.Clone(), TokenInfo: sdkauth.TokenInfoFromContext(ctx)},
		}
		p, own := r.principalOf(creq)
		if p != nil {
			ctx = agentsmcp.WithPrincipal(ctx, p)
		}
		if id := req.Header.Get(agentsmcp.RequestIDHeader); id != "" {
			ctx = agentsmcp.WithRequestID(ctx, id)
		}
		// A JWT caller's token, for the HTTP tool sources that act as the
		// caller (ADR 0012 D7b), exactly as over /mcp.
		ctx = agentsmcp.WithDelegatedToken(ctx, delegatedTokenOf(creq))
		ctx = withClientCall(ctx, clientCall{profile: restProfile})
		if !own && p != nil && r.access.Admit != nil {
			if ok, wait := r.access.Admit(p); !ok {
				r.recordRefusal(ctx, call.Tool, call.Params, "rate limited")
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				writeBridgeError(w, http.StatusTooManyRequests, BridgeRateLimited,
					fmt.Sprintf("rate limit exceeded; retry after %s", wait.Round(time.Millisecond)), nil)
				return
			}
		}
		e, known := r.entry(call.Tool)
		if !known || !p.MayUseTool(call.Tool) {
			if known {
				r.recordRefusal(ctx, call.Tool, call.Params, "not allowed")
			}
			// The same answer for both: a tool outside the allowlist does
			// not exist for this caller.
			writeBridgeError(w, http.StatusNotFound, BridgeUnknownTool, fmt.Sprintf("unknown tool %q; the tools this credential may use are listed in \"tools\"", call.Tool),
				func(b *BridgeError) { b.Tools = r.toolNamesFor(p) })
			return
		}
		if !r.drain.enter() {
			writeBridgeError(w, http.StatusServiceUnavailable, BridgeUnavailable, errShuttingDown, nil)
			return
		}
		defer r.drain.done()

		res, refused, err := r.dispatchDirect(ctx, e, creq)
		switch {
		case refused != nil:
			writeBridgeError(w, http.StatusBadRequest, BridgeInvalidParams, refused.msg, func(b *BridgeError) {
				b.Errors, b.Missing = refused.issues, refused.missing
			})
			return
		case isPanic(err):
			writeBridgeError(w, http.StatusInternalServerError, BridgeInternal, "internal error", nil)
			return
		case err != nil:
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				writeBridgeError(w, http.StatusBadGateway, BridgeUpstreamError,
					fmt.Sprintf("tool %q: JSON-RPC error %d: %s", call.Tool, werr.Code, werr.Message), nil)
				return
			}
			if agentsmcp.ErrorCode(err) == agentsmcp.EQUOTA {
				// The caller's principal holds all its quota allows:
				// an HTTP client's 429, where MCP gets an isError result.
				writeBridgeError(w, http.StatusTooManyRequests, BridgeQuotaExceeded, agentsmcp.ErrorMessage(err), nil)
				return
			}
			// As on the MCP path (toolHandler): any other failure of the
			// provider is a tool-level error result.
			if ctx.Err() != nil {
				res = errorResult(fmt.Sprintf("tool %q was cancelled or timed out", call.Tool))
			} else {
				r.logger.Warn("tool call failed", "tool", call.Tool, "provider", e.provider.Name(), "error", err)
				res = errorResult(agentsmcp.ErrorMessage(err))
			}
		}
		out, err := json.Marshal(BridgeResult{Result: bridgeValue(res), IsError: res.IsError})
		if err != nil {
			writeBridgeError(w, http.StatusInternalServerError, BridgeInternal, "the tool's result cannot be encoded", nil)
			return
		}
		writeBridgeJSON(w, http.StatusOK, out)
	})
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

// toolNamesFor lists, sorted, the tools p may use.
func (r *Router) toolNamesFor(p *agentsmcp.Principal) []string {
	names := []string{}
	for _, t := range r.Tools() {
		if p.MayUseTool(t.Name) {
			names = append(names, t.Name)
		}
	}
	return names
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
