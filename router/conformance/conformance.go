// Package conformance registers the fixture tools, resources and prompts that
// the official MCP conformance suite (@modelcontextprotocol/conformance)
// expects, on the real server assembly. It is enabled by the hidden flag
// `serve --conformance-fixtures` and is never on by default.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

const watchedResourceURI = "test://watched-resource"

// Register adds the fixtures to r (tools through the local provider l). The
// watched resource announces an update every 3 seconds until ctx ends.
func Register(ctx context.Context, r *router.Router, l *localtools.Provider) error {
	if err := registerTools(l); err != nil {
		return err
	}
	s := r.Server()
	if err := register2026Tools(l, s); err != nil {
		return err
	}
	if err := registerTaskTools(r, l); err != nil {
		return err
	}
	registerResources(s)
	registerPrompts(s)
	s.AddPrompt(&mcp.Prompt{
		Name:        "test_input_required_result_prompt",
		Description: "MRTR (SEP-2322): asks for context via an in-band elicitation request",
	}, testInputRequiredPromptHandler)
	go watchedResourceUpdater(ctx, s)
	return nil
}

func registerTools(l *localtools.Provider) error {
	type simple struct {
		name, desc string
		h          mcp.ToolHandlerFor[any, any]
	}
	for _, t := range []simple{
		{"test_simple_text", "Tests simple text content response", testSimpleTextHandler},
		{"test_image_content", "Tests image content response", testImageContentHandler},
		{"test_audio_content", "Tests audio content response", testAudioContentHandler},
		{"test_embedded_resource", "Tests embedded resource content response", testEmbeddedResourceHandler},
		{"test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", testMultipleContentTypesHandler},
		{"test_tool_with_logging", "Tests tool that emits log messages during execution", testToolWithLoggingHandler},
		{"test_tool_with_progress", "Tests tool that reports progress notifications", testToolWithProgressHandler},
		{"test_error_handling", "Tests error response handling", testErrorHandlingHandler},
		{"test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", testElicitationDefaultsHandler},
		{"test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", testElicitationEnumsHandler},
		{"test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.", testReconnectionHandler},
	} {
		if err := localtools.Add(l, &mcp.Tool{Name: t.name, Description: t.desc}, t.h); err != nil {
			return err
		}
	}
	errs := []error{
		localtools.Add(l, &mcp.Tool{Name: "test_sampling", Description: "Tests server-initiated sampling (LLM completion request)"}, testSamplingHandler),
		localtools.Add(l, &mcp.Tool{Name: "test_elicitation", Description: "Tests server-initiated elicitation (user input request)"}, testElicitationHandler),
		localtools.Add(l, &mcp.Tool{
			Name:        "json_schema_2020_12_tool",
			Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)",
			InputSchema: json.RawMessage(jsonSchema202012),
		}, jsonSchema202012Handler),
	}
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("conformance fixtures: %w", err)
		}
	}
	return nil
}

