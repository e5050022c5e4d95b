package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// Key is one inbound API key and what it may do.
//
// Exactly one of Secret (the key itself) and SHA256 (the lowercase or
// uppercase hex SHA-256 of the key, so that a config file need not hold the
// secret) is set. Scopes is not empty and holds only [agentsmcp.Scopes].
// Tools is an optional allowlist of path.Match patterns on exposed tool
// names. RateLimit (requests per second) and Burst override the server's
// default for this key when positive. CatalogMode, when set, is the
// key's own catalog mode ([agentsmcp.Principal.CatalogMode]).
type Key struct {
	Name        string // display name, optional; unique among named keys
	Secret      string
	SHA256      string
	Scopes      []string
	Tools       []string
	RateLimit   float64
	Burst       int
	CatalogMode agentsmcp.CatalogMode
	// VirtualServers optionally limits the key to the virtual servers whose
	// names match one of its path.Match patterns
	// ([agentsmcp.Principal.VirtualServers]).
	VirtualServers []string
	// CallQuotas bound the tool calls made with the key in each window
	// ([agentsmcp.CallQuota]); they need a store shared by the replicas
	// that serve the key, to count them.
	CallQuotas []agentsmcp.CallQuota
}

// CallQuotaSetting is the setting that configures the call quotas of the
// key named name, as refusals name it.
func CallQuotaSetting(name string) string {
	if name == "" {
		return "auth.api_keys.call_quotas"
	}
	return "auth.api_keys[name=" + name + "].call_quotas"
}

// Problem is one invalid field of a [Key] list or of a [JWTConfig].
// Field names the entry and field ("keys[0].scopes[1]", "jwks_url") so that
// a config loader can prefix it with the entry's place in its file.
type Problem struct {
	Field   string
	Message string
}

func (p Problem) Error() string { return p.Field + ": " + p.Message }

// keyNameRE keeps names printable and short: they appear in logs and the
// audit trail.
var keyNameRE = regexp.MustCompile(KeyNamePattern)

// KeyNamePattern is the syntax of [Key.Name].
const KeyNamePattern = `^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`

// hash returns the key's SHA-256 and whether it could be computed (a
// malformed SHA256 cannot).
func (k *Key) hash() ([sha256.Size]byte, bool) {
	if k.Secret != "" {
		return sha256.Sum256([]byte(k.Secret)), true
	}
	var h [sha256.Size]byte
	b, err := hex.DecodeString(strings.TrimSpace(k.SHA256))
	if err != nil || len(b) != sha256.Size {
		return h, false
	}
	copy(h[:], b)
	return h, true
}

// ID returns the principal ID of the key, "key:<first 12 hex digits of its
// SHA-256>", or "" when the key has neither a secret nor a valid hash. It is
// safe to log.
func (k *Key) ID() string {
	h, ok := k.hash()
	if !ok {
		return ""
	}
	return keyID(h)
}

func keyID(h [sha256.Size]byte) string { return "key:" + hex.EncodeToString(h[:6]) }

// String describes the key without its secret or hash, only its ID.
func (k Key) String() string {
	var b strings.Builder
	if k.Name != "" {
		fmt.Fprintf(&b, "name=%s ", k.Name)
	}
	fmt.Fprintf(&b, "id=%s scopes=%s", k.ID(), strings.Join(k.Scopes, ","))
	if len(k.Tools) > 0 {
		fmt.Fprintf(&b, " tools=%s", strings.Join(k.Tools, ","))
	}
	if len(k.VirtualServers) > 0 {
		fmt.Fprintf(&b, " virtual_servers=%s", strings.Join(k.VirtualServers, ","))
	}
	if k.RateLimit > 0 {
		fmt.Fprintf(&b, " rate_limit=%s", strconv.FormatFloat(k.RateLimit, 'g', -1, 64))
	}
	if k.Burst > 0 {
		fmt.Fprintf(&b, " burst=%d", k.Burst)
	}
	if k.CatalogMode != "" {
		fmt.Fprintf(&b, " catalog_mode=%s", k.CatalogMode)
	}
	for _, q := range k.CallQuotas {
		fmt.Fprintf(&b, " call_quota=%q", q.String())
	}
	return b.String()
}

// GoString makes %#v as safe as %v.
func (k Key) GoString() string { return "auth.Key{" + k.String() + "}" }

// principal is the caller a key authenticates. The slices are copied so
// that nothing outside can change what a key grants.
func (k *Key) principal(h [sha256.Size]byte) *agentsmcp.Principal {
	return &agentsmcp.Principal{
		ID:          keyID(h),
		Name:        k.Name,
		Scopes:      slices.Clone(k.Scopes),
		Tools:       slices.Clone(k.Tools),
		RateLimit:   k.RateLimit,
		Burst:       k.Burst,
		CatalogMode: k.CatalogMode,
		// The key's virtual servers, cloned for the same reason.
		VirtualServers: slices.Clone(k.VirtualServers),
		CallLimits:     k.callLimits(),
	}
}

// callLimits are the key's call quotas with the setting that names them.
func (k *Key) callLimits() []agentsmcp.CallLimit {
	if len(k.CallQuotas) == 0 {
		return nil
	}
	out := make([]agentsmcp.CallLimit, len(k.CallQuotas))
	for i, q := range k.CallQuotas {
		out[i] = agentsmcp.CallLimit{CallQuota: q, Setting: CallQuotaSetting(k.Name)}
	}
	return out
}

