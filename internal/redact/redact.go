package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Arguments returns what the audit trail keeps of a tool call's
// arguments or of an admin request's body: the shape of the JSON value,
// with secrets removed and its size bounded. The result is always valid
// JSON of at most MaxArgumentsBytes, or nil for empty input; it never
// holds the input's bytes unexamined. Redaction is best effort against
// accidents, layered so that one miss is caught by the next:
//
//   - By key name: the value of an object key that names a credential —
//     compared case-insensitively with '-', '_', '.' and spaces ignored:
//     password, passwd, passphrase, secret, token, api key, authorization,
//     auth, credential(s), private key, access key, session, cookie, bearer,
//     client secret, jwt, pin, otp, signature, and the like — becomes
//     [Marker], whatever its type, except booleans, null, and the numbers
//     of counting keys such as max_tokens or session_timeout.
//   - By pattern, in every string (object keys included): Bearer and
//     Authorization values, name=value and --flag value pairs for secret
//     names, provider key formats (OpenAI and Anthropic sk-, GitHub ghp_
//     gho_ ghu_ ghs_ ghr_ github_pat_, GitLab glpat-, AWS AKIA/ASIA, Slack
//     xox?- and webhooks, Stripe, Google AIza, npm, Hugging Face), JWTs, PEM
//     private keys, and URLs (passwords, bare user names and
//     credential-like query values, as [URL] does).
//   - By shape: a run of at least 24 token characters that looks random
//     (letters and digits that change class often, with high entropy), or
//     a hex string of at least 32 digits with both letters and digits, is
//     replaced as a whole; UUIDs and agents-mcp ids ([idPattern]) are kept,
//     and a path is judged segment by segment. This also hides commit hashes
//     and digests: the audit trail prefers losing a hash to keeping a key.
//
// Bounds: strings are examined up to their first 1 KiB (a token cut there
// is dropped, never half kept) and kept up to 256 bytes, then cut at a
// character boundary and marked "…"; object keys are kept up to 64 bytes;
// containers show their first 50 members and a count of the rest; nesting
// deeper than 12 levels becomes "[too deep]"; numbers longer than 64
// characters become "[number]". When the output would pass its size limit,
// the value in hand becomes "[truncated]" and the containers are closed.
//
// Input that is not a single valid JSON value becomes a JSON string saying
// so, with its size only. Input past the point where the output is full is
// not read, so it is not checked either.
//
// Redacting a result again returns it unchanged (up to the counts of cut
// containers), so a caller need not track whether it already did. The cost
// is about 10 µs for a small object, and linear in the input's size.
func Arguments(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	r := &redactor{
		dec:   json.NewDecoder(bytes.NewReader(raw)),
		limit: MaxArgumentsBytes - redactReserve,
		out:   make([]byte, 0, min(len(raw)+16, MaxArgumentsBytes)),
	}
	r.dec.UseNumber()
	tok, err := r.dec.Token()
	if err == nil {
		err = r.value(tok, 0, false)
	}
	if err == nil && !r.full {
		if _, err := r.dec.Token(); err != io.EOF {
			return notJSON(len(raw))
		}
	}
	if err != nil {
		return notJSON(len(raw))
	}
	return r.out
}

// Bounds of Arguments; see its doc comment.
const (
	redactMaxDepth    = 12
	redactMaxString   = 256
	redactMaxKey      = 64
	redactMaxItems    = 50
	redactScanWindow  = 1 << 10
	redactMaxNumber   = 64
	redactMinTokenLen = 24
	redactMinHexLen   = 32
	// redactReserve is room kept for the marker of a full output and the
	// closing brackets of every open container (at most redactMaxDepth).
	redactReserve = 64
)

// Markers Arguments writes in place of what it leaves out.
const (
	markTruncated = "[truncated]"
	markTooDeep   = "[too deep]"
	markNumber    = "[number]"
	markEllipsis  = "…"
)

var errNotJSON = errors.New("not JSON")

func notJSON(n int) json.RawMessage {
	return json.RawMessage(strconv.Quote("[not valid JSON: " + strconv.Itoa(n) + " bytes]"))
}

