// Package auth authenticates and authorises the inbound callers of
// agents-mcp and limits their request rate.
//
// One [Authenticator] accepts two kinds of bearer credentials and turns
// either into an [agentsmcp.Principal]:
//
//   - API keys ([Key]), kept only as SHA-256 hashes and compared in constant
//     time; the principal is "key:<first 12 hex digits of the hash>".
//   - JWTs signed by an OAuth authorization server ([JWTConfig]), checked
//     against its JWKS (signature, exp, nbf, iss, aud); the principal is
//     "jwt:<sub>".
//
// With neither configured, every caller is the anonymous principal with
// every scope: the server then serves loopback only, which the caller of
// this package enforces.
//
// Over HTTP, [Authenticator.Authenticate] puts the principal in the request
// context twice: for our own code ([agentsmcp.PrincipalFrom]) and for go-sdk
// ([auth.TokenInfo] made by [NewTokenInfo], which MCP handlers see as
// req.Extra.TokenInfo, the principal under [agentsmcp.TokenInfoPrincipal]).
// [Authenticator.RequireScope] authorises ([Authenticator.Middleware] does
// both steps); the admin API checks its scopes itself. Refusals are 401 (no or bad
// credentials) or 403 (missing scope), each with an RFC 6750
// WWW-Authenticate challenge and the JSON body
// {"error":{"code":"…","message":"…"}}. Over stdio,
// [Authenticator.AuthenticateStdio] checks the one key the process was given.
//
// A [Limiter] holds one token bucket per principal and answers either
// [Limiter.Allow] (for JSON-RPC callers) or 429 through [Limiter.Middleware].
//
// Secrets never leave this package: errors, logs and the failure hook carry
// at most a hint such as "key:<hash prefix>" or "jwt:<unverified subject>".
package auth
