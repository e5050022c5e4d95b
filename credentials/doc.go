// Package credentials presents the credentials of the store to the
// integrations that need them: HTTP tool sources and upstream MCP servers.
//
// A [Manager] implements [agentsmcp.CredentialSource]. For each request it
// picks the caller's own credential of the integration, else the shared one,
// and turns it into headers or query parameters. OAuth credentials get
// their tokens here:
//
//   - client credentials (OAuth 2.0): fetched from the token endpoint when
//     missing or about to expire, cached (sealed) in the credential;
//   - authorization code with PKCE (OAuth 2.1): a person authorizes in a
//     browser. [Manager.StartAuthorization] stores a link (a hash of its
//     one-time token, bound to the principal and to the PKCE verifier,
//     sealed, expiring) and returns agents-mcp's own URL of it, never the
//     authorization server's. [Manager.ServeHTTP] serves that link: a
//     page naming the principal who will receive the account; confirming
//     it takes the link once, binds a new OAuth state to a nonce in a
//     cookie of that browser, and sends the browser to the authorization
//     server. The callback (/oauth/callback) takes the state once and
//     completes the flow only in the browser holding the nonce, storing
//     the tokens in a credential of that principal; in any other browser
//     it stores nothing. Tokens are refreshed with the refresh token; a
//     refused refresh asks the person again.
//
// When a person must act (no credential, no authorization yet, a refused
// token), the error wraps an [*agentsmcp.AuthorizationRequired] that names
// the integration and the link to follow.
//
// Secrets never leave this package in logs or errors: an error from an
// authorization server is reported by its OAuth error code only.
//
// [Discover] finds how an upstream MCP server protected by OAuth wants to be
// authorized (RFC 9728 protected resource metadata from its 401, RFC 8414
// authorization server metadata). [Manager.RegisterIntegration] makes
// agents-mcp a client of its authorization server when none is configured
// (a pre-registered client wins): by its Client ID Metadata Document
// ([Manager.ClientMetadataHandler], an https public URL needed), else by
// RFC 7591 dynamic registration, and stores the client as the shared
// credential.
package credentials