// redactor writes the redacted form of one JSON value as it reads its
// tokens. Once full, it reads nothing more: every open container writes its
// closing bracket and returns.
type redactor struct {
	dec   *json.Decoder
	out   []byte
	limit int  // len(out) may reach this with ordinary output
	full  bool // the output reached limit: a marker was written
}

// fits reports whether n more bytes of ordinary output stay within limit.
func (r *redactor) fits(n int) bool { return len(r.out)+n <= r.limit }

// scalar writes one value, preceded by a comma when sep; a value that does
// not fit becomes the truncated marker, which the reserve has room for.
func (r *redactor) scalar(sep bool, b []byte) {
	if sep {
		r.out = append(r.out, ',')
	}
	if r.fits(len(b)) {
		r.out = append(r.out, b...)
		return
	}
	r.out = append(r.out, quote(markTruncated)...)
	r.full = true
}

// key writes an object key and its colon, preceded by a comma when sep. A
// key that does not fit is replaced by a "…": "[truncated]" member, and key
// reports false: the caller must write no value.
func (r *redactor) key(sep bool, k string) bool {
	q := quote(k)
	if sep {
		r.out = append(r.out, ',')
	}
	if r.fits(len(q) + 1 + len(`""`)) {
		r.out = append(append(r.out, q...), ':')
		return true
	}
	r.out = append(append(append(r.out, quote(markEllipsis)...), ':'), quote(markTruncated)...)
	r.full = true
	return false
}

// value writes the value that starts with tok, at nesting depth.
func (r *redactor) value(tok json.Token, depth int, sep bool) error {
	switch t := tok.(type) {
	case json.Delim:
		if depth >= redactMaxDepth {
			if err := r.skipContainer(); err != nil {
				return err
			}
			r.scalar(sep, quote(markTooDeep))
			return nil
		}
		if !r.fits(3) { // a separator and an empty container
			r.scalar(sep, quote(markTruncated)) // does not fit either: writes the marker
			return nil
		}
		if sep {
			r.out = append(r.out, ',')
		}
		if t == '{' {
			return r.object(depth + 1)
		}
		return r.array(depth + 1)
	case string:
		r.scalar(sep, quote(redactString(t, redactMaxString)))
	case json.Number:
		if len(t) > redactMaxNumber {
			r.scalar(sep, quote(markNumber))
		} else {
			r.scalar(sep, []byte(t))
		}
	case bool:
		r.scalar(sep, []byte(strconv.FormatBool(t)))
	case nil:
		r.scalar(sep, []byte("null"))
	default:
		return errNotJSON
	}
	return nil
}

// object writes an object whose '{' was read.
func (r *redactor) object(depth int) error {
	r.out = append(r.out, '{')
	defer func() { r.out = append(r.out, '}') }()
	for n := 0; r.dec.More(); n++ {
		if n == redactMaxItems {
			rest, err := r.countRest(true)
			if err != nil {
				return err
			}
			if r.key(true, markEllipsis) {
				r.scalar(false, quote("[+"+strconv.Itoa(rest)+" more]"))
			}
			break
		}
		tok, err := r.dec.Token()
		if err != nil {
			return err
		}
		k, ok := tok.(string)
		if !ok {
			return errNotJSON
		}
		if !r.key(n > 0, redactString(k, redactMaxKey)) {
			return nil
		}
		if isSecretKey(k) {
			var v json.RawMessage
			if err := r.dec.Decode(&v); err != nil {
				return err
			}
			r.scalar(false, secretValue(k, v))
		} else {
			tok, err := r.dec.Token()
			if err != nil {
				return err
			}
			if err := r.value(tok, depth, false); err != nil {
				return err
			}
		}
		if r.full {
			return nil
		}
	}
	return r.closing('}')
}