// CheckKeys lists every problem of keys, each key on its own (scopes, tool
// patterns, secret or hash, limits, name syntax) and together (no two keys
// with the same secret or the same name). label names entry i in fields
// and messages; nil means "keys[i]". Secrets never appear in the messages.
func CheckKeys(keys []Key, label func(i int) string) []Problem {
	if label == nil {
		label = func(i int) string { return fmt.Sprintf("keys[%d]", i) }
	}
	var out []Problem
	names := map[string]int{}
	hashes := map[[sha256.Size]byte]int{}
	for i := range keys {
		k := &keys[i]
		bad := func(field, format string, args ...any) {
			out = append(out, Problem{Field: label(i) + "." + field, Message: fmt.Sprintf(format, args...)})
		}
		if k.Name != "" {
			if !keyNameRE.MatchString(k.Name) {
				bad("name", "%q must match %s", k.Name, KeyNamePattern)
			} else if j, dup := names[k.Name]; dup {
				bad("name", "%q is already used by %s", k.Name, label(j))
			} else {
				names[k.Name] = i
			}
		}
		keyOK := false
		switch {
		case k.Secret != "" && k.SHA256 != "":
			bad("key", "set either the key or its SHA-256, not both")
		case k.Secret == "" && strings.TrimSpace(k.SHA256) == "":
			bad("key", "required: the key or its SHA-256 (key_sha256)")
		case k.Secret != "" && strings.TrimSpace(k.Secret) == "":
			bad("key", "must not be blank")
		case k.Secret != "" && strings.ContainsFunc(k.Secret, isSpaceOrControl):
			// A bearer token cannot carry them, so such a key could never be used.
			bad("key", "must not contain spaces or control characters")
		case k.Secret == "":
			if _, ok := k.hash(); !ok {
				bad("key_sha256", "must be %d hex digits", 2*sha256.Size)
			} else {
				keyOK = true
			}
		default:
			keyOK = true
		}
		if h, _ := k.hash(); keyOK {
			if j, dup := hashes[h]; dup {
				bad("key", "the same key as %s", label(j))
			} else {
				hashes[h] = i
			}
		}
		if len(k.Scopes) == 0 {
			bad("scopes", "required: one or more of %s", strings.Join(agentsmcp.Scopes, ", "))
		}
		for j, s := range k.Scopes {
			if !slices.Contains(agentsmcp.Scopes, s) {
				bad(fmt.Sprintf("scopes[%d]", j), "%q is not one of %s", s, strings.Join(agentsmcp.Scopes, ", "))
			}
		}
		for j, t := range k.Tools {
			if strings.TrimSpace(t) == "" {
				bad(fmt.Sprintf("tools[%d]", j), "empty pattern")
			} else if _, err := path.Match(t, ""); err != nil {
				bad(fmt.Sprintf("tools[%d]", j), "%q is not a valid pattern (path.Match syntax)", t)
			}
		}
		if err := validate.CallQuotas(k.CallQuotas); err != nil {
			bad("call_quotas", "%s", agentsmcp.ErrorMessage(err))
		}
		for j, v := range k.VirtualServers {
			if _, err := path.Match(v, ""); err != nil || strings.TrimSpace(v) == "" {
				bad(fmt.Sprintf("virtual_servers[%d]", j), "%q is not a valid pattern (path.Match syntax)", v)
			}
		}
		if k.RateLimit < 0 {
			bad("rate_limit", "must not be negative, got %v", k.RateLimit)
		}
		if k.Burst < 0 {
			bad("burst", "must not be negative, got %d", k.Burst)
		}
		if _, err := agentsmcp.ParseCatalogMode(string(k.CatalogMode)); err != nil || strings.TrimSpace(string(k.CatalogMode)) != string(k.CatalogMode) {
			bad("catalog_mode", "%q is not one of %s, %s", k.CatalogMode, agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery)
		}
	}
	return out
}

func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f
}

// keySet matches presented tokens against hashed keys.
type keySet struct {
	hashes     [][sha256.Size]byte
	principals []*agentsmcp.Principal
}

func newKeySet(keys []Key) *keySet {
	s := &keySet{}
	for i := range keys {
		h, _ := keys[i].hash()
		s.hashes = append(s.hashes, h)
		s.principals = append(s.principals, keys[i].principal(h))
	}
	return s
}

// lookup returns the principal of token, or nil, and the hash of token.
// The time it takes depends on the number of keys only, not on which key
// matched or how much of it, so it tells an attacker nothing.
func (s *keySet) lookup(token string) (*agentsmcp.Principal, [sha256.Size]byte) {
	got := sha256.Sum256([]byte(token))
	match := -1
	for i := range s.hashes {
		eq := subtle.ConstantTimeCompare(got[:], s.hashes[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return nil, got
	}
	// A copy: callers may keep or change the principal they are given.
	p := *s.principals[match]
	p.Scopes, p.Tools, p.VirtualServers = slices.Clone(p.Scopes), slices.Clone(p.Tools), slices.Clone(p.VirtualServers)
	return &p, got
}
