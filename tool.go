package agentsmcp

import (
	"context"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolNamePattern is MCP's rule for exposed tool names.
var ToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NamespaceSeparator joins an upstream and a tool name: "everything__echo".
const NamespaceSeparator = "__"

// UpstreamURIScheme begins an exposed upstream resource URI:
// "upstream://everything/test://static/resource/1".
const UpstreamURIScheme = "upstream://"

// ResourceUpstream returns the upstream of an exposed resource URI, if any.
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

// ToolProvider supplies tools to the router: the local ones or an upstream's.
type ToolProvider interface {
	// Name identifies the provider in logs, errors and collision reports.
	Name() string

	// Tools returns the current tools under their client-visible names, each
	// InputSchema a JSON object schema as json.RawMessage.
	Tools(ctx context.Context) ([]*mcp.Tool, error)

	// CallTool runs a tool with validated arguments. A tool failure is a result
	// with IsError; an error is a tool error unless it is a *jsonrpc.Error.
	CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// ToolChangeNotifier is implemented by providers whose tools change: the
// router re-lists on each callback, which must not block.
type ToolChangeNotifier interface {
	OnToolsChanged(func())
}

// ValidationResult answers tools/validate: each violation once, at its JSON
// pointer; Missing names the absent required top-level arguments.
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

// ToolValidator checks arguments against a tool's schema without calling
// it. ENOTFOUND for an unknown tool; EINVALID for an uncompilable schema or
// arguments that are not JSON or hold an oversized number.
type ToolValidator interface {
	ValidateToolArguments(ctx context.Context, tool string, args []byte) (*ValidationResult, error)
}
