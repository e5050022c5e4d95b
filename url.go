package agentsmcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Redaction markers. They are fixed strings, never derived from the secret,
// so that not even the length of a secret leaks.
const (
	Redacted         = "[redacted]"
	redactedPassword = "xxxxx"
)

// RedactConnectionString keeps what helps diagnose a connection (user, hosts,
// database, options) and hides the password and credential-like options.
func RedactConnectionString(s string) string { return redactURLWith(s, false) }

// RedactURL is RedactConnectionString for other URLs, where a user without password is
// often an API key (https://KEY@host) and is hidden too.
func RedactURL(s string) string { return redactURLWith(s, true) }

// secretQueryKey matches query parameter names whose values are credentials,
// including MongoDB's authMechanismProperties (AWS session tokens).
var secretQueryKey = regexp.MustCompile(`(?i)pass|pwd|token|secret|key|sig|credential|authmechanismproperties`)

func redactURLWith(s string, hideBareUser bool) string {
	if s == "" {
		return ""
	}
	// net/url copes with MongoDB's comma-separated host lists, but a
	// password with unescaped reserved characters ("p@ss/word") can make it
	// parse part of the password as host or path; an '@' outside the user
	// info is taken as that sign, and the credentials are cut out by hand.
	u, err := url.Parse(s)
	if err != nil || strings.Contains(u.Opaque, "@") || strings.Contains(u.Path, "@") {
		return redactURLByHand(s)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedPassword)
		} else if hideBareUser {
			u.User = url.User(redactedPassword)
		}
	}
	if u.RawQuery != "" {
		u.RawQuery = redactQuery(u.RawQuery)
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// redactURLByHand treats everything up to the last '@' before the query as
// user info, which may over-redact an odd URL but never leaks a password.
func redactURLByHand(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		if strings.Contains(s, "@") {
			return Redacted
		}
		return s
	}
	rest, _, _ = strings.Cut(rest, "#")
	beforeQuery, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery {
		query = "?" + redactQuery(query)
	}
	at := strings.LastIndex(beforeQuery, "@")
	if at < 0 {
		return scheme + "://" + beforeQuery + query
	}
	user, _, _ := strings.Cut(beforeQuery[:at], ":")
	return scheme + "://" + user + ":" + redactedPassword + "@" + beforeQuery[at+1:] + query
}

// redactQuery hides the values of credential-like parameters, keeping the
// parameter order so the result still reads like the input.
func redactQuery(q string) string {
	q, _, _ = strings.Cut(q, "#")
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		if hasValue && secretQueryKey.MatchString(k) {
			parts[i] = k + "=" + redactedPassword
		}
	}
	return strings.Join(parts, "&")
}

// RedactMessage removes credentials from a message quoted from elsewhere,
// such as a driver's or a remote server's error: every URL in the text is
// cleaned as [RedactURL] does, and then every occurrence of each non-empty
// secret (an API key, a password), raw or URL-escaped, becomes [Redacted].
// Unlike [RedactText] it hides nothing by shape, so host names, ids and
// hashes stay readable for diagnosis; it does not cut the text.
func RedactMessage(msg string, secrets ...string) string {
	if strings.Contains(msg, "://") {
		msg = urlPattern.ReplaceAllStringFunc(msg, RedactURL)
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, s, Redacted)
		msg = strings.ReplaceAll(msg, url.QueryEscape(s), Redacted)
		msg = strings.ReplaceAll(msg, url.PathEscape(s), Redacted)
	}
	return msg
}

// RedactError is [RedactMessage] for an error. When err's text needs no
// redaction, err itself is returned, so that its chain still answers
// errors.Is and errors.As. Otherwise the result is a flat error with the
// redacted text, which keeps the code of the first [*Error] in the chain
// (with its message redacted) when there is one; nil stays nil.
func RedactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	redacted := RedactMessage(text, secrets...)
	if redacted == text {
		return err
	}
	var app *Error
	if errors.As(err, &app) {
		return fmt.Errorf("%w: %s", Errorf(app.Code, "%s", RedactMessage(app.Message, secrets...)), redacted)
	}
	return errors.New(redacted)
}

// CheckHTTPURL accepts only absolute http(s) URLs with a host: the URLs of
// upstream MCP servers and of embedding and LLM endpoints. The error
// completes a sentence that starts with the (redacted) URL.
func CheckHTTPURL(s string) error {
	p, err := url.Parse(s)
	if err != nil {
		return errors.New("is not a valid URL")
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return errors.New("must be an absolute http or https URL")
	}
	if p.Host == "" {
		return errors.New("has no host")
	}
	return nil
}

// MaxQuotedMessageBytes is how much of a remote server's message an error
// of ours quotes.
const MaxQuotedMessageBytes = 300

// ServerMessage extracts the human-readable part of an HTTP error body for
// an error to quote: the "error.message" of OpenAI-style APIs, the "error"
// string of Ollama, a top-level "message" or "detail", or else the text
// itself; trimmed by QuoteMessage. Callers redact secrets themselves.
func ServerMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	msg := string(body)
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			msg = nested.Message
		case json.Unmarshal(v.Error, &flat) == nil && flat != "":
			msg = flat
		case v.Message != "":
			msg = v.Message
		case v.Detail != "":
			msg = v.Detail
		}
	}
	return QuoteMessage(msg)
}

// QuoteMessage makes a remote server's text fit to quote in an error: valid
// UTF-8, whitespace collapsed, cut to MaxQuotedMessageBytes (marked "…")
// without splitting a character.
func QuoteMessage(msg string) string {
	msg = strings.Join(strings.Fields(strings.ToValidUTF8(msg, "\uFFFD")), " ")
	if len(msg) <= MaxQuotedMessageBytes {
		return msg
	}
	return TruncateUTF8(msg, MaxQuotedMessageBytes) + "…"
}
