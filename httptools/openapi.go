package httptools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// maxDocumentBytes bounds an OpenAPI document fetched from a URL.
const maxDocumentBytes = 16 << 20

// MaxInlineDocumentBytes bounds [Source.OpenAPIDocument]. An inline
// document is read whole by the admin API, kept in the store and read back
// by every replica's sync, so it is kept well under the URL limit: 2 MiB
// holds all but the very largest public APIs, which can be given by URL
// (up to 16 MiB) instead.
const MaxInlineDocumentBytes = 2 << 20

// loadOpenAPI reads and parses the source's document and returns its
// operations. Anything that makes the whole document unusable sets
// p.failed and returns nothing; a panic in the parser is one of those, and
// so are a document over its [Budget] and the end of ctx (checked between
// the steps and between operations: libopenapi's parse itself cannot be
// interrupted, and is bounded by the document's size).
func (p *Provider) loadOpenAPI(ctx context.Context) (ops []*operation) {
	defer func() {
		if r := recover(); r != nil {
			p.failed = fmt.Sprintf("the OpenAPI document could not be parsed: %v", r)
			ops = nil
		}
	}()
	budget := &loadBudget{limits: p.opts.Budget}
	raw, docURL, err := p.readDocument(ctx)
	if err != nil {
		if !p.stopped(ctx) {
			p.failed = err.Error()
		}
		return nil
	}
	if isSwagger2(raw) {
		if raw, err = upgradeSwagger2(raw); err != nil {
			p.failed = fmt.Sprintf("the Swagger 2.0 document could not be read: %v", err)
			return nil
		}
	}
	if p.stopped(ctx) {
		return nil
	}
	cfg := datamodel.NewDocumentConfiguration()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.AllowRemoteReferences = p.src.AllowRemoteRefs
	// Without AllowRemoteRefs, remote $refs are not followed at all (and
	// their schemas become permissive), not merely refused on fetch.
	cfg.SkipExternalRefResolution = !p.src.AllowRemoteRefs
	cfg.IgnorePolymorphicCircularReferences = true
	cfg.IgnoreArrayCircularReferences = true
	if p.src.AllowRemoteRefs {
		cfg.RemoteURLHandler = func(u string) (*http.Response, error) {
			if budget.refsOver.Load() {
				return nil, errRefsTooLarge // no more requests once over
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				return nil, err
			}
			resp, err := p.client.Do(req)
			if err != nil {
				return nil, err
			}
			return budget.boundRemoteRef(resp)
		}
	}
	if docURL == nil && p.src.OpenAPIDocument == "" && !isURL(p.src.OpenAPI) {
		// $refs to files beside a document read from a file.
		cfg.AllowFileReferences = true
		cfg.BasePath = filepath.Dir(p.src.OpenAPI)
	}
	doc, err := libopenapi.NewDocumentWithConfiguration(raw, cfg)
	if err != nil {
		p.failed = fmt.Sprintf("the OpenAPI document could not be parsed: %v", firstLine(err))
		return nil
	}
	model, err := doc.BuildV3Model()
	if budget.refsOver.Load() {
		p.overBudget = true
		p.failed = fmt.Sprintf("the OpenAPI document %s is over the load budget: %v", p.documentName(), errRefsTooLarge)
		return nil
	}
	if p.stopped(ctx) {
		return nil
	}
	if model == nil {
		p.failed = fmt.Sprintf("the OpenAPI document could not be used: %v", firstLine(err))
		return nil
	}
	if err != nil {
		p.problems = append(p.problems, "the document has problems: "+firstLine(err))
	}
	if p.base == nil {
		if err := p.baseFromServers(ctx, model.Model.Servers, docURL); err != nil {
			p.failed = err.Error()
			return nil
		}
	}
	if model.Model.Paths == nil || model.Model.Paths.PathItems == nil {
		p.failed = "the OpenAPI document has no paths"
		return nil
	}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		if item == nil {
			continue
		}
		for method, o := range item.GetOperations().FromOldest() {
			method = strings.ToUpper(method)
			if o == nil || !slices.Contains(methods, method) {
				continue
			}
			if !p.selected(method, path, o) {
				continue
			}
			if p.stopped(ctx) {
				return nil
			}
			op, err := p.openAPIOperation(method, path, item, o, budget)
			if p.overNodes(budget) {
				return nil
			}
			if err != nil {
				p.problems = append(p.problems, fmt.Sprintf("%s %s: %v", method, path, err))
				continue
			}
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		p.failed = "no operation of the document is selected or usable"
	}
	return ops
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// readDocument reads the document from its file, or fetches it from its
// URL through the egress policy (docURL is then that URL).
func (p *Provider) readDocument(ctx context.Context) (raw []byte, docURL *url.URL, err error) {
	if p.src.OpenAPIDocument != "" {
		return []byte(p.src.OpenAPIDocument), nil, nil
	}
	if !isURL(p.src.OpenAPI) {
		raw, err := p.opts.ReadFile(p.src.OpenAPI)
		if err != nil {
			return nil, nil, fmt.Errorf("read the OpenAPI document: %v", err)
		}
		return raw, nil, nil
	}
	u, err := url.Parse(p.src.OpenAPI)
	if err != nil {
		return nil, nil, fmt.Errorf("the openapi URL is not valid")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch the OpenAPI document: %v", err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch the OpenAPI document %s: %s", redact.URL(u.String()), transportError(err, nil))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("fetch the OpenAPI document %s: HTTP %d", redact.URL(u.String()), resp.StatusCode)
	}
	raw, err = io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("fetch the OpenAPI document: %v", err)
	}
	if len(raw) > maxDocumentBytes {
		return nil, nil, fmt.Errorf("the OpenAPI document is larger than %d bytes", maxDocumentBytes)
	}
	return raw, u, nil
}

