package auth

import "github.com/golang-jwt/jwt/v5"

// virtualServersOf reads the virtual servers a token may use from the
// claim named name ([agentsmcp.Principal.VirtualServers]): a
// space-separated string or an array of strings, each a path.Match
// pattern on virtual server names. A token without the claim is not
// limited (as an API key without virtual_servers). A claim that is
// present is read closed: another type, an invalid pattern or no pattern
// at all is a reason to refuse the token, since an empty list would
// otherwise mean the whole catalog. The reason is safe to show the caller.
func virtualServersOf(name string, claims jwt.MapClaims) ([]string, string) {
	raw, ok := claims[name]
	if !ok || raw == nil {
		return nil, ""
	}
	return patternsOf(name, raw, "virtual server")
}