// array writes an array whose '[' was read.
func (r *redactor) array(depth int) error {
	r.out = append(r.out, '[')
	defer func() { r.out = append(r.out, ']') }()
	for n := 0; r.dec.More(); n++ {
		if n == redactMaxItems {
			rest, err := r.countRest(false)
			if err != nil {
				return err
			}
			r.scalar(true, quote("[+"+strconv.Itoa(rest)+" more]"))
			break
		}
		tok, err := r.dec.Token()
		if err != nil {
			return err
		}
		if err := r.value(tok, depth, n > 0); err != nil {
			return err
		}
		if r.full {
			return nil
		}
	}
	return r.closing(']')
}

// closing reads the closing bracket of the container being written.
func (r *redactor) closing(want json.Delim) error {
	tok, err := r.dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return errNotJSON
	}
	return nil
}

// countRest reads the remaining members of the current container, without
// its closing bracket, and returns how many there were.
func (r *redactor) countRest(object bool) (int, error) {
	n := 0
	for ; r.dec.More(); n++ {
		if object {
			if _, err := r.dec.Token(); err != nil {
				return 0, err
			}
		}
		var skip json.RawMessage
		if err := r.dec.Decode(&skip); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// skipContainer reads the rest of a container whose opening bracket was
// read, however deep.
func (r *redactor) skipContainer() error {
	for depth := 1; depth > 0; {
		tok, err := r.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// quote is the JSON text of s, without the HTML escapes of json.Marshal
// (an audit reader should see "&", not "\u0026"). Invalid UTF-8 becomes
// U+FFFD; encoding a string cannot fail.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// secretValue is what stands for the value v of the secret key k: null and
// booleans as they are (they cannot hold a secret), the numbers of counting
// keys (max_tokens, session_timeout) as they are, and else [Marker].
func secretValue(k string, v json.RawMessage) []byte {
	switch {
	case bytes.Equal(v, []byte("null")), bytes.Equal(v, []byte("true")), bytes.Equal(v, []byte("false")):
		return v
	case len(v) > 0 && len(v) <= redactMaxNumber && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && isCountKey(normalizeKey(k)):
		return v
	}
	return quote(Marker)
}

// normalizeKey folds a key for matching: lower case, without '-', '_', '.'
// and spaces, so that "X-Api-Key", "api_key" and "apiKey" compare equal.
func normalizeKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, k)
}

// Key names, normalized, whose values are credentials: secretKeyParts
// anywhere in the key, secretKeys as the whole key.
var (
	secretKeyParts = []string{
		"password", "passwd", "passphrase", "secret", "token", "apikey", "authorization", "credential",
		"privatekey", "accesskey", "secretkey", "signingkey", "encryptionkey", "session", "cookie",
		"bearer", "jwt", "signature",
	}
	secretKeys = map[string]bool{
		"auth": true, "pass": true, "pwd": true, "pin": true, "otp": true, "totp": true, "sig": true,
		"mfa": true, "cvv": true, "cvc": true, "ssn": true, "xapikey": true, "oauth": true,
	}
	// notSecretKeys contain a secret word but name no secret.
	notSecretKeys = map[string]bool{"tokenizer": true, "author": true, "authors": true, "authority": true}
)

// isSecretKey reports whether the object key k names a credential.
func isSecretKey(k string) bool {
	n := normalizeKey(k)
	if notSecretKeys[n] {
		return false
	}
	if secretKeys[n] {
		return true
	}
	for _, p := range secretKeyParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	// authToken, authHeader, basicAuth, proxyAuth — but not author.
	return strings.HasPrefix(n, "auth") && !strings.HasPrefix(n, "author") || strings.HasSuffix(n, "auth")
}

// isCountKey reports whether a secret-looking key n (normalized) names a
// count or a duration rather than a secret: max_tokens, token_count,
// session_timeout.
func isCountKey(n string) bool {
	if strings.Contains(n, "tokens") {
		return true
	}
	for _, p := range []string{"max", "min", "num"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, s := range []string{"count", "limit", "length", "len", "size", "ttl", "timeout", "expiry", "expiresin", "seconds", "ms"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// secretPatterns find secrets inside free text. A replacement keeps the
// pattern's first group (the name before a value) when it has one. Hints
// make the common case cheap: a pattern runs only when the lower-cased text
// holds one of its hints (and, with needs, one of those characters).
var secretPatterns = []struct {
	re    *regexp.Regexp
	keep  bool // keep ${1}, the text before the secret
	hints []string
	needs string
}{
	// PEM private keys, whole, or up to the end when the END line is cut.
	{re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z)`),
		hints: []string{"-----begin"}},
	// HTTP authorization values, with or without a scheme word.
	{re: regexp.MustCompile(`(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|digest|token|apikey|negotiate|ntlm)\s+)?[^\s"',;]+`),
		keep: true, hints: []string{"authorization"}},
	// "Bearer x" as in a header; lower case only before a token with a
	// digit or symbol, so that prose ("bearer tokens") is kept.
	{re: regexp.MustCompile(`\b(Bearer\s+)[A-Za-z0-9\-._~+/]+=*`), keep: true, hints: []string{"bearer"}},
	{re: regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z]*[0-9\-._~+/][A-Za-z0-9\-._~+/]*=*`), keep: true, hints: []string{"bearer"}},
	// name=value and name: value for secret names; a value redacted
	// already is taken whole, so that redacting again changes nothing.
	{re: regexp.MustCompile(`(?i)\b((?:[a-z0-9]+[_-])?(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|credentials?|session[_-]?id|cookie)["']?\s*[:=]\s*["']?)(?:` + regexp.QuoteMeta(Marker) + `|[^\s"',;&}\]]+)`),
		keep: true, hints: []string{"pass", "pwd", "secret", "token", "key", "credential", "session", "cookie"}, needs: ":="},
	// --password value, --token=value.
	{re: regexp.MustCompile(`(?i)((?:^|\s)--?(?:password|passwd|pass|token|secret|api-?key|access-?token|auth-?token|client-?secret)[= ]+)[^\s"']+`),
		keep: true, hints: []string{"pass", "token", "secret", "key"}, needs: "-"},
	// Provider key formats.
	{re: regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), hints: []string{"sk-"}},
	{re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`),
		hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{16,}`), hints: []string{"glpat-"}},
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`),
		hints: []string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}},
	{re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), hints: []string{"xox"}},
	{re: regexp.MustCompile(`(?i)(hooks\.slack\.com/services/|discord(?:app)?\.com/api/webhooks/)[A-Za-z0-9/_\-]+`),
		keep: true, hints: []string{"hooks.slack.com", "webhooks"}},
	{re: regexp.MustCompile(`\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}`), hints: []string{"k_live_", "k_test_"}},
	{re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), hints: []string{"aiza"}},
	{re: regexp.MustCompile(`\b(?:npm|hf)_[A-Za-z0-9]{30,}`), hints: []string{"npm_", "hf_"}},
	// JWTs (and other JWS compact tokens): base64url header starting {".
	{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`), hints: []string{"eyj"}},
}

