package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// FindToolName is the discovery meta-tool that finds tools by what they
// do and returns them ready to call: with their input schemas.
const FindToolName = "find_tools"

// The bounds of find_tools' paging.
const (
	DefaultFindLimit = 5
	MaxFindLimit     = 20
	MaxFindOffset    = 1000
)

// findToolsSchema is written by hand so that it carries the bounds.
const findToolsSchema = `{"type":"object","properties":{` +
	`"need":{"type":"string","minLength":1,"maxLength":1000,"description":"What you need done, in plain words"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"Most tools to return (default 5)"},` +
	`"offset":{"type":"integer","minimum":0,"maximum":1000,"description":"Tools to skip: the nextOffset of the previous page"},` +
	`"source":{"type":"string","maxLength":128,"description":"Only tools of this source: an upstream's name, an HTTP tool source's, or local"}},` +
	`"required":["need"],"additionalProperties":false}`

// FindArgs are the arguments of find_tools.
type FindArgs struct {
	Need   string `json:"need"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
	Source string `json:"source,omitempty"`
}

// FindResult is the structured result of find_tools.
type FindResult struct {
	Tools []FoundTool `json:"tools"`
	// NextOffset, when set, is the offset of the next page: more tools
	// matched.
	NextOffset *int `json:"nextOffset,omitempty"`
	// Mode and Note are the ranking's (see [Result]).
	Mode string `json:"mode"`
	Note string `json:"note,omitempty"`
}

// FoundTool is one tool find_tools returns: enough to call it next.
type FoundTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Source      string          `json:"source"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Score       float64         `json:"score"`
	Why         string          `json:"why,omitempty"`
	// Reliability is what the ranking knew of the tool's outcomes, when
	// it weighs them (see [Learned]).
	Reliability *ToolReliability `json:"reliability,omitempty"`
}

// Finder is find_tools: it ranks Registry's tools with Ranker (an
// [Index], or a ranker wrapping one such as [Learned]) for a need.
type Finder struct {
	Registry Registry
	Ranker   Ranker
	// Skip names tools never returned besides find_tools itself (the call
	// tool).
	Skip []string
	// Found, if set, is told which tools a caller was shown for a need
	// ([Outcomes.Found]), so that its next calls of them teach the ranking.
	Found func(ctx context.Context, need string, tools []string)
}

// AddFindTools registers find_tools on l. A caller sees only the tools its
// allowlist admits, ranked among everything and dropped before paging (so
// a hidden tool is neither shown nor counted). The caller keeps owning the
// ranker.
func AddFindTools(l *localtools.Provider, f *Finder) error {
	return localtools.Add(l, &mcp.Tool{
		Name:  FindToolName,
		Title: "Find tools",
		Description: "Find the tools for a need, in plain words. Returns the best tools with their input schemas (call them " +
			"directly or with call_tool), their source, why they matched and how reliable they have been. Pages with offset; " +
			"source narrows to one upstream.",
		InputSchema: json.RawMessage(findToolsSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, args FindArgs) (*mcp.CallToolResult, *FindResult, error) {
		res := f.Find(ctx, args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.text(args.Need)}}}, res, nil
	})
}

// Find is find_tools without the MCP, for the caller in ctx.
func (f *Finder) Find(ctx context.Context, args FindArgs) *FindResult {
	limit := args.Limit
	if limit <= 0 {
		limit = DefaultFindLimit
	}
	limit = min(limit, MaxFindLimit)
	offset := min(max(args.Offset, 0), MaxFindOffset)
	p := agentsmcp.PrincipalFrom(ctx)
	source := strings.TrimSpace(args.Source)
	// Ranked: the page, the one after it (to know there is one) and the
	// tools never returned; everything when some of the ranking may be
	// dropped (a restricted caller, a source filter), so that a hidden
	// tool is neither shown nor counted.
	want := offset + limit + 1 + 1 + len(f.Skip)
	view := viewOf(ctx)
	if p.Restricted() || source != "" || view != nil {
		want = math.MaxInt32
	}
	ranked := f.Ranker.Search(ctx, args.Need, "all", want)
	matches := slices.DeleteFunc(ranked.Tools, func(m Match) bool {
		return !p.MayUseTool(m.Name) || m.Name == FindToolName || slices.Contains(f.Skip, m.Name) ||
			source != "" && m.Source != source || !view.Shows(m.Name)
	})
	out := &FindResult{Tools: []FoundTool{}, Mode: ranked.Mode, Note: ranked.Note}
	page := matches[min(offset, len(matches)):min(offset+limit, len(matches))]
	names := make([]string, 0, len(page))
	for _, m := range page {
		real := m.Name
		m = exposed(view, m)
		t := FoundTool{Name: m.Name, Description: m.Description, Source: m.Source, Score: m.Score, Why: m.Why, Reliability: m.Reliability}
		if rt, ok := f.Registry.RegisteredTool(real); ok {
			t.Title, t.InputSchema = rt.Tool.Title, rt.InputSchema
		}
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		out.Tools = append(out.Tools, t)
		names = append(names, real)
	}
	if next := offset + len(page); next < len(matches) && len(page) > 0 {
		out.NextOffset = &next
	}
	if f.Found != nil {
		f.Found(ctx, args.Need, names)
	}
	return out
}

// text is the result for a model that reads only text content.
func (r *FindResult) text(need string) string {
	var sb strings.Builder
	if len(r.Tools) == 0 {
		fmt.Fprintf(&sb, "No tool matches %q.\n", need)
	}
	for i, t := range r.Tools {
		fmt.Fprintf(&sb, "%d. %s (%s): %s\n   why: %s\n   inputSchema: %s\n", i+1, t.Name, t.Source, t.Description, t.Why, t.InputSchema)
	}
	if r.NextOffset != nil {
		fmt.Fprintf(&sb, "More tools match: ask again with offset %d. ", *r.NextOffset)
	}
	sb.WriteString("Call one directly or with call_tool {\"name\": …, \"arguments\": {…}}.\n")
	return sb.String()
}
