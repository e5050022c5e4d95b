package mcphttp

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// VirtualServerHeader marks a request made to a virtual server's endpoint
// (/mcp/<name>, /sse/<name>, /messages/<name>) with the server's name, for
// the router, which reads it in the request's [mcp.RequestExtra]. The
// Handler sets it and removes it from every request it receives first, so
// no client can set it.
const VirtualServerHeader = "Agents-Mcp-Virtual-Server"

// PrechargedHeader carries, from the router's call-quota guard
// ([Options.RefuseCall]) to the call it let through, the ticket of the
// charge the guard made, so that the call is not charged twice. The
// Handler removes it from every request it receives first (on /mcp, /sse,
// /messages and the REST bridge alike), so that a client's value never
// reaches the router.
const PrechargedHeader = "X-Agents-Mcp-Precharged"

// virtualRoute serves a virtual server's endpoint with base, the handler
// of the whole catalog's endpoint at path: the request goes on marked with
// the server's name ([VirtualServerHeader]) and with its path rewritten
// to path. A server that does not exist or that the caller may not use
// (admit) is answered 404, the same either way.
func virtualRoute(base http.Handler, path string, admit func(*http.Request, string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := req.PathValue("name")
		if admit == nil || !admit(req, name) {
			WriteJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("virtual server %q not found", name))
			return
		}
		r2 := new(http.Request)
		*r2 = *req
		u := *req.URL
		u.Path, u.RawPath = path, ""
		r2.URL = &u
		r2.Header = req.Header.Clone()
		r2.Header.Set(VirtualServerHeader, name)
		base.ServeHTTP(w, r2)
	})
}

// wholeCatalog serves the whole catalog's endpoint with h, to callers
// that admit lets use it: a credential limited to virtual servers is
// answered 404, as for a virtual server it may not use.
func wholeCatalog(h http.Handler, admit func(*http.Request, string) bool) http.Handler {
	if admit == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !admit(req, "") {
			WriteJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "not found: this credential may use only its virtual servers")
			return
		}
		h.ServeHTTP(w, req)
	})
}

// virtualMessagesPath is the messages path announced to a legacy SSE
// stream opened on a virtual server's endpoint, so that its POSTs are
// marked too; "" for the whole catalog's.
func virtualMessagesPath(req *http.Request) string {
	if name := req.Header.Get(VirtualServerHeader); name != "" {
		return "/messages/" + url.PathEscape(name)
	}
	return ""
}
