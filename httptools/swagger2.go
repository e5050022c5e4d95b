package httptools

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file upgrades a Swagger 2.0 document to OpenAPI 3.0 before it is
// parsed, so that one walker serves both. It converts what tools need and
// nothing more:
//
//   - host, basePath and schemes become servers;
//   - definitions, parameters and responses move under components, and
//     every $ref to them follows;
//   - a body parameter becomes the request body, in the operation's (or the
//     document's) consumes types, application/json by default; formData
//     parameters become a form body (multipart when consumes says so or a
//     parameter is a file);
//   - the type, format, items, enum and bounds of other parameters move
//     into their schema, and collectionFormat becomes style and explode;
//   - a response's schema becomes its content in the produces types.
//
// Security definitions, examples and headers of responses are dropped.

// isSwagger2 reports whether raw (JSON or YAML) is a Swagger 2.0 document.
func isSwagger2(raw []byte) bool {
	var probe struct {
		Swagger any `yaml:"swagger"`
	}
	if yaml.Unmarshal(raw, &probe) != nil {
		return false
	}
	return strings.HasPrefix(toString(probe.Swagger), "2.")
}

// upgradeSwagger2 returns the OpenAPI 3.0 form of a Swagger 2.0 document,
// as JSON.
func upgradeSwagger2(raw []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	doc, ok := jsonValue(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not an object")
	}
	out := map[string]any{"openapi": "3.0.3"}
	for _, k := range []string{"info", "tags", "externalDocs"} {
		if doc[k] != nil {
			out[k] = doc[k]
		}
	}
	if host, _ := doc["host"].(string); host != "" {
		scheme := "https"
		if schemes, _ := doc["schemes"].([]any); len(schemes) > 0 {
			scheme = toString(schemes[0])
		}
		basePath, _ := doc["basePath"].(string)
		out["servers"] = []any{map[string]any{"url": scheme + "://" + host + basePath}}
	}
	consumes := stringList(doc["consumes"])
	produces := stringList(doc["produces"])

	components := map[string]any{}
	if defs, ok := doc["definitions"].(map[string]any); ok {
		for name, s := range defs {
			defs[name] = upgradeSchema(s)
		}
		components["schemas"] = defs
	}
	// Shared body and formData parameters cannot be parameters in 3.0;
	// they are inlined where they are used.
	shared, _ := doc["parameters"].(map[string]any)
	if len(shared) > 0 {
		params := map[string]any{}
		for name, p := range shared {
			if pm, ok := p.(map[string]any); ok && pm["in"] != "body" && pm["in"] != "formData" {
				params[name] = upgradeParameter(pm)
			}
		}
		components["parameters"] = params
	}
	if resps, ok := doc["responses"].(map[string]any); ok {
		for name, r := range resps {
			resps[name] = upgradeResponse(r, produces)
		}
		components["responses"] = resps
	}
	if len(components) > 0 {
		out["components"] = components
	}
	resolveShared := func(p any) map[string]any {
		pm, _ := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			if name, ok := strings.CutPrefix(ref, "#/parameters/"); ok {
				if sp, ok := shared[name].(map[string]any); ok && (sp["in"] == "body" || sp["in"] == "formData") {
					return sp
				}
			}
		}
		return pm
	}

	paths := map[string]any{}
	src, _ := doc["paths"].(map[string]any)
	for path, it := range src {
		item, ok := it.(map[string]any)
		if !ok {
			continue
		}
		newItem := map[string]any{}
		var itemBody []map[string]any
		if ps, ok := item["parameters"].([]any); ok {
			var keep []any
			for _, p := range ps {
				pm := resolveShared(p)
				if pm["in"] == "body" || pm["in"] == "formData" {
					itemBody = append(itemBody, pm)
				} else {
					keep = append(keep, upgradeParameter(pm))
				}
			}
			if len(keep) > 0 {
				newItem["parameters"] = keep
			}
		}
		for method, o := range item {
			op, ok := o.(map[string]any)
			if !ok || method == "parameters" || strings.HasPrefix(method, "x-") {
				continue
			}
			newOp := map[string]any{}
			for _, k := range []string{"tags", "summary", "description", "operationId", "deprecated", "externalDocs"} {
				if op[k] != nil {
					newOp[k] = op[k]
				}
			}
			opConsumes := consumes
			if c := stringList(op["consumes"]); len(c) > 0 {
				opConsumes = c
			}
			opProduces := produces
			if p := stringList(op["produces"]); len(p) > 0 {
				opProduces = p
			}
			body := append([]map[string]any(nil), itemBody...)
			var params []any
			if ps, ok := op["parameters"].([]any); ok {
				for _, p := range ps {
					pm := resolveShared(p)
					if pm["in"] == "body" || pm["in"] == "formData" {
						body = append(body, pm)
					} else {
						params = append(params, upgradeParameter(pm))
					}
				}
			}
			if len(params) > 0 {
				newOp["parameters"] = params
			}
			if rb := requestBody(body, opConsumes); rb != nil {
				newOp["requestBody"] = rb
			}
			responses := map[string]any{}
			if rs, ok := op["responses"].(map[string]any); ok {
				for code, r := range rs {
					if !strings.HasPrefix(code, "x-") {
						responses[code] = upgradeResponse(r, opProduces)
					}
				}
			}
			if len(responses) == 0 {
				responses["default"] = map[string]any{"description": "answer"}
			}
			newOp["responses"] = responses
			newItem[method] = newOp
		}
		paths[path] = newItem
	}
	out["paths"] = paths
	rewriteRefs(out)
	return json.Marshal(out)
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, toString(e))
	}
	return out
}