// baseFromServers takes the base URL from the document's first server,
// with its variables at their defaults, resolved against the document's
// URL when relative. Without base_url, it must pass the egress policy.
func (p *Provider) baseFromServers(ctx context.Context, servers []*v3.Server, docURL *url.URL) error {
	if len(servers) == 0 || servers[0] == nil || servers[0].URL == "" {
		return fmt.Errorf("the document names no server: set base_url")
	}
	s := servers[0]
	raw := s.URL
	if s.Variables != nil {
		for name, v := range s.Variables.FromOldest() {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the document's server URL is not valid: set base_url")
	}
	if !u.IsAbs() {
		if docURL == nil {
			return fmt.Errorf("the document's server URL %q is relative: set base_url", raw)
		}
		u = docURL.ResolveReference(u)
	}
	if err := p.setBase(ctx, u.String()); err != nil {
		return fmt.Errorf("the document's server: %v", err)
	}
	return nil
}

// selected applies Include and Exclude to an operation.
func (p *Provider) selected(method, path string, o *v3.Operation) bool {
	matches := func(list []string) bool {
		for _, e := range list {
			if tag, ok := strings.CutPrefix(e, "tag:"); ok {
				if slices.Contains(o.Tags, tag) {
					return true
				}
				continue
			}
			if e == o.OperationId || e == operationName(method, path, o) {
				return true
			}
		}
		return false
	}
	if len(p.src.Include) > 0 && !matches(p.src.Include) {
		return false
	}
	return !matches(p.src.Exclude)
}

// operationName is an operation's tool name before the source's prefix:
// its operationId with characters outside [A-Za-z0-9_-] replaced by "_",
// or, without one, the method and path ("get_pets_petId").
func operationName(method, path string, o *v3.Operation) string {
	if o.OperationId != "" {
		return sanitizeName(o.OperationId)
	}
	name := strings.ToLower(method) + "_" + strings.Trim(sanitizeName(strings.NewReplacer("{", "", "}", "").Replace(path)), "_")
	return strings.TrimRight(name, "_")
}

// maxDescription bounds a tool's description.
const maxDescription = 2000

// openAPIOperation turns one operation into a tool: its parameters (the
// path item's, overridden by the operation's own) and its request body
// (as the argument "body") make the input schema, and its first 2xx JSON
// response the output schema.
func (p *Provider) openAPIOperation(method, path string, item *v3.PathItem, o *v3.Operation, budget *loadBudget) (*operation, error) {
	name := operationName(method, path, o)
	// ReadMe's documents list one path twice as "/p#a" and "/p#b"; the
	// fragment names the operation but is not part of the request.
	path, _, _ = strings.Cut(path, "#")
	if _, err := pathParams(path); err != nil {
		return nil, fmt.Errorf("path: %v", err)
	}
	op := &operation{id: cmpOr(o.OperationId, method+" "+path), method: method, path: path}
	conv := &schemaConverter{doc: budget}
	props := map[string]any{}
	var required []any

	type key struct{ name, in string }
	var order []key
	byKey := map[key]*v3.Parameter{}
	for _, list := range [][]*v3.Parameter{item.Parameters, o.Parameters} {
		for _, prm := range list {
			if prm == nil || prm.Name == "" {
				continue
			}
			k := key{prm.Name, strings.ToLower(prm.In)}
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = prm
		}
	}
	taken := map[string]bool{}
	for _, k := range order {
		prm := byKey[k]
		switch k.in {
		case "path", "query", "header", "cookie":
		default:
			continue
		}
		if k.in == "header" && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(prm.Name)) {
			continue // OpenAPI says these are ignored as parameters
		}
		arg := prm.Name
		if taken[arg] {
			arg = k.in + "_" + prm.Name
		}
		taken[arg] = true
		pp := param{name: prm.Name, arg: arg, in: k.in}
		var schema map[string]any
		switch {
		case prm.Schema != nil:
			schema = conv.convert(prm.Schema)
		case prm.Content != nil && prm.Content.Len() > 0:
			for _, mt := range prm.Content.FromOldest() {
				if mt != nil {
					schema = conv.convert(mt.Schema)
				}
				break
			}
			pp.asJSON = true
		default:
			schema = map[string]any{"type": "string"}
		}
		style := prm.Style
		if style == "" && (k.in == "query" || k.in == "cookie") {
			style = "form"
		}
		pp.explode = style == "form" && (prm.Explode == nil || *prm.Explode)
		pp.deepObject = style == "deepObject"
		if prm.Description != "" {
			schema["description"] = prm.Description
		}
		if k.in == "path" {
			notDotSegment(schema)
		}
		props[arg] = schema
		if k.in == "path" || (prm.Required != nil && *prm.Required) {
			required = append(required, arg)
		}
		op.params = append(op.params, pp)
	}
	if slices.ContainsFunc(op.params, func(pp param) bool { return pp.in == "path" }) || strings.Contains(path, "{") {
		names, _ := pathParams(path)
		for _, n := range names {
			if !slices.ContainsFunc(op.params, func(pp param) bool { return pp.in == "path" && pp.name == n }) {
				return nil, fmt.Errorf("the path parameter {%s} is not described", n)
			}
		}
	}
	if rb := o.RequestBody; rb != nil && rb.Content != nil && rb.Content.Len() > 0 {
		ct, mt := pickMedia(rb.Content)
		arg := "body"
		for n := 2; taken[arg]; n++ {
			arg = fmt.Sprintf("body%d", n)
		}
		var schema map[string]any
		if mt != nil && mt.Schema != nil {
			schema = conv.convert(mt.Schema)
		} else {
			schema = map[string]any{}
		}
		if rb.Description != "" {
			schema["description"] = rb.Description
		} else if schema["description"] == nil {
			schema["description"] = "The request body (" + ct + ")."
		}
		props[arg] = schema
		if rb.Required != nil && *rb.Required {
			required = append(required, arg)
		}
		op.bodyArg, op.contentType = arg, ct
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		input["required"] = required
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("input schema: %v", err)
	}
	summary := summaryOf(o.Summary, o.OperationId)
	desc := summary
	if d := strings.TrimSpace(o.Description); d != "" && d != desc {
		desc = strings.TrimSpace(desc + "\n\n" + d)
	}
	if desc == "" {
		desc = describeOperation(method, path)
	}
	if len(desc) > maxDescription {
		desc = strings.ToValidUTF8(desc[:maxDescription], "") + "…"
	}
	op.tool = &mcp.Tool{
		Name:        name,
		Description: desc,
		InputSchema: json.RawMessage(raw),
		Annotations: annotations(method, summary),
		Meta:        operationMeta(method, path, o.Tags),
	}
	if out, wrap := outputSchema(o, &schemaConverter{doc: budget}); out != nil {
		if b, err := json.Marshal(out); err == nil {
			op.tool.OutputSchema = json.RawMessage(b)
			op.wrapOutput = wrap
		}
	}
	return op, nil
}

