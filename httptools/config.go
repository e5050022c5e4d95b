package httptools

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
)

// Defaults of a [Source].
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// NamePattern is what a source's name must match: it prefixes its tools'
// names ("blog__list_posts"), so it follows the upstreams' rule.
var NamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)

// endpointNamePattern is what a declarative endpoint's name must match.
var endpointNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Source is one entry of the http_tools section: a set of HTTP endpoints,
// given one by one (Endpoints) or by an OpenAPI document (OpenAPI), whose
// tools appear as "<Name>__<endpoint>".
//
// Headers are sent with every request of the source; their values are
// secrets (API keys, usually), never logged nor returned: [Source.Redacted]
// is the form to show.
type Source struct {
	Name    string `yaml:"name" json:"name"`
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
	// Headers are added to every request; ${VAR} references are expanded
	// by the config loader before the source gets here.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Timeout bounds one call, from the request to the last byte of the
	// answer (default [DefaultTimeout]).
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxResponseBytes bounds the answer's body (default
	// [DefaultMaxResponseBytes]); a longer answer is a tool error.
	MaxResponseBytes int64 `yaml:"max_response_bytes" json:"max_response_bytes,omitempty"`

	// Endpoints are declarative tools.
	Endpoints []Endpoint `yaml:"endpoints" json:"endpoints,omitempty"`

	// OpenAPI is an OpenAPI 3.0/3.1 (or Swagger 2.0) document: a file path,
	// or an http(s) URL fetched once at load through the egress policy.
	// Sources added through the admin API may give a URL only.
	OpenAPI string `yaml:"openapi" json:"openapi,omitempty"`
	// OpenAPIDocument is the document itself (JSON or YAML), at most
	// [MaxInlineDocumentBytes]: how a source added through the admin API
	// brings a document that is not served at a URL. Its $refs to files
	// are never followed. It excludes OpenAPI.
	OpenAPIDocument string `yaml:"-" json:"openapi_document,omitempty"`
	// Include keeps only the operations it names, by operationId (or
	// generated tool name) or as "tag:NAME"; empty keeps every operation.
	Include []string `yaml:"include" json:"include,omitempty"`
	// Exclude drops the operations it names, as Include does; it wins.
	Exclude []string `yaml:"exclude" json:"exclude,omitempty"`
	// AllowRemoteRefs lets the document's $refs to other http(s)
	// documents be fetched (through the egress policy). Off by default:
	// a document names what it likes, and the server must not fetch it
	// on the document's word.
	AllowRemoteRefs bool `yaml:"allow_remote_refs" json:"allow_remote_refs,omitempty"`

	// Delegation, when set, makes the source act with the identity of its
	// caller instead of a stored credential (ADR 0012 D7b):
	// [DelegationForward] sends the caller's own bearer token,
	// [DelegationExchange] one exchanged for it (Exchange). Only a caller
	// authenticated by a JWT has a token to delegate; any other caller
	// gets an [agentsmcp.AuthorizationRequired] result (Delegated).
	Delegation string    `yaml:"delegation" json:"delegation,omitempty"`
	Exchange   *Exchange `yaml:"exchange" json:"exchange,omitempty"`
}

// Endpoint is one declarative HTTP tool.
//
// Its arguments are the path parameters (every "{name}" of Path, required
// strings), the query parameters (Query: optional strings), and the fields
// of the JSON body (Body: name to JSON Schema; Required lists those that
// must be given). A name may be used once across the three.
type Endpoint struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	Method      string `yaml:"method" json:"method"`
	Path        string `yaml:"path" json:"path"`
	// PathParams describes path parameters, by name; optional.
	PathParams map[string]string `yaml:"path_params" json:"path_params,omitempty"`
	// Query maps each query parameter to its description.
	Query map[string]string `yaml:"query" json:"query,omitempty"`
	// Body maps each JSON body field to its JSON Schema.
	Body     map[string]any `yaml:"body" json:"body,omitempty"`
	Required []string       `yaml:"required" json:"required,omitempty"`
	// Response shapes a JSON (or text table) answer before it is returned.
	Response *Shape `yaml:"response" json:"response,omitempty"`
}

// WithDefaults fills the zero limits of s.
func (s Source) WithDefaults() Source {
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxResponseBytes <= 0 {
		s.MaxResponseBytes = DefaultMaxResponseBytes
	}
	s.Name = strings.TrimSpace(s.Name)
	s.BaseURL = strings.TrimSpace(s.BaseURL)
	return s
}

// Redacted is s with its header values and exchange client secret
// replaced by "[REDACTED]" and the credentials of its URLs removed, for
// logs and status.
func (s Source) Redacted() Source {
	r := s
	if s.Headers != nil {
		r.Headers = make(map[string]string, len(s.Headers))
		for k := range s.Headers {
			r.Headers[k] = redact.Marker
		}
	}
	r.BaseURL = redact.URL(s.BaseURL)
	if s.Exchange != nil {
		e := *s.Exchange
		e.TokenEndpoint = redact.URL(e.TokenEndpoint)
		if e.ClientSecret != "" {
			e.ClientSecret = redact.Marker
		}
		r.Exchange = &e
	}
	if isURL(s.OpenAPI) {
		r.OpenAPI = redact.URL(s.OpenAPI)
	}
	if s.OpenAPIDocument != "" {
		r.OpenAPIDocument = fmt.Sprintf("[inline, %d bytes]", len(s.OpenAPIDocument))
	}
	return r
}

