package httptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/credapply"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// operation is one tool: how its arguments become a request, and how the
// answer becomes a result.
type operation struct {
	id     string // the endpoint's name or the operationId, for problems
	tool   *mcp.Tool
	method string
	path   string // template, "{name}" for path parameters
	params []param
	// bodyFields are the arguments that make up a JSON object body
	// (declarative endpoints).
	bodyFields []string
	// bodyArg is the argument that holds the whole body (OpenAPI), sent
	// as contentType.
	bodyArg     string
	contentType string
	shape       *Shape
	// wrapOutput: the output schema describes {"result": <answer>}.
	wrapOutput bool
}

// param is one argument sent in the path, query, a header or a cookie.
type param struct {
	name string // in the request
	arg  string // in the arguments
	in   string // "path", "query", "header" or "cookie"
	// explode: an array query value is repeated (a=1&a=2), not joined
	// (a=1,2); deepObject: an object query value is sent as a[k]=v.
	explode, deepObject bool
	// asJSON: the value is sent as JSON text (a parameter with content).
	asJSON bool
}

// annotations are the hints of an HTTP method: GET and HEAD only read,
// DELETE destroys (so the agents ask before running it), PUT and DELETE
// may be repeated. Every HTTP tool reaches outside this server.
func annotations(method, title string) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: title, OpenWorldHint: new(true)}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		a.ReadOnlyHint = true
	case http.MethodDelete:
		a.DestructiveHint = new(true)
		a.IdempotentHint = true
	case http.MethodPut:
		a.IdempotentHint = true
	}
	return a
}

// endpointOperation turns a declarative endpoint (already checked) into
// an operation, with its exact input schema.
func endpointOperation(e Endpoint) *operation {
	method := strings.ToUpper(e.Method)
	op := &operation{id: e.Name, method: method, path: e.Path, shape: e.Response, contentType: "application/json"}
	props := map[string]any{}
	required := []any{}
	names, _ := pathParams(e.Path)
	for _, n := range names {
		desc := e.PathParams[n]
		if desc == "" {
			desc = "The {" + n + "} of the path."
		}
		// minLength 1 and no dot-segment: either would change the path.
		schema := map[string]any{"type": "string", "minLength": 1, "description": desc}
		notDotSegment(schema)
		props[n] = schema
		required = append(required, n)
		op.params = append(op.params, param{name: n, arg: n, in: "path"})
	}
	for _, n := range sortedKeys(e.Query) {
		s := map[string]any{"type": "string"}
		if d := e.Query[n]; d != "" {
			s["description"] = d
		}
		props[n] = s
		op.params = append(op.params, param{name: n, arg: n, in: "query", explode: true})
	}
	for _, n := range sortedKeys(e.Body) {
		props[n] = e.Body[n]
		op.bodyFields = append(op.bodyFields, n)
	}
	for _, r := range e.Required {
		required = append(required, r)
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	raw, _ := json.Marshal(schema)
	desc := e.Description
	if desc == "" {
		desc = describeOperation(method, e.Path)
	}
	op.tool = &mcp.Tool{
		Name:        e.Name,
		Description: desc,
		InputSchema: json.RawMessage(raw),
		Annotations: annotations(method, ""),
		Meta:        operationMeta(method, e.Path, nil),
	}
	return op
}

// CallTool sends the request of the named tool and turns the answer into
// a result: a JSON answer (after shaping) is structuredContent, an object
// (a non-object answer is wrapped as {"result": …}), and its JSON text; any
// other answer is text. An error status, a transport failure, a timeout and
// an answer over the size limit are results with IsError set; an unknown
// tool is ENOTFOUND. A missing authorization, a 401 or 403 to a request
// that carried a credential of the Authorizer, and for a source with
// delegation a caller without a delegable token or a 401, are
// [mcpwire.AuthorizationRequiredResult]s.
func (p *Provider) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	op, ok := p.ops[req.Params.Name]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "tool %q is not a tool of http_tools %q", req.Params.Name, p.src.Name)
	}
	args := map[string]any{}
	if raw := bytes.TrimSpace(req.Params.Arguments); len(raw) > 0 && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return errorResult("the arguments are not a JSON object: %v", err), nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, p.src.Timeout)
	defer cancel()
	httpReq, err := p.request(ctx, op, args)
	if err != nil {
		return errorResult("%v", err), nil
	}
	// Every error names the operation by its method and path template,
	// never by the request's URL: the URL holds the caller's path and
	// query values and, for a credential sent in the query, the shared
	// secret, and error texts reach logs, the audit trail and tool
	// performance. Whatever is quoted (a transport error, the API's
	// answer) is cleaned of the credentials by value and by name (sent).
	var cred *agentsmcp.AppliedCredential
	sent := p.sourceSecrets()
	switch {
	case p.deleg != nil:
		// The caller's identity, never the store's: a source that acts as
		// its caller has no credential of its own.
		token, err := p.deleg.token(ctx)
		if err != nil {
			return authErrorResult(err), nil
		}
		httpReq.Header.Set("Authorization", "Bearer "+token)
		sent.Header.Set("Authorization", "Bearer "+token)
	case p.opts.Auth != nil:
		if cred, err = p.opts.Auth.Authorize(ctx, p.src.Name); err != nil {
			return authErrorResult(err), nil
		}
		credapply.Apply(cred, httpReq)
		if cred != nil {
			for k, vs := range cred.Header {
				sent.Header[k] = vs
			}
			sent.Query = cred.Query
		}
	}
	resp, err := p.client.Do(httpReq)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errorResult("%s %s: no answer within %s", op.method, op.path, p.src.Timeout), nil
		}
		return errorResult("%s %s: %s", op.method, op.path, transportError(err, sent)), nil
	}
	defer resp.Body.Close()
	limit, setting := p.src.MaxResponseBytes, "max_response_bytes"
	if m := p.opts.MaxResultBytes; m > 0 && m < limit {
		limit, setting = m, "limits.max_result_bytes"
	}
	// Not read past the limit: the rest is dropped with the connection.
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errorResult("%s %s: the answer did not end within %s", op.method, op.path, p.src.Timeout), nil
		}
		return errorResult("%s %s: reading the answer: %s", op.method, op.path, transportError(err, sent)), nil
	}
	if p.deleg != nil && resp.StatusCode == http.StatusUnauthorized {
		// The caller's token (or the one exchanged for it) was refused. A
		// 403 is the API's own answer: the identity is known, not allowed.
		return mcpwire.AuthorizationRequiredResult(p.deleg.refused(ctx)), nil
	}
	if cred != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		// The credential was refused: the store drops a cached token and
		// says what a person must do. Without a credential, a 401 or 403
		// is the API's own answer, quoted below like any other.
		if err := p.opts.Auth.Refused(ctx, p.src.Name, resp.StatusCode); err != nil {
			var ar *agentsmcp.AuthorizationRequired
			if errors.As(err, &ar) {
				return mcpwire.AuthorizationRequiredResult(ar), nil
			}
			p.opts.Logger.WarnContext(ctx, "http_tools: reporting a refused credential failed", "source", p.src.Name, "err", err)
		}
	}
	if resp.StatusCode >= 400 {
		// Only the start is quoted, so a long error body is no error. An
		// API may echo the request (its URL, its headers) in its answer.
		return errorResult("HTTP %d %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), credapply.Redact(sent, shortBody(body))), nil
	}
	if int64(len(body)) > limit {
		return errorResult("%s %s: the answer is larger than the limit of %d bytes (%s)", op.method, op.path, limit, setting), nil
	}
	return op.result(resp.Header.Get("Content-Type"), body), nil
}

