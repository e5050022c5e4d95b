package agentsmcp

import (
	"context"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolNamePattern is what every tool name exposed to clients must match. It is
// the MCP naming rule (letters, digits, '_' and '-', at most 64 characters).
var ToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NamespaceSeparator joins an upstream name and a tool name: the remote tool
// "echo" of upstream "everything" is exposed as "everything__echo".
const NamespaceSeparator = "__"

// UpstreamURIScheme begins the URI of every upstream resource and resource
// template the router exposes: the resource "test://static/resource/1" of
// upstream "everything" is exposed as
// "upstream://everything/test://static/resource/1".
const UpstreamURIScheme = "upstream://"

// ResourceUpstream returns the upstream an exposed resource URI or resource
// template belongs to (see [UpstreamURIScheme]), and false for a URI of no
// upstream.
func ResourceUpstream(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, UpstreamURIScheme)
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "/")
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// ToolProvider supplies a set of tools to the router: the local tools of this
// process, or the tools of one upstream MCP server.
//
// The router lists a provider's tools when the provider is added and again
// whenever the provider reports a change, so Tools may be moderately
// expensive; CallTool is on the hot path.
type ToolProvider interface {
	// Name identifies the provider in logs, errors and collision reports.
	Name() string

	// Tools returns the provider's current tools, with their final,
	// client-visible names. InputSchema must be a JSON object schema (as
	// json.RawMessage, which the router passes through byte for byte).
	Tools(ctx context.Context) ([]*mcp.Tool, error)

	// CallTool runs the named tool. req.Params.Arguments is a
	// json.RawMessage that the router has already validated against the
	// tool's input schema.
	//
	// A failure of the tool itself is a result with IsError set; a returned
	// error is reported to the caller as a tool error too, unless it is a
	// *jsonrpc.Error, which is sent as a protocol error.
	CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// ToolChangeNotifier is implemented by providers whose tool set changes at
// run time. The router registers one callback and re-lists the provider's
// tools each time it is called; the callback must not block.
type ToolChangeNotifier interface {
	OnToolsChanged(func())
}

// ValidationResult is the answer of tools/validate: whether the arguments
// satisfy the tool's input schema and, if not, every violation found.
//
// Errors lists each violation once, at its JSON-pointer path in the
// arguments ("" is the arguments object itself). Missing repeats, by name,
// the required top-level arguments that are absent, so a caller can ask a
// user for exactly those.
type ValidationResult struct {
	Tool    string            `json:"tool"`
	Valid   bool              `json:"valid"`
	Errors  []ValidationIssue `json:"errors"`
	Missing []string          `json:"missing"`
}

// ValidationIssue is one schema violation.
type ValidationIssue struct {
	// Path is a JSON pointer (RFC 6901) into the arguments.
	Path string `json:"path"`
	// Keyword is the JSON Schema keyword that failed: required, type, enum, …
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

// ToolValidator checks arguments against a tool's input schema without
// calling the tool. Unknown tools are ENOTFOUND; a tool whose schema cannot be
// compiled, and arguments that are not JSON or hold a number too large for a
// validator (an exponent beyond ±1000, a literal over 4096 bytes), are
// EINVALID.
type ToolValidator interface {
	ValidateToolArguments(ctx context.Context, tool string, args []byte) (*ValidationResult, error)
}
