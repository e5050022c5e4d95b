package agentsmcp

import (
	"errors"
	"fmt"
)

// Application error codes. Transports map them to protocol codes (JSON-RPC
// error codes, HTTP statuses) in exactly one place each; the message of an
// [Error] is safe to show to callers, anything else is logged, not returned.
const (
	ECONFLICT       = "conflict"
	EINTERNAL       = "internal"
	EINVALID        = "invalid"
	ENOTFOUND       = "not_found"
	ENOTIMPLEMENTED = "not_implemented"
	// EQUOTA: the principal holds what its quota allows; releasing helps,
	// waiting does not. HTTP 429.
	EQUOTA        = "quota_exceeded"
	EUNAUTHORIZED = "unauthorized"
	EUNAVAILABLE  = "unavailable"
)

// Error is an application error: a code from the list above and a message
// meant for the caller.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("agents-mcp error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an [*Error] with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first [*Error] in err's chain, "" for a
// nil error and [EINTERNAL] for any other error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first [*Error] in err's chain, and
// a generic text for any other error, so that internals never reach callers.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