// sourceSecrets are the headers of the source's configuration that carry
// a secret (by their name, such as X-Api-Key, or by their value), as a
// credential to clean texts of: what every request of the source sends.
func (p *Provider) sourceSecrets() *agentsmcp.AppliedCredential {
	sent := &agentsmcp.AppliedCredential{Header: http.Header{}}
	for k, v := range p.src.Headers {
		if redact.IsSecretName(k) || redact.HasSecret(v) {
			sent.Header.Set(k, v)
		}
	}
	return sent
}

// transportError is the text of a failed exchange without the request's
// URL, which net/http errors quote (*url.Error), and cleaned of what cred
// put in the request; a nil cred still cleans any URL left in the text
// (a refused redirect names its target's origin).
func transportError(err error, cred *agentsmcp.AppliedCredential) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	// A connection's failure names both of its ends' addresses
	// ("read tcp 10.0.0.5:41234->10.0.0.9:443: …"): the operation and its
	// cause are the news, the addresses are the network's layout.
	if op, ok := err.(*net.OpError); ok && op.Err != nil {
		return credapply.Redact(cred, op.Op+" "+op.Net+": "+op.Err.Error())
	}
	return credapply.Redact(cred, err.Error())
}

// maxErrorBody is how much of an error answer's body a result quotes.
const maxErrorBody = 512

