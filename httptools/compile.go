package httptools

import (
	"bytes"
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// compileSchema compiles a schema the way the router compiles tool input
// schemas (draft 2020-12 by default, nothing loaded from outside), so that
// a schema the router could not use is found when the source loads, not on
// every call.
func compileSchema(raw json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	// The router refuses such a schema too (its numbers would cost the
	// validator seconds).
	if err := jsonnum.CheckValue(doc); err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem://agents-mcp/http-tool.json"
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	_, err = c.Compile(url)
	return err
}