// proseSecret finds a secret given in words rather than as name=value:
// "password hunter2", "my password is hunter2", "the password for bob is
// x", "set the password to x", "api key abc123", "token: x". Its groups:
// the secret word, what joins it to the value (an "is", "was", "are",
// "to", ":" or "=", else only space), and the value, a word or a quoted
// phrase. redactProseSecrets decides from them whether the value is one.
var proseSecret = regexp.MustCompile(`(?i)\b(pass(?:word|wd|phrase|code)|pwd|pin(?:[ _-]?code)?|` +
	`(?:api|access|secret|private|signing)[ _-]?key|client[ _-]?secret|secret|` +
	`(?:(?:access|auth|api|bearer|refresh|session|personal)[ _-]?)?token|credentials?)\b` +
	`((?:\s+(?:for|of)\s+[^\s"',;:=]+)?(?:\s+(?:is|was|are|to)\s+|\s*[:=]\s*|\s+))` +
	`("[^"\n]{1,200}"|'[^'\n]{1,200}'|“[^”\n]{1,200}”|[^\s"',;“”]+)`)

// proseSecretHints are what a text must hold (lower-cased) for
// proseSecret to run.
var proseSecretHints = []string{"pass", "pwd", "pin", "key", "secret", "token", "credential"}

// strongSecretWords always introduce a secret when a value follows them,
// even with nothing but space between: "password swordfish". The others
// (token, api key, secret…) are common in prose ("token limit"), and then
// introduce one only when it looks like a value (a digit or a symbol, or
// mixed case).
var strongSecretWords = map[string]bool{"password": true, "passwd": true, "passphrase": true, "passcode": true, "pwd": true}