func shortBody(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if s == "" {
		return "(empty body)"
	}
	if len(s) > maxErrorBody {
		cut := maxErrorBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// authErrorResult is the result of a call the Authorizer stopped: the
// actionable request for authorization, else the error's text.
func authErrorResult(err error) *mcp.CallToolResult {
	var ar *agentsmcp.AuthorizationRequired
	if errors.As(err, &ar) {
		return mcpwire.AuthorizationRequiredResult(ar)
	}
	return errorResult("%s", redact.Message(err.Error()))
}

func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// isJSON reports whether a media type is JSON (application/json, or any
// "+json" type such as application/problem+json).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func (op *operation) result(contentType string, body []byte) *mcp.CallToolResult {
	var value any
	decoded := false
	if op.shape != nil && op.shape.Table != nil && !isJSON(contentType) {
		value, decoded = op.shape.Table.rows(string(body)), true
	} else if isJSON(contentType) || (contentType == "" && json.Valid(body)) {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&value); err == nil && !dec.More() {
			decoded = true
		}
	}
	if !decoded {
		text := string(body)
		if !utf8.ValidString(text) {
			text = fmt.Sprintf("(%d bytes of %s)", len(body), cmpOr(contentType, "binary content"))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	value = op.shape.apply(value)
	text, _ := json.Marshal(value)
	structured, isObject := value.(map[string]any)
	if op.wrapOutput || !isObject {
		structured = map[string]any{"result": value}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: structured,
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// request builds the HTTP request of one call. Path values are escaped
// as one segment each ("/" and "?" are escaped), and a segment that would
// be "." or ".." once decoded is refused ([dotSegmentError]), so no value
// can change which resource is addressed.
func (p *Provider) request(ctx context.Context, op *operation, args map[string]any) (*http.Request, error) {
	segments := map[string]string{} // path parameter name -> escaped segment
	query := url.Values{}
	header := http.Header{}
	var cookies []string
	for _, prm := range op.params {
		v, ok := args[prm.arg]
		if !ok || v == nil {
			if prm.in == "path" {
				return nil, fmt.Errorf("the path parameter %q is missing", prm.arg)
			}
			continue
		}
		switch prm.in {
		case "path":
			seg := pathValue(v, prm.asJSON)
			if seg == "" {
				return nil, fmt.Errorf("the path parameter %q must not be empty", prm.arg)
			}
			segments[prm.name] = seg
		case "query":
			addQuery(query, prm, v)
		case "header":
			header.Set(prm.name, flatValue(v, prm.asJSON))
		case "cookie":
			cookies = append(cookies, prm.name+"="+url.QueryEscape(flatValue(v, prm.asJSON)))
		}
	}
	path, err := op.fillPath(segments)
	if err != nil {
		return nil, err
	}
	target := strings.TrimSuffix(p.base.EscapedPath(), "/") + path
	u, err := url.Parse(p.base.Scheme + "://" + p.base.Host + target)
	if err != nil {
		return nil, fmt.Errorf("build the URL: %v", err)
	}
	u.User = p.base.User
	u.RawQuery = query.Encode()

	var body io.Reader
	contentType := ""
	switch {
	case len(op.bodyFields) > 0:
		obj := map[string]any{}
		for _, f := range op.bodyFields {
			if v, ok := args[f]; ok {
				obj[f] = v
			}
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encode the body: %v", err)
		}
		body, contentType = bytes.NewReader(b), "application/json"
	case op.bodyArg != "":
		if v, ok := args[op.bodyArg]; ok {
			b, ct, err := encodeBody(op.contentType, v)
			if err != nil {
				return nil, fmt.Errorf("encode the body: %v", err)
			}
			body, contentType = bytes.NewReader(b), ct
		}
	}
	req, err := http.NewRequestWithContext(ctx, op.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build the request: %v", err)
	}
	// Header arguments first, then the source's headers (and, in
	// CallTool, the Authorizer's), which win: a credential the operator
	// configured is not replaced by a caller's argument of the same name.
	for k, vs := range header {
		req.Header[k] = vs
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	for k, v := range p.src.Headers {
		req.Header.Set(k, v)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, */*;q=0.5")
	}
	return req, nil
}

// pathValue is one path segment: a scalar as text, an array joined with
// commas (OpenAPI's default "simple" style), each part escaped.
func pathValue(v any, asJSON bool) string {
	var parts []string
	if l, ok := v.([]any); ok && !asJSON {
		for _, e := range l {
			parts = append(parts, escapeSegment(toString(e)))
		}
		return strings.Join(parts, ",")
	}
	if asJSON {
		b, _ := json.Marshal(v)
		return escapeSegment(string(b))
	}
	return escapeSegment(toString(v))
}

func escapeSegment(s string) string { return url.PathEscape(s) }

// fillPath puts the escaped segments into the operation's path template.
// A segment of the result that holds a parameter and reads "." or ".."
// once decoded is an error naming the parameters (see [dotSegmentError]).
func (op *operation) fillPath(segments map[string]string) (string, error) {
	parts := strings.Split(op.path, "/")
	for i, part := range parts {
		if !strings.Contains(part, "{") {
			continue
		}
		var names []string
		for name, seg := range segments {
			if strings.Contains(part, "{"+name+"}") {
				names = append(names, name)
				part = strings.ReplaceAll(part, "{"+name+"}", seg)
			}
		}
		if isDotSegment(part) {
			return "", op.dotSegmentError(names)
		}
		parts[i] = part
	}
	return strings.Join(parts, "/"), nil
}

// maxDecodings is how many rounds of percent-decoding [isDotSegment]
// undoes: a proxy and a server may each decode once more ("%252e" is
// "%2e", then ".").
const maxDecodings = 4

// isDotSegment reports whether seg reads "." or ".." once decoded, by one
// or several rounds of percent-decoding: a dot-segment, which URL parsers
// (WHATWG, RFC 3986) and normalising proxies resolve against the path, so
// that /tenants/%2E%2E/users reaches /users.
func isDotSegment(seg string) bool {
	for range maxDecodings {
		if seg == "." || seg == ".." {
			return true
		}
		decoded, err := url.PathUnescape(seg)
		if err != nil || decoded == seg {
			return false
		}
		seg = decoded
	}
	return seg == "." || seg == ".."
}

// dotSegmentError is the error of a call whose path arguments would make
// a dot-segment: it names the arguments.
func (op *operation) dotSegmentError(names []string) error {
	args := make([]string, 0, len(names))
	for _, prm := range op.params {
		if prm.in == "path" && slices.Contains(names, prm.name) {
			args = append(args, strconv.Quote(prm.arg))
		}
	}
	slices.Sort(args)
	what := "the path parameter " + strings.Join(args, ", ") + " must not be"
	if len(args) > 1 {
		what = "the path parameters " + strings.Join(args, ", ") + " must not make"
	}
	return fmt.Errorf("invalid arguments: %s \".\" or \"..\", nor a percent-encoding of them: it would leave the path %s", what, op.path)
}

// dotSegmentPattern matches the strings [isDotSegment] refuses that a
// schema can describe: "." and "..", each dot also as "%2e" or "%2E",
// with the "%" itself encoded any number of times ("%252e").
const dotSegmentPattern = `^(\.|%(25)*2[eE]){1,2}$`

// notDotSegment adds to schema, the input schema of a path parameter, the
// refusal of dot-segments, so that the router refuses them as invalid
// arguments before the call (and tools/validate reports them). A schema
// that has a "not" of its own gets the refusal in "allOf".
func notDotSegment(schema map[string]any) {
	refusal := map[string]any{"type": "string", "pattern": dotSegmentPattern}
	if _, taken := schema["not"]; !taken {
		schema["not"] = refusal
		return
	}
	schema["allOf"] = append(asList(schema["allOf"]), map[string]any{"not": refusal})
}

// flatValue is a header or cookie value: scalars as text, arrays joined
// with commas, objects (and asJSON values) as JSON.
func flatValue(v any, asJSON bool) string {
	if l, ok := v.([]any); ok && !asJSON {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = toString(e)
		}
		return strings.Join(parts, ",")
	}
	if asJSON {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return toString(v)
}

func addQuery(q url.Values, prm param, v any) {
	switch x := v.(type) {
	case []any:
		if prm.asJSON {
			b, _ := json.Marshal(x)
			q.Add(prm.name, string(b))
			return
		}
		if prm.explode {
			for _, e := range x {
				q.Add(prm.name, toString(e))
			}
			return
		}
		q.Add(prm.name, flatValue(x, false))
	case map[string]any:
		if prm.deepObject {
			for _, k := range sortedKeys(x) {
				q.Add(prm.name+"["+k+"]", toString(x[k]))
			}
			return
		}
		if prm.explode && !prm.asJSON {
			for _, k := range sortedKeys(x) {
				q.Add(k, toString(x[k]))
			}
			return
		}
		b, _ := json.Marshal(x)
		q.Add(prm.name, string(b))
	default:
		q.Add(prm.name, toString(v))
	}
}

// encodeBody encodes an OpenAPI request body argument as contentType:
// JSON, a URL-encoded or multipart form (from an object), or the text of
// a string for any other type.
func encodeBody(contentType string, v any) ([]byte, string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case isJSON(contentType):
		b, err := json.Marshal(v)
		return b, contentType, err
	case mt == "application/x-www-form-urlencoded":
		form := url.Values{}
		if m, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				addQuery(form, param{name: k, explode: true}, m[k])
			}
		}
		return []byte(form.Encode()), contentType, nil
	case mt == "multipart/form-data":
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		if m, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				if err := w.WriteField(k, flatValue(m[k], false)); err != nil {
					return nil, "", err
				}
			}
		}
		if err := w.Close(); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), w.FormDataContentType(), nil
	}
	if s, ok := v.(string); ok {
		return []byte(s), contentType, nil
	}
	b, err := json.Marshal(v)
	return b, contentType, err
}