// pickMedia chooses the request body's media type: JSON first, then a
// URL-encoded form, then a multipart form, then the first listed.
func pickMedia(content *orderedmap.Map[string, *v3.MediaType]) (string, *v3.MediaType) {
	var first string
	for ct := range content.KeysFromOldest() {
		if first == "" {
			first = ct
		}
	}
	for _, want := range []func(string) bool{
		isJSON,
		func(ct string) bool { return strings.HasPrefix(ct, "application/x-www-form-urlencoded") },
		func(ct string) bool { return strings.HasPrefix(ct, "multipart/form-data") },
	} {
		for ct, mt := range content.FromOldest() {
			if want(ct) {
				return ct, mt
			}
		}
	}
	return first, content.GetOrZero(first)
}

// outputSchema is the JSON Schema of the first 2xx answer with a JSON
// schema: the schema itself when it describes an object, else an object
// whose "result" is the answer (wrap), as structuredContent must be an
// object.
func outputSchema(o *v3.Operation, conv *schemaConverter) (map[string]any, bool) {
	if o.Responses == nil || o.Responses.Codes == nil {
		return nil, false
	}
	var codes []string
	for code := range o.Responses.Codes.KeysFromOldest() {
		if strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes)
	for _, code := range codes {
		r := o.Responses.Codes.GetOrZero(code)
		if r == nil || r.Content == nil {
			continue
		}
		for ct, mt := range r.Content.FromOldest() {
			if !isJSON(ct) || mt == nil || mt.Schema == nil {
				continue
			}
			s := conv.convert(mt.Schema)
			if s["type"] == "object" {
				return s, false
			}
			return map[string]any{"type": "object", "properties": map[string]any{"result": s}, "required": []any{"result"}}, true
		}
	}
	return nil, false
}
