package httptools

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/words"
)

// MetaOperation is the _meta key of an HTTP tool's operation, an object
// {"method": "POST", "path": "/chat.update"}: what a client (and the tool
// search, which indexes the path's words and the method's verbs) can know
// of the request the tool sends. The operation's OpenAPI tags are _meta
// "tags", the key virtual servers' tag selections read; its summary is the
// annotations' title.
const MetaOperation = "agents-mcp/httpOperation"

// operationMeta is the _meta of an HTTP tool: its operation, and its tags
// when it has any.
func operationMeta(method, path string, tags []string) mcp.Meta {
	m := mcp.Meta{MetaOperation: map[string]any{"method": method, "path": path}}
	var list []any
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			list = append(list, t)
		}
	}
	if len(list) > 0 {
		m["tags"] = list
	}
	return m
}

// summaryOf is an operation's summary, or "" when it only repeats the
// operationId ("getCardsByIdCard()", as some generated documents have it):
// that says nothing a description should.
func summaryOf(summary, operationID string) string {
	s := strings.TrimSpace(summary)
	if operationID != "" && strings.TrimSuffix(s, "()") == operationID {
		return ""
	}
	return s
}

// describeOperation is the description of an operation that has none: a
// verb for its method and the words of its path's fixed segments, then the
// request itself ("Update cards name: PUT /cards/{idCard}/name"), so that a
// client (and the search) reads what it does rather than only a path.
func describeOperation(method, path string) string {
	var pathWords []string
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "" || strings.HasPrefix(seg, "{") {
			continue
		}
		pathWords = append(pathWords, words.Split(seg)...)
	}
	verb := methodVerb(method)
	if len(pathWords) == 0 {
		return method + " " + path
	}
	return verb + " " + strings.Join(pathWords, " ") + ": " + method + " " + path
}

// methodVerb is the plain verb of an HTTP method, capitalised.
func methodVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "Get"
	case http.MethodPost:
		return "Create"
	case http.MethodPut, http.MethodPatch:
		return "Update"
	case http.MethodDelete:
		return "Delete"
	}
	return method
}