// schemaKeys are the keywords a 2.0 parameter shares with a schema.
var schemaKeys = []string{"type", "format", "items", "enum", "default", "maximum", "exclusiveMaximum", "minimum",
	"exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf"}

// upgradeParameter turns a path, query, header or formData parameter into
// a 3.0 parameter (formData ones become schema properties elsewhere).
func upgradeParameter(p map[string]any) map[string]any {
	if _, ref := p["$ref"]; ref {
		return p
	}
	out := map[string]any{}
	for _, k := range []string{"name", "in", "description", "required", "allowEmptyValue"} {
		if p[k] != nil {
			out[k] = p[k]
		}
	}
	out["schema"] = paramSchema(p)
	switch p["collectionFormat"] {
	case "csv":
		out["style"], out["explode"] = "form", false
	case "ssv":
		out["style"] = "spaceDelimited"
	case "pipes":
		out["style"] = "pipeDelimited"
	case "multi":
		out["style"], out["explode"] = "form", true
	default:
		if p["type"] == "array" && p["in"] == "query" {
			out["style"], out["explode"] = "form", false // 2.0's default is csv
		}
	}
	return out
}

func paramSchema(p map[string]any) map[string]any {
	s := map[string]any{}
	for _, k := range schemaKeys {
		if p[k] != nil {
			s[k] = p[k]
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		s["items"] = paramSchema(items)
	}
	if s["type"] == "file" {
		s["type"], s["format"] = "string", "binary"
	}
	return s
}

// requestBody builds the 3.0 request body of an operation's body or
// formData parameters.
func requestBody(params []map[string]any, consumes []string) map[string]any {
	if len(params) == 0 {
		return nil
	}
	var schema map[string]any
	required := false
	desc := ""
	form := false
	multipart := false
	for _, p := range params {
		if p["in"] == "body" {
			schema, _ = upgradeSchema(p["schema"]).(map[string]any)
			if schema == nil {
				schema = map[string]any{}
			}
			required = p["required"] == true
			desc, _ = p["description"].(string)
			continue
		}
		form = true
		if p["type"] == "file" {
			multipart = true
		}
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		props, _ := schema["properties"].(map[string]any)
		ps := paramSchema(p)
		if d, ok := p["description"].(string); ok {
			ps["description"] = d
		}
		props[toString(p["name"])] = ps
		if p["required"] == true {
			schema["required"] = append(asList(schema["required"]), p["name"])
			required = true
		}
	}
	types := consumes
	if form {
		types = nil
		for _, c := range consumes {
			if strings.HasPrefix(c, "multipart/") || strings.HasPrefix(c, "application/x-www-form-urlencoded") {
				types = append(types, c)
			}
		}
		if len(types) == 0 {
			types = []string{"application/x-www-form-urlencoded"}
			if multipart {
				types = []string{"multipart/form-data"}
			}
		}
	} else if len(types) == 0 {
		types = []string{"application/json"}
	}
	content := map[string]any{}
	for _, t := range types {
		content[t] = map[string]any{"schema": schema}
	}
	rb := map[string]any{"content": content, "required": required}
	if desc != "" {
		rb["description"] = desc
	}
	return rb
}

func upgradeResponse(r any, produces []string) any {
	rm, ok := r.(map[string]any)
	if !ok {
		return r
	}
	if _, ref := rm["$ref"]; ref {
		return rm
	}
	out := map[string]any{"description": cmpOr(toString(rm["description"]), "answer")}
	if s, ok := rm["schema"]; ok {
		types := produces
		if len(types) == 0 {
			types = []string{"application/json"}
		}
		content := map[string]any{}
		for _, t := range types {
			content[t] = map[string]any{"schema": upgradeSchema(s)}
		}
		out["content"] = content
	}
	return out
}

// upgradeSchema maps the 2.0 schema extras: "file" becomes a binary
// string, and x-nullable becomes nullable.
func upgradeSchema(s any) any {
	switch x := s.(type) {
	case map[string]any:
		for k, v := range x {
			x[k] = upgradeSchema(v)
		}
		if x["type"] == "file" {
			x["type"], x["format"] = "string", "binary"
		}
		if n, ok := x["x-nullable"]; ok {
			x["nullable"] = n
		}
		return x
	case []any:
		for i, v := range x {
			x[i] = upgradeSchema(v)
		}
	}
	return s
}

// rewriteRefs points every $ref at the 3.0 location of what it names.
func rewriteRefs(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			for from, to := range map[string]string{
				"#/definitions/": "#/components/schemas/",
				"#/parameters/":  "#/components/parameters/",
				"#/responses/":   "#/components/responses/",
			} {
				if rest, ok := strings.CutPrefix(ref, from); ok {
					x["$ref"] = to + rest
				}
			}
		}
		for _, e := range x {
			rewriteRefs(e)
		}
	case []any:
		for _, e := range x {
			rewriteRefs(e)
		}
	}
}
