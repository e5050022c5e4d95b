// Package rpcerror maps application errors to JSON-RPC errors
// ([FromError], the one place that does), and writes JSON-RPC error
// responses as HTTP responses, for the HTTP transports that must refuse a
// message before any MCP session sees it.
package rpcerror

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// CodeQuotaExceeded is the JSON-RPC error code of a request refused
// because its principal's quota is used up (router.CodeQuotaExceeded).
const CodeQuotaExceeded = -32030

// FromError is the one place application error codes become JSON-RPC
// error codes.
func FromError(err error) *jsonrpc.Error {
	code := jsonrpc.CodeInternalError
	switch agentsmcp.ErrorCode(err) {
	case agentsmcp.ENOTFOUND, agentsmcp.EINVALID:
		code = jsonrpc.CodeInvalidParams
	case agentsmcp.ENOTIMPLEMENTED:
		code = jsonrpc.CodeMethodNotFound
	case agentsmcp.EQUOTA:
		code = CodeQuotaExceeded
	}
	return &jsonrpc.Error{Code: int64(code), Message: agentsmcp.ErrorMessage(err)}
}

// Write writes a JSON-RPC error response with the given HTTP status. A zero
// id is written as null, as JSON-RPC requires when the request's id is
// unknown.
func Write(w http.ResponseWriter, status int, id jsonrpc.ID, code int, msg string) {
	body := struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), &jsonrpc.Error{Code: int64(code), Message: msg}}
	data, err := json.Marshal(body)
	if err != nil {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