// Problem is one invalid field of a [Source].
type Problem struct {
	Field   string // e.g. "endpoints[2].path"
	Message string
}

func (p Problem) Error() string { return p.Field + ": " + p.Message }

// Problems lists what is wrong with s (after [Source.WithDefaults]); an
// OpenAPI document's own problems are found when it is loaded.
func (s Source) Problems() []Problem {
	var out []Problem
	add := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !NamePattern.MatchString(s.Name) {
		add("name", "must match %s", NamePattern)
	} else if strings.Contains(s.Name, agentsmcp.NamespaceSeparator) {
		add("name", "must not contain %q", agentsmcp.NamespaceSeparator)
	}
	if s.BaseURL != "" {
		if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("base_url", "must be an absolute http or https URL")
		} else if u.RawQuery != "" || u.Fragment != "" {
			add("base_url", "must not have a query or fragment")
		}
	}
	openapi := s.OpenAPI != "" || s.OpenAPIDocument != ""
	switch {
	case s.OpenAPI != "" && s.OpenAPIDocument != "":
		add("openapi_document", "a source has either an openapi URL or path or an inline openapi_document, not both")
	case !openapi && len(s.Endpoints) == 0:
		add("endpoints", "a source needs endpoints or an openapi document")
	case openapi && len(s.Endpoints) > 0:
		add("openapi", "a source has either endpoints or an openapi document, not both")
	case !openapi && s.BaseURL == "":
		add("base_url", "is required for endpoints")
	}
	if len(s.OpenAPIDocument) > MaxInlineDocumentBytes {
		add("openapi_document", "is %d bytes, more than the %d allowed inline; serve it at a URL and give that as openapi", len(s.OpenAPIDocument), MaxInlineDocumentBytes)
	}
	if !openapi && (len(s.Include) > 0 || len(s.Exclude) > 0) {
		add("include", "include and exclude apply to openapi sources only")
	}
	for _, k := range sortedKeys(s.Headers) {
		if !validHeaderName(k) {
			add("headers."+k, "is not a valid header name")
		}
		// The value is a secret: the problem does not quote it.
		if strings.ContainsFunc(s.Headers[k], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			add("headers."+k, "the value holds a control character (CR, LF, NUL, …)")
		}
	}
	out = append(out, s.delegationProblems()...)
	names := map[string]bool{}
	for i, e := range s.Endpoints {
		f := fmt.Sprintf("endpoints[%d]", i)
		if !endpointNamePattern.MatchString(e.Name) {
			add(f+".name", "must match %s", endpointNamePattern)
		} else if names[e.Name] {
			add(f+".name", "%q is used twice", e.Name)
		}
		names[e.Name] = true
		for _, p := range e.problems() {
			add(f+"."+p.Field, "%s", p.Message)
		}
	}
	return out
}

// methods are the HTTP methods an endpoint may use.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

func (e Endpoint) problems() []Problem {
	var out []Problem
	add := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !slices.Contains(methods, strings.ToUpper(e.Method)) {
		add("method", "must be one of %s", strings.Join(methods, ", "))
	}
	params, err := pathParams(e.Path)
	if err != nil {
		add("path", "%v", err)
	}
	args := map[string]string{}
	claim := func(name, where string) {
		if prev, dup := args[name]; dup {
			add(where, "argument %q is also a %s", name, prev)
		}
		args[name] = where
	}
	for _, p := range params {
		claim(p, "path parameter")
	}
	for k := range e.PathParams {
		if !slices.Contains(params, k) {
			add("path_params."+k, "is not a {parameter} of the path")
		}
	}
	for _, k := range sortedKeys(e.Query) {
		claim(k, "query parameter")
	}
	for _, k := range sortedKeys(e.Body) {
		claim(k, "body field")
		if _, ok := e.Body[k].(map[string]any); !ok {
			add("body."+k, "must be a JSON Schema object, such as {type: string}")
		}
	}
	for _, r := range e.Required {
		if _, ok := e.Body[r]; !ok {
			add("required", "%q is not a body field", r)
		}
	}
	if len(out) == 0 {
		// The body fields' schemas come from the config: check that the
		// whole input schema compiles as the router will compile it.
		op := endpointOperation(e)
		if err := compileSchema(toolschema.JSON(op.tool.InputSchema)); err != nil {
			add("body", "the input schema does not compile: %v", firstLine(err))
		}
	}
	if len(e.Body) > 0 && !bodyMethod(strings.ToUpper(e.Method)) {
		add("body", "a %s request has no body", strings.ToUpper(e.Method))
	}
	if e.Response != nil {
		for _, p := range e.Response.problems() {
			add("response."+p.Field, "%s", p.Message)
		}
	}
	return out
}

func bodyMethod(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch || m == http.MethodDelete
}

// pathParams returns the names of the "{name}" parameters of a path
// template, in order, each once.
func pathParams(path string) ([]string, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("must begin with /")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("must not have a query or fragment (use query)")
	}
	var out []string
	rest := path
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.Contains(rest, "}") {
				return nil, fmt.Errorf("has an unmatched }")
			}
			return out, nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("has an unmatched {")
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{/") {
			return nil, fmt.Errorf("has an invalid parameter {%s}", name)
		}
		// A name used twice takes the same value twice.
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
		rest = rest[i+j+1:]
	}
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