// register2026Tools adds the tools that conformance 0.2 calls for MCP
// 2026-07-28, as go-sdk v1.8.0's everything-server registers them.
func register2026Tools(l *localtools.Provider, s router.Server) error {
	type tool struct {
		name, desc string
		h          mcp.ToolHandlerFor[any, any]
	}
	for _, t := range []tool{
		// SEP-2575 diagnostic tools of the server-stateless scenario.
		{"test_missing_capability", "Requires the sampling client capability; used to verify MissingRequiredClientCapabilityError (-32021) (SEP-2575)", testMissingCapabilityHandler},
		{"test_streaming_elicitation", "Streams progress notifications while a call is in flight; used to verify response streams carry only notifications, never independent JSON-RPC requests (SEP-2575)", testStreamingElicitationHandler},
		{"test_logging_tool", "Attempts to emit a log message; the framework must drop it when the client did not set _meta.../logLevel (SEP-2575)", testLoggingToolHandler},
		{"test_trigger_tool_change", "Mutates the tool list to trigger a notifications/tools/list_changed on active subscription streams (SEP-2575)", makeTriggerToolChangeHandler(l)},
		{"test_trigger_prompt_change", "Mutates the prompt list to trigger a notifications/prompts/list_changed on active subscription streams (SEP-2575)", makeTriggerPromptChangeHandler(s)},
		// SEP-2322 multi round-trip requests (input_required).
		{"test_input_required_result_elicitation", "MRTR (SEP-2322): asks for the caller name via an in-band elicitation request", testInputRequiredElicitationHandler},
		{"test_input_required_result_sampling", "MRTR (SEP-2322): asks for an LLM completion via an in-band sampling request", testInputRequiredSamplingHandler},
		{"test_input_required_result_list_roots", "MRTR (SEP-2322): asks for the client roots via an in-band roots/list request", testInputRequiredListRootsHandler},
		{"test_input_required_result_request_state", "MRTR (SEP-2322): round-trips integrity-protected requestState alongside an elicitation request", testInputRequiredRequestStateHandler},
		{"test_input_required_result_multiple_inputs", "MRTR (SEP-2322): asks for elicitation, sampling and roots input in a single round", testInputRequiredMultipleInputsHandler},
		{"test_input_required_result_multi_round", "MRTR (SEP-2322): two elicitation rounds with evolving requestState before completing", testInputRequiredMultiRoundHandler},
		{"test_input_required_result_tampered_state", "MRTR (SEP-2322): rejects retries whose requestState fails integrity verification", testInputRequiredTamperedStateHandler},
		{"test_input_required_result_capabilities", "MRTR (SEP-2322): only requests input kinds the declared client capabilities cover", testInputRequiredCapabilitiesHandler},
	} {
		if err := localtools.Add(l, &mcp.Tool{Name: t.name, Description: t.desc}, t.h); err != nil {
			return fmt.Errorf("conformance fixtures: %w", err)
		}
	}
	// SEP-2243: a tool whose argument is mirrored into an Mcp-Param header,
	// for the http-custom-header-server-validation scenario.
	err := localtools.Add(l, &mcp.Tool{
		Name:        "test_x_mcp_header",
		Description: "Tests SEP-2243 Mcp-Param-* server-side validation",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"region": { "type": "string", "description": "mirrored into Mcp-Param-Region", "x-mcp-header": "Region" },
				"level": { "type": "integer", "description": "non-mirrored argument" }
			}
		}`),
	}, testXMcpHeaderHandler)
	if err != nil {
		return fmt.Errorf("conformance fixtures: %w", err)
	}
	return nil
}

// jsonSchema202012 must survive tools/list verbatim (SEP-1613, SEP-2106).
const jsonSchema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {
				"street": { "type": "string" },
				"city": { "type": "string" }
			}
		}
	},
	"properties": {
		"name": { "type": "string" },
		"address": { "$ref": "#/$defs/address" },
		"contactMethod": { "type": "string", "enum": ["phone", "email"] },
		"phone": { "type": "string" },
		"email": { "type": "string" }
	},
	"allOf": [
		{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }
	],
	"if": {
		"properties": { "contactMethod": { "const": "phone" } },
		"required": ["contactMethod"]
	},
	"then": { "required": ["phone"] },
	"else": { "required": ["email"] },
	"additionalProperties": false
}`

func registerResources(s router.Server) {
	s.AddResource(&mcp.Resource{Name: "static-text", Description: "A static text resource for testing", MIMEType: "text/plain", URI: "test://static-text"}, staticTextHandler)
	s.AddResource(&mcp.Resource{Name: "static-binary", Description: "A static binary resource (image) for testing", MIMEType: "image/png", URI: "test://static-binary"}, staticBinaryHandler)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", Description: "A resource template with parameter substitution", MIMEType: "application/json", URITemplate: "test://template/{id}/data"}, templateResourceHandler)
	s.AddResource(&mcp.Resource{Name: "watched-resource", Description: "A resource that auto-updates every 3 seconds", MIMEType: "text/plain", URI: watchedResourceURI}, watchedResourceHandler)
}

func registerPrompts(s router.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"}, simplePromptHandler)
	s.AddPrompt(&mcp.Prompt{
		Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, promptWithArgumentsHandler)
	s.AddPrompt(&mcp.Prompt{
		Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, promptWithEmbeddedResourceHandler)
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"}, promptWithImageHandler)
}

func watchedResourceUpdater(ctx context.Context, s router.Server) {
	ticker := time.NewTicker(3 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: watchedResourceURI})
		}
	}
}
