package auth

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

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
	var all []string
	switch v := raw.(type) {
	case string:
		all = strings.Fields(v)
	case []any:
		for _, s := range v {
			s, ok := s.(string)
			if !ok {
				return nil, fmt.Sprintf("token's %s claim must be a string or an array of strings", name)
			}
			if s = strings.TrimSpace(s); s != "" {
				all = append(all, s)
			}
		}
	default:
		return nil, fmt.Sprintf("token's %s claim must be a string or an array of strings", name)
	}
	var out []string
	for _, p := range all {
		if _, err := path.Match(p, ""); errors.Is(err, path.ErrBadPattern) {
			return nil, fmt.Sprintf("token's %s claim holds an invalid virtual server pattern %q", name, sanitizeHint(p))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("token's %s claim holds no virtual server pattern", name)
	}
	return out, ""
}
