package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// schemaURL is the base URL under which a tool's input schema is compiled.
// It never leaves the process.
const schemaURL = "mem://agents-mcp/tool-input.json"

var messagePrinter = message.NewPrinter(language.English)

// compiledSchema compiles a tool's input schema once, on first use, and keeps
// the result for the lifetime of that tool registration. A changed tool gets a
// new registration, which is how the cache is invalidated.
type compiledSchema struct {
	raw  json.RawMessage
	once sync.Once
	sch  *jsonschema.Schema
	// fast proves most valid arguments valid without the library (nil
	// when the schema is outside its subset); see [fastSchema].
	fast *fastSchema
	err  error
}

func newCompiledSchema(raw json.RawMessage) *compiledSchema {
	return &compiledSchema{raw: raw}
}

func (c *compiledSchema) get() (*jsonschema.Schema, error) {
	c.once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.raw))
		if err != nil {
			c.err = fmt.Errorf("parse input schema: %w", err)
			return
		}
		// The compiler converts the schema's numbers as the validator
		// converts the arguments' (see decodeArguments): one beyond
		// the bounds costs up to 0.1 s here and more on every call
		// (a multipleOf of 1e-999999 divides each number by it).
		if err := jsonnum.CheckValue(doc); err != nil {
			c.err = fmt.Errorf("input schema: %w", err)
			return
		}
		comp := jsonschema.NewCompiler()
		// Load nothing from outside: the default loader reads file: URLs, and
		// a schema from an upstream must not make us read local files or
		// fetch URLs. Only the schema's own content and the built-in draft
		// meta-schemas are available to $ref.
		comp.UseLoader(jsonschema.SchemeURLLoader{})
		// Most MCP tools omit $schema; MCP specifies 2020-12 as the default
		// dialect. Schemas that name draft 4, 6, 7 or 2019-09 keep theirs.
		comp.DefaultDraft(jsonschema.Draft2020)
		if err := comp.AddResource(schemaURL, doc); err != nil {
			c.err = fmt.Errorf("load input schema: %w", err)
			return
		}
		if c.sch, c.err = comp.Compile(schemaURL); c.err == nil {
			c.fast = newFastSchema(doc)
		}
	})
	return c.sch, c.err
}

// validate checks args (a JSON object, or empty for "no arguments") and
// reports every violation. It returns an error only when args cannot be
// validated: EINVALID when args is not JSON or holds a number beyond
// [jsonnum]'s bounds (whatever the schema, so that such a number is
// refused on every path, even to a tool whose schema is unusable), a
// [*panicError] when the validator panicked, and any other error when the
// schema itself is unusable.
func (c *compiledSchema) validate(args json.RawMessage) (issues []agentsmcp.ValidationIssue, missing []string, err error) {
	// The library has panicked on input before: whatever it
	// does, compiling or validating, the call gets an internal error, not
	// the process.
	defer func() {
		if v := recover(); v != nil {
			issues, missing, err = nil, nil, recovered(v)
		}
	}()
	var inst any = map[string]any{}
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if inst, err = decodeArguments(trimmed); err != nil {
			var nerr *jsonnum.Error
			if errors.As(err, &nerr) {
				return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "invalid arguments: %v", nerr)
			}
			return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "arguments are not valid JSON: %v", err)
		}
	}
	sch, err := c.get()
	if err != nil {
		return nil, nil, err
	}
	if c.fast != nil && c.fast.valid(inst) {
		return nil, nil, nil
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil, nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return nil, nil, verr
	}
	issues, missing = flattenValidationError(ve)
	return issues, missing, nil
}

// flattenValidationError turns the validator's error tree into one issue per
// leaf, because the inner nodes ("allOf failed", "validation failed") only
// repeat what their leaves say.
func flattenValidationError(root *jsonschema.ValidationError) ([]agentsmcp.ValidationIssue, []string) {
	issues := []agentsmcp.ValidationIssue{}
	missing := []string{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		path := jsonPointer(e.InstanceLocation)
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			for _, name := range req.Missing {
				issues = append(issues, agentsmcp.ValidationIssue{
					Path:    path + "/" + escapePointerToken(name),
					Keyword: "required",
					Message: fmt.Sprintf("missing required property %q", name),
				})
				if len(e.InstanceLocation) == 0 && !slices.Contains(missing, name) {
					missing = append(missing, name)
				}
			}
			return
		}
		issues = append(issues, agentsmcp.ValidationIssue{
			Path:    path,
			Keyword: keywordOf(e.ErrorKind),
			Message: e.ErrorKind.LocalizedString(messagePrinter),
		})
	}
	walk(root)
	return issues, missing
}

func keywordOf(k jsonschema.ErrorKind) string {
	if p := k.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	switch k.(type) {
	case *kind.FalseSchema:
		return "false"
	case *kind.Reference:
		return "$ref"
	}
	return "schema"
}

func jsonPointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escapePointerToken(t))
	}
	return sb.String()
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escapePointerToken(t string) string { return pointerEscaper.Replace(t) }

// summarizeIssues renders issues as one line for a tool error result, which
// a model reads to correct its call.
func summarizeIssues(tool string, issues []agentsmcp.ValidationIssue) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "invalid arguments for tool %q:", tool)
	for i, is := range issues {
		if i > 0 {
			sb.WriteByte(';')
		}
		path := is.Path
		if path == "" {
			path = "(arguments)"
		}
		fmt.Fprintf(&sb, " %s: %s", path, is.Message)
	}
	return sb.String()
}
