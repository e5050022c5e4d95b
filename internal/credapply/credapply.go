// Package credapply puts an [agentsmcp.AppliedCredential] on an outgoing
// request, and removes its secrets from any text derived from that request.
// HTTP tools and the upstream pool use it; a leaf on the root and
// internal/redact.
package credapply

import (
	"net/http"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// Apply adds a's headers and query parameters to req.
func Apply(a *agentsmcp.AppliedCredential, req *http.Request) {
	if a == nil {
		return
	}
	for k, vs := range a.Header {
		req.Header[k] = slices.Clone(vs)
	}
	if len(a.Query) > 0 {
		q := req.URL.Query()
		for k, vs := range a.Query {
			q[k] = slices.Clone(vs)
		}
		req.URL.RawQuery = q.Encode()
	}
}

// Redact removes a's secrets from text, a text derived from a request that
// carried a (an error, an answer quoted in one): every value a adds, raw
// or escaped, wherever it is, and the value after each of its query
// parameter and header names, in URLs and in "name: value" pairs, so that
// a parameter named "k" is hidden although no list of usual names knows
// it (see [redact.Named]). A nil a still cleans URLs, as [redact.Message].
func Redact(a *agentsmcp.AppliedCredential, text string) string {
	if a == nil {
		return redact.Message(text)
	}
	var names, values []string
	for k, vs := range a.Query {
		names = append(names, k)
		values = append(values, vs...)
	}
	for k, vs := range a.Header {
		names = append(names, k)
		for _, v := range vs {
			values = append(values, v)
			if _, token, ok := strings.Cut(v, " "); ok { // "Bearer <token>", "Basic <base64>"
				values = append(values, strings.TrimSpace(token))
			}
		}
	}
	return redact.Named(text, names, values...)
}
