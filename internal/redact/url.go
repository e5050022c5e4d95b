package redact

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Redaction markers. They are fixed strings, never derived from the secret,
// so that not even the length of a secret leaks.
const (
	Marker           = "[redacted]"
	redactedPassword = "xxxxx"
)

// ConnectionString keeps what helps diagnose a connection (user, hosts,
// database, options) and hides the password and credential-like options.
func ConnectionString(s string) string { return redactURLWith(s, false) }

// URL is ConnectionString for other URLs, where a user without password is
// often an API key (https://KEY@host) and is hidden too.
func URL(s string) string { return redactURLWith(s, true) }

// secretQueryKey matches query parameter names whose values are credentials,
// including MongoDB's authMechanismProperties (AWS session tokens).
var secretQueryKey = regexp.MustCompile(`(?i)pass|pwd|token|secret|key|sig|credential|authmechanismproperties`)

// secretQueryNames are short parameter names (normalized as by
// normalizeKey) that APIs use for credentials: an OAuth authorization
// code, a session id, an application id that is the key.
var secretQueryNames = map[string]bool{"code": true, "sid": true, "appid": true, "ticket": true, "hash": true}

// publicQueryNames contain a secret word but name no secret: MongoDB
// options that say how to authenticate, not with what.
var publicQueryNames = map[string]bool{"authsource": true, "authmechanism": true}

// isSecretQueryParam reports whether the value v of the query parameter k
// (both still escaped) is to be hidden: by its name (secretQueryKey,
// secretQueryNames, or a key name Arguments redacts, such as auth
// or session), by the names the caller gave (compared as by normalizeKey),
// or by its shape (a value that looks generated, see looksSecret).
func isSecretQueryParam(k, v string, names []string) bool {
	if uk, err := url.QueryUnescape(k); err == nil {
		k = uk
	}
	n := normalizeKey(k)
	for _, name := range names {
		if n == normalizeKey(name) {
			return true
		}
	}
	if publicQueryNames[n] {
		return false
	}
	if secretQueryKey.MatchString(k) || secretQueryNames[n] || isSecretKey(k) {
		return true
	}
	if uv, err := url.QueryUnescape(v); err == nil {
		v = uv
	}
	return len(v) >= redactMinTokenLen && redactRandomTokens(v) != v
}

func redactURLWith(s string, hideBareUser bool, names ...string) string {
	if s == "" {
		return ""
	}
	// net/url copes with MongoDB's comma-separated host lists, but a
	// password with unescaped reserved characters ("p@ss/word") can make it
	// parse part of the password as host or path; an '@' outside the user
	// info is taken as that sign, and the credentials are cut out by hand.
	u, err := url.Parse(s)
	if err != nil || strings.Contains(u.Opaque, "@") || strings.Contains(u.Path, "@") {
		return redactURLByHand(s, names)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedPassword)
		} else if hideBareUser {
			u.User = url.User(redactedPassword)
		}
	}
	if u.RawQuery != "" {
		u.RawQuery = redactQuery(u.RawQuery, names)
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// redactURLByHand treats everything up to the last '@' before the query as
// user info, which may over-redact an odd URL but never leaks a password.
func redactURLByHand(s string, names []string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		if strings.Contains(s, "@") {
			return Marker
		}
		return s
	}
	rest, _, _ = strings.Cut(rest, "#")
	beforeQuery, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery {
		query = "?" + redactQuery(query, names)
	}
	at := strings.LastIndex(beforeQuery, "@")
	if at < 0 {
		return scheme + "://" + beforeQuery + query
	}
	user, _, _ := strings.Cut(beforeQuery[:at], ":")
	return scheme + "://" + user + ":" + redactedPassword + "@" + beforeQuery[at+1:] + query
}

// redactQuery hides the values of credential-like parameters (see
// isSecretQueryParam) and of the parameters named in names, keeping the
// parameter order so the result still reads like the input.
func redactQuery(q string, names []string) string {
	q, _, _ = strings.Cut(q, "#")
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, hasValue := strings.Cut(p, "=")
		if hasValue && isSecretQueryParam(k, v, names) {
			parts[i] = k + "=" + redactedPassword
		}
	}
	return strings.Join(parts, "&")
}

// Message removes credentials from a message quoted from elsewhere,
// such as a driver's or a remote server's error: every URL in the text is
// cleaned as [URL] does, and then every occurrence of each non-empty
// secret (an API key, a password), raw or URL-escaped, becomes [Marker].
// Unlike [Text] it hides nothing by shape, so host names, ids and
// hashes stay readable for diagnosis; it does not cut the text.
func Message(msg string, secrets ...string) string {
	return Named(msg, nil, secrets...)
}

// Named is [Message] for a text derived from a request that
// carried a credential under names of its own (a query parameter "k", a
// header "X-Token"), which no list of usual names knows: the value of
// each of names is hidden too, in the query of every URL and after the
// name in "name: value" and "name=value" pairs (names compared
// case-insensitively). Longer secrets are replaced first, so that a secret
// that holds another ("Bearer abc" and "abc") leaves nothing behind.
func Named(msg string, names []string, secrets ...string) string {
	if strings.Contains(msg, "://") {
		msg = urlPattern.ReplaceAllStringFunc(msg, func(u string) string { return redactURLWith(u, true, names...) })
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		// A value hidden already (by URL, or by a previous pass) is
		// taken whole and kept, so that redacting twice changes nothing.
		re := regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_-])(` + regexp.QuoteMeta(n) + `["']?\s*[:=]\s*["']?)(` +
			regexp.QuoteMeta(Marker) + `|` + regexp.QuoteMeta(redactedPassword) + `|[^\s"',;&]+)`)
		msg = re.ReplaceAllStringFunc(msg, func(m string) string {
			g := re.FindStringSubmatch(m)
			if g[3] == Marker || g[3] == redactedPassword {
				return m
			}
			return g[1] + g[2] + Marker
		})
	}
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if s == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, s, Marker)
		msg = strings.ReplaceAll(msg, url.QueryEscape(s), Marker)
		msg = strings.ReplaceAll(msg, url.PathEscape(s), Marker)
	}
	return msg
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
	return truncateUTF8(msg, MaxQuotedMessageBytes) + "…"
}