// proseWords follow a secret word in prose without being its value:
// articles, pronouns, prepositions, auxiliaries, and what is said about
// secrets ("password reset", "the token expired", "the key is missing").
var proseWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the this that these those it its my your our their his her me you we they them i
		to for of in on at by from with without into onto via as about over under after before within across
		and or but nor so if then than when while because unless until
		is was are were be been being am has have had do does did will would can could should must may might shall
		not no now too very still also just only again ever never always already yet
		reset resets change changes changed changing update updates updated updating rotate rotates rotated rotation
		manager managers policy policies field fields hash hashes hashed hashing expiry expired expires expiration
		length strength requirement requirements rule rules prompt prompts protected protection recovery hint hints
		login logins file files store stored storage vault saved save set sets setting settings
		required missing empty blank invalid valid wrong incorrect correct weak strong new old same different default
		here there below above attached provided given needed optional mandatory unknown secret private public
		please authentication auth based less limit limits count counts usage refresh revoke revoked
		generation generator leak leaked leaks exposure rotated ttl lifetime scope scopes type format`) {
		m[w] = true
	}
	return m
}()

// redactProseSecrets replaces the values proseSecret finds: always after
// "is", ":", "=" and the like, unless the value is a word of prose ("the
// password is wrong"); after space only, for the strong secret words
// unless the value is a word of prose, for the others only when it looks
// like a value. A value redacted already is kept as it is, so redacting
// twice changes nothing.
func redactProseSecrets(s string) string {
	return proseSecret.ReplaceAllStringFunc(s, func(m string) string {
		g := proseSecret.FindStringSubmatch(m)
		word, join, value := g[1], g[2], g[3]
		core := strings.TrimRight(value, ".!?)]}")
		if core == "" || strings.HasPrefix(value, Marker) || strings.HasPrefix(value, redactedPassword) ||
			strings.HasPrefix(value, "//") { // "token for https://…": a URL, which URL cleans
			return m
		}
		quoted := strings.ContainsAny(core[:1], `"'“`)
		if !quoted && proseWords[strings.ToLower(core)] || placeholderPattern.MatchString(core) {
			return m // prose, or a placeholder of a text redacted already ("password <secret>")
		}
		joins := strings.Fields(strings.ToLower(join))
		assigned := strings.ContainsAny(join, ":=") ||
			len(joins) > 0 && slices.Contains([]string{"is", "was", "are", "to"}, joins[len(joins)-1])
		if !assigned && !quoted {
			lw := strings.ToLower(word)
			switch {
			case len(joins) > 0: // "password for bob hunter2" says too little to be sure
				return m
			case strings.HasPrefix(lw, "pin"): // "pin 3 messages"
				return m
			case !strongSecretWords[lw] && !looksLikeValue(core):
				return m
			}
		}
		return word + join + Marker + value[len(core):]
	})
}

// placeholderPattern is a placeholder such as <secret> or <num>, which
// stands for a value and is not one.
var placeholderPattern = regexp.MustCompile(`^<[a-z]+>$`)

// looksLikeValue reports whether a word after a secret word looks like a
// value rather than prose: it holds a digit or a symbol, or a capital
// after its first letter.
func looksLikeValue(w string) bool {
	for i, r := range w {
		switch {
		case r >= '0' && r <= '9', !unicode.IsLetter(r):
			return true
		case i > 0 && unicode.IsUpper(r):
			return true
		}
	}
	return false
}

