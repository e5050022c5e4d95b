package mcpwire

import (
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaAuthorizationRequired is the _meta key of a tool result that asks a
// person to authorize (see [AuthorizationRequiredResult]); its value is
// {"integration", "authorizeUrl", "reason"}, and "delegated": true when
// the integration needs the caller's own identity (ADR 0012 D7b).
const MetaAuthorizationRequired = "io.agents-mcp/authorization-required"

// AuthorizationRequiredResult is the tool result of a call that needs e to
// be resolved: isError (the call did not happen), e's message as text,
// and e's fields under [MetaAuthorizationRequired] in _meta.
func AuthorizationRequiredResult(e *agentsmcp.AuthorizationRequired) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: e.Message()}}}
	m := map[string]any{"integration": e.Integration, "authorizeUrl": e.AuthorizeURL, "reason": e.Reason}
	if e.Delegated {
		m["delegated"] = true
	}
	res.Meta = mcp.Meta{MetaAuthorizationRequired: m}
	return res
}

// AuthorizeInputKey is the key of the input request through which
// [OfferAuthorization] offers an authorization link. It is namespaced so
// that it cannot be taken for an upstream's own input request.
const AuthorizeInputKey = "io.agents-mcp/authorize"

// OfferAuthorization is the answer to a client's tool call (req) that
// needs ar resolved, when the client has not been offered ar's link in
// this call yet. When the client declared URL-mode elicitation
// (capability elicitation.url) and ar has a link, it is an input-required
// result whose one input request, [AuthorizeInputKey], offers the link as
// a URL-mode elicitation: a 2026-07-28 client gets it as inputRequests and
// retries with the answer, and go-sdk asks older clients with
// elicitation/create and calls again. Otherwise it is
// [AuthorizationRequiredResult]. The retry must answer with that result if
// the credential is still missing: accepting a URL elicitation means the
// client opened the link, not that the person authorized.
func OfferAuthorization(req *mcp.CallToolRequest, ar *agentsmcp.AuthorizationRequired) *mcp.CallToolResult {
	if req == nil || ar.AuthorizeURL == "" {
		return AuthorizationRequiredResult(ar)
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return AuthorizationRequiredResult(ar)
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{AuthorizeInputKey: &mcp.ElicitParams{
		Mode: "url", URL: ar.AuthorizeURL, ElicitationID: agentsmcp.NewID("auth"),
		Message: fmt.Sprintf("Authorize agents-mcp to call %s for you (%s).", ar.Integration, ar.Reason)}}}
}

// AuthorizationRequiredFrom returns the request for authorization that res
// carries, if it is one (see [AuthorizationRequiredResult]).
func AuthorizationRequiredFrom(res *mcp.CallToolResult) (*agentsmcp.AuthorizationRequired, bool) {
	if res == nil || !res.IsError || res.Meta == nil {
		return nil, false
	}
	m, ok := res.Meta[MetaAuthorizationRequired].(map[string]any)
	if !ok {
		return nil, false
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	delegated, _ := m["delegated"].(bool)
	return &agentsmcp.AuthorizationRequired{Integration: str("integration"), AuthorizeURL: str("authorizeUrl"), Reason: str("reason"), Delegated: delegated}, true
}
