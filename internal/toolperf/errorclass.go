package toolperf

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

const (
	errorClassHTTPPrefix   = "http "
	maxErrorClassScanBytes = 2 << 10
)

// errorClassRules map an error text, lower-cased, to its class: the first
// rule one of whose words the text holds wins, so the specific come before
// the general.
var errorClassRules = []struct {
	class string
	words []string
}{
	{ErrorClassAuthorization, []string{"not authorized for", "authorization required", "authorize at", "unauthorized", "unauthenticated"}},
	{ErrorClassEgress, []string{"egress"}},
	{ErrorClassTimeout, []string{"timeout", "timed out", "deadline exceeded", "no answer within", "did not end within"}},
	{ErrorClassCancelled, []string{"context canceled", "cancelled", "canceled"}},
	{ErrorClassConnRefused, []string{"connection refused", "econnrefused"}},
	{ErrorClassConnReset, []string{"connection reset", "econnreset", "broken pipe", "unexpected eof", "eof", "connection closed", "session closed"}},
	{ErrorClassHostNotFound, []string{"host not found", "no such host", "enotfound", "name resolution", "server misbehaving"}},
	{ErrorClassTLS, []string{"tls error", "tls:", "x509:", "certificate"}},
	{ErrorClassRateLimited, []string{"rate limit", "rate-limit", "too many requests", "quota", "throttl"}},
	{ErrorClassTooLarge, []string{"larger than the limit", "too large", "max_response_bytes"}},
	{ErrorClassInvalidArguments, []string{"invalid argument", "invalid params", "invalid parameter", "invalid input",
		"validation", "is missing", "missing required", "is required", "must not be empty", "not a json object", "-32602"}},
	{ErrorClassPermissionDenied, []string{"permission denied", "forbidden", "eacces", "eperm", "access denied", "not allowed"}},
	{ErrorClassNotFound, []string{"not found", "no such", "enoent", "does not exist", "unknown tool"}},
	{ErrorClassUnavailable, []string{"unavailable", "is down", "not connected", "not ready", "no upstream"}},
	{ErrorClassInternal, []string{"internal error", "internal server error", "panic", "-32603"}},
}

// httpStatusPattern finds an HTTP status code in an error text: "HTTP
// 404", "HTTP/1.1 404", "status 503", "status code: 429", "(503)"; not the
// digits of an address ("http://127.0.0.1", "http 127.0.0.1").
var httpStatusPattern = regexp.MustCompile(`\b(?:http|status(?: code)?)(?::? +|/[0-9.]+ +)([1-5][0-9][0-9])(?:[^.0-9]|$)|\(([1-5][0-9][0-9])\)`)

// ErrorClass is the class under which tool performance counts a failed
// call whose error text is text: "http " and the status code when the text
// names one ("http 404"), else the first ErrorClass… phrase whose words
// the text holds (a timeout, a refused connection, invalid arguments…),
// else "error". It reads at most the first 2 KiB of text; the class of a
// class is itself.
func ErrorClass(text string) string {
	lower := strings.ToLower(storedform.TruncateUTF8(text, maxErrorClassScanBytes))
	if strings.TrimSpace(lower) == "" {
		return ErrorClassOther
	}
	// The authorization answer quotes the integration and its link; it is
	// a class of its own, whatever status the API answered.
	if containsAny(lower, errorClassRules[0].words) {
		return ErrorClassAuthorization
	}
	if m := httpStatusPattern.FindStringSubmatch(lower); m != nil {
		return errorClassHTTPPrefix + m[1] + m[2]
	}
	for _, r := range errorClassRules {
		if containsAny(lower, r.words) {
			return r.class
		}
	}
	return ErrorClassOther
}

// CommonErrors is what a store reports as
// [agentsmcp.ToolPerformance.CommonErrors] from the classes it counted, given most
// frequent first (ties in the store's order): each passed through
// [ErrorClass] again, so that texts a store recorded before classes
// were normalised are served as classes, never as text, with the counts of
// a class summed; then the [agentsmcp.MaxCommonErrors] most frequent.
func CommonErrors(counted []ErrorClassCount) map[string]int64 {
	var merged []ErrorClassCount
	for _, c := range counted {
		class := ErrorClass(c.Class)
		if i := slices.IndexFunc(merged, func(m ErrorClassCount) bool { return m.Class == class }); i >= 0 {
			merged[i].Count += c.Count
			continue
		}
		merged = append(merged, ErrorClassCount{Class: class, Count: c.Count})
	}
	slices.SortStableFunc(merged, func(a, b ErrorClassCount) int { return cmp.Compare(b.Count, a.Count) })
	out := make(map[string]int64, min(len(merged), agentsmcp.MaxCommonErrors))
	for _, c := range merged[:min(len(merged), agentsmcp.MaxCommonErrors)] {
		out[c.Class] = c.Count
	}
	return out
}

// LastErrorClass is [ErrorClass] for the class a store kept of the
// last failure, "" staying "" (no failure yet).
func LastErrorClass(stored string) string {
	if stored == "" {
		return ""
	}
	return ErrorClass(stored)
}

// containsAny reports whether s holds one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
