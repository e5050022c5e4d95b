package redact

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// MaxArgumentsBytes bounds the output of [Arguments]; the root's
// agentsmcp.MaxAuditArgumentsBytes, the bound of an audit entry's
// arguments, is this value.
const MaxArgumentsBytes = 8 << 10

// idPattern is the shape of agents-mcp ids (agentsmcp.IDPattern): they are
// kept, although they look random. The root's tests check the two agree.
var idPattern = regexp.MustCompile(`^[a-z]{2,8}_[0-9A-HJKMNP-TV-Z]{26}$`)

// InvalidError is the error of [EditSecrets] for input that is not valid
// JSON or is nested too deep; callers map it to their invalid-input code.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
