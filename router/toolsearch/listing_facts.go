package toolsearch

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/virtual"
)

// metaHTTPOperation is the _meta key under which an HTTP tool (httptools)
// lists its operation: {"method": "POST", "path": "/chat.update"}. It is
// read here by name, as a client would: the search does not import the
// HTTP tools.
const metaHTTPOperation = "agents-mcp/httpOperation"

// listingFacts are what a tool's listing says of it besides its name,
// title, description and input schema, each a field of its own for BM25:
// generated catalogs (OpenAPI operations) often have terse names and no
// description, while their summary, path, tags and method say what the
// tool does.
type listingFacts struct {
	summary string   // the annotations' title, when the tool has no title
	path    string   // an HTTP tool's request path
	method  string   // an HTTP tool's method
	tags    []string // _meta tags
}

// listingFactsOf reads a listed tool's facts.
func listingFactsOf(t *mcp.Tool) listingFacts {
	var f listingFacts
	if t.Title == "" && t.Annotations != nil {
		f.summary = t.Annotations.Title
	}
	if op, ok := t.Meta[metaHTTPOperation].(map[string]any); ok {
		f.method, _ = op["method"].(string)
		f.path, _ = op["path"].(string)
	}
	f.tags = virtual.ToolTags(t)
	return f
}

// methodVerbs are the plain verbs a user says for what an HTTP method
// does: a need says "list the cards" or "remove the label", an API's
// operation says GET or DELETE.
var methodVerbs = map[string]string{
	"GET":    "get list show",
	"POST":   "create add send",
	"PUT":    "update change edit",
	"PATCH":  "update change edit",
	"DELETE": "delete remove",
}

// pathWords are the words of a request path: its fixed segments and its
// parameters' names ("/cards/{idCard}/stickers" → "cards id card
// stickers"); identifiers are split later by tokenize.
func pathWords(path string) string {
	return strings.NewReplacer("/", " ", "{", " ", "}", " ", ".", " ", "-", " ", "_", " ").Replace(path)
}