// urlPattern finds URLs in free text, which URL then cleans.
var urlPattern = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s"'<>` + "`" + `]+`)

// Text removes from free text (an error message, what an unknown
// caller presented) the secrets that Arguments finds by pattern and
// by shape in strings, and cuts it to at most limit bytes at a character
// boundary, marked "…" (a limit ≤ 0 means 256). Invalid UTF-8 becomes
// U+FFFD. Key names play no part: use Arguments for JSON.
func Text(s string, limit int) string {
	if limit <= 0 {
		limit = redactMaxString
	}
	return redactString(strings.ToValidUTF8(s, "\uFFFD"), max(limit-len(markEllipsis), 1))
}

// redactString removes secrets from s and cuts it to at most limit bytes
// (plus the "…" marker).
func redactString(s string, limit int) string {
	cut := false
	if window := max(redactScanWindow, 4*limit); len(s) > window {
		s, cut = cutAtToken(s, window), true
	}
	lower := strings.ToLower(s)
	for _, p := range secretPatterns {
		if !containsAny(lower, p.hints) || p.needs != "" && !strings.ContainsAny(s, p.needs) || !p.re.MatchString(s) {
			continue
		}
		if p.keep {
			s = p.re.ReplaceAllString(s, "${1}"+Marker)
		} else {
			s = p.re.ReplaceAllLiteralString(s, Marker)
		}
	}
	if containsAny(lower, proseSecretHints) {
		s = redactProseSecrets(s)
	}
	if strings.Contains(s, "://") {
		s = urlPattern.ReplaceAllStringFunc(s, URL)
	}
	s = redactRandomTokens(s)
	if cut || len(s) > limit {
		return truncateUTF8(s, limit) + markEllipsis
	}
	return s
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

// cutAtToken cuts s to at most n bytes, dropping a run of token characters
// that the cut would split, so that no secret is ever half kept.
func cutAtToken(s string, n int) string {
	s = truncateUTF8(s, n)
	if len(s) == 0 || !isTokenByte(s[len(s)-1]) {
		return s
	}
	end := len(s)
	for end > 0 && isTokenByte(s[end-1]) {
		end--
	}
	return s[:end]
}

// isTokenByte reports the characters of the tokens redactRandomTokens
// examines: base64 and base64url alphabets.
func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '_' || c == '-'
}

// redactRandomTokens replaces the runs of token characters of s that look
// like generated secrets.
func redactRandomTokens(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		if j-i >= redactMinTokenLen && looksSecret(s[i:j]) {
			b.WriteString(s[last:i])
			b.WriteString(Marker)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// uuidPattern is a UUID, an identifier rather than a secret, like the ids
// of idPattern.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// looksSecret reports whether a token looks generated: a long hex string,
// or letters and digits mixed like random text. A path ("/a/b", "./a",
// "~/a") is judged segment by segment, so that long paths of ordinary
// names are kept.
func looksSecret(tok string) bool {
	if strings.HasPrefix(tok, "/") || strings.HasPrefix(tok, "./") || strings.HasPrefix(tok, "../") {
		for seg := range strings.SplitSeq(tok, "/") {
			if len(seg) >= redactMinTokenLen && looksRandom(seg) {
				return true
			}
		}
		return false
	}
	return looksRandom(tok)
}

// looksRandom applies the shape test to one token.
func looksRandom(tok string) bool {
	if uuidPattern.MatchString(tok) || idPattern.MatchString(tok) {
		return false
	}
	var letters, digits, hex, alnum, pairs, changes int
	var counts [256]int
	prevClass := 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		counts[c]++
		class := 0
		switch {
		case 'a' <= c && c <= 'z':
			class, letters = 1, letters+1
		case 'A' <= c && c <= 'Z':
			class, letters = 2, letters+1
		case '0' <= c && c <= '9':
			class, digits = 3, digits+1
		}
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' {
			hex++
		}
		if class == 0 {
			prevClass = 0
			continue
		}
		alnum++
		if prevClass != 0 {
			pairs++
			if class != prevClass {
				changes++
			}
		}
		prevClass = class
	}
	if letters == 0 || digits == 0 {
		return false
	}
	if hex == alnum && alnum >= redactMinHexLen {
		return true
	}
	if alnum < redactMinTokenLen || pairs == 0 || float64(changes)/float64(pairs) < 0.3 {
		return false
	}
	var entropy float64
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(len(tok))
			entropy -= p * math.Log2(p)
		}
	}
	return entropy >= 3.5
}
