package mcptools

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

// The discovery prompts: they lead a user to the right tools.
const (
	PromptHelpMeStart = "help-me-start"
	PromptHelpWithAPI = "help-with-api"
	PromptHelpMeLearn = "help-me-learn"
	// PromptArgAPI is the argument of help-with-api: a source of tools,
	// "local" or an upstream name. cmd completes it with
	// [Discovery.CompleteSource].
	PromptArgAPI = "api"
	// PromptArgTopic is the argument of help-me-learn.
	PromptArgTopic = "topic"
)

// The bounds of what one discovery prompt lists.
const (
	discoveryBestTools     = 5  // the tools that work best, in help-me-start and help-with-api
	discoveryToolsPerSrc   = 8  // the tools named per source in help-me-start
	discoveryMinCalls      = 3  // calls before a tool's success rate is quoted as "works best"
	discoveryRecallResults = 5  // learnings, patterns, insights and matching tools in help-me-learn
	discoveryDescRunes     = 90 // a tool's description is clipped to this
)

// Discovery serves the discovery prompts from the live catalog and from
// memory. Each prompt is built when it is asked for, under the caller's
// principal (the router puts it in the context): it names only the tools
// the caller may see, and recalls memory as the memory tools do.
type Discovery struct {
	// Catalog lists the tools the caller may use (the router's catalog).
	Catalog agentsmcp.ToolCatalog
	// Memory recalls learnings, insights and plan patterns.
	Memory agents.Memory
	// Performance has the figures of the tools; nil leaves them out.
	Performance agentsmcp.ToolPerformanceService
}

// Register adds the three prompts to s: an [mcp.Server], or the router's
// server as it hands it out.
func (d *Discovery) Register(s interface {
	AddPrompt(*mcp.Prompt, mcp.PromptHandler)
}) {
	s.AddPrompt(&mcp.Prompt{
		Name: PromptHelpMeStart, Title: "Help me start",
		Description: "What this server can do: its tool sources, the tools that work best, and how to begin.",
	}, d.helpMeStart)
	s.AddPrompt(&mcp.Prompt{
		Name: PromptHelpWithAPI, Title: "Help with an API",
		Description: "The tools of one API or upstream, how well they work, and what memory knows about them.",
		Arguments: []*mcp.PromptArgument{{Name: PromptArgAPI, Title: "API or upstream",
			Description: `A tool source: an upstream name, or "local" for the built-in tools`, Required: true}},
	}, d.helpWithAPI)
	s.AddPrompt(&mcp.Prompt{
		Name: PromptHelpMeLearn, Title: "Help me learn",
		Description: "What past tasks taught about a topic: similar tasks, proven plans, insights, and the tools to use.",
		Arguments:   []*mcp.PromptArgument{{Name: PromptArgTopic, Description: "What you want to do or learn about", Required: true}},
	}, d.helpMeLearn)
}

// CompleteSource proposes the tool sources the caller may see whose name
// begins with prefix, sorted. Its signature is the router's CompletionFunc.
func (d *Discovery) CompleteSource(ctx context.Context, prefix string, _ map[string]string) ([]string, error) {
	bySource, err := d.sources(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range sortedSources(bySource) {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out, nil
}

// sources groups the tools the caller may see by source.
func (d *Discovery) sources(ctx context.Context) (map[string][]*agentsmcp.ToolInfo, error) {
	tools, err := d.Catalog.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]*agentsmcp.ToolInfo{}
	for _, t := range tools {
		out[t.Source] = append(out[t.Source], t)
	}
	return out, nil
}

// sortedSources puts "local" first, then the upstreams by name.
func sortedSources(bySource map[string][]*agentsmcp.ToolInfo) []string {
	names := make([]string, 0, len(bySource))
	for s := range bySource {
		names = append(names, s)
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == "local") != (b == "local") {
			if a == "local" {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	return names
}

func (d *Discovery) helpMeStart(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	bySource, err := d.sources(ctx)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("I am connected to agents-mcp, a gateway that routes tool calls to local tools and upstream MCP servers, and that plans and runs multi-step tasks. Help me get started with it.\n\n")
	total := 0
	for _, tools := range bySource {
		total += len(tools)
	}
	fmt.Fprintf(&sb, "## Tool sources (%d tools)\n", total)
	for _, src := range sortedSources(bySource) {
		tools := bySource[src]
		fmt.Fprintf(&sb, "- %s (%d tools, %s):", src, len(tools), cmp.Or(tools[0].Health, agentsmcp.HealthReady))
		for i, t := range tools {
			if i == discoveryToolsPerSrc {
				fmt.Fprintf(&sb, " … and %d more", len(tools)-i)
				break
			}
			sb.WriteString(" " + t.Name)
		}
		sb.WriteByte('\n')
	}
	if best := d.bestTools(ctx, visibleNames(bySource, "")); len(best) > 0 {
		sb.WriteString("\n## Tools that work best (from recorded calls)\n")
		sb.WriteString(best)
	}
	sb.WriteString("\n## How to begin\n")
	for _, hint := range []struct{ tool, text string }{
		{"search_tools", "search_tools finds a tool by what it does."},
		{"run_task", "run_task thinks, plans and executes a request in one call; destructive steps wait for a confirmation."},
		{"query_memory", "query_memory recalls past tasks, insights and plans."},
	} {
		if hasTool(bySource, hint.tool) {
			sb.WriteString("- " + hint.text + "\n")
		}
	}
	fmt.Fprintf(&sb, "- The prompts %s (argument %q: one of the sources above) and %s (argument %q) go deeper.\n",
		PromptHelpWithAPI, PromptArgAPI, PromptHelpMeLearn, PromptArgTopic)
	sb.WriteString("\nSuggest two or three first things I could do with these tools.")
	return promptResult("How to start with agents-mcp", sb.String()), nil
}

func (d *Discovery) helpWithAPI(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	api := strings.TrimSpace(promptArg(req, PromptArgAPI))
	bySource, err := d.sources(ctx)
	if err != nil {
		return nil, err
	}
	tools, ok := bySource[api]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("unknown API %q; the sources are: %s", api, strings.Join(sortedSources(bySource), ", "))}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Help me use the %q tools of agents-mcp (%d tools, %s).\n\n## Tools\n", api, len(tools), cmp.Or(tools[0].Health, agentsmcp.HealthReady))
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
		fmt.Fprintf(&sb, "- %s%s: %s\n", t.Name, toolHints(t), clipRunes(t.Description, discoveryDescRunes))
	}
	if best := d.bestTools(ctx, names); best != "" {
		sb.WriteString("\n## How well they work (from recorded calls)\n")
		sb.WriteString(best)
	}
	if insights, err := d.Memory.RelevantInsights(ctx, api, names, discoveryRecallResults); err == nil && len(insights) > 0 {
		sb.WriteString("\n## What memory knows about them\n")
		for _, in := range insights {
			fmt.Fprintf(&sb, "- (%s) %s\n", in.Type, clipRunes(in.Text, 200))
		}
	}
	sb.WriteString("\nExplain what I can do with these tools and which to call first; tools/validate checks arguments without calling a tool.")
	return promptResult(fmt.Sprintf("How to use %s", api), sb.String()), nil
}

func (d *Discovery) helpMeLearn(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	topic := strings.TrimSpace(promptArg(req, PromptArgTopic))
	if topic == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: argument %q is required", PromptHelpMeLearn, PromptArgTopic)}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Teach me how to %s with agents-mcp, from what its past tasks learned.\n", topic)
	if matches, err := d.Catalog.SearchTools(ctx, topic, discoveryRecallResults); err == nil && len(matches) > 0 {
		sb.WriteString("\n## Tools for it\n")
		for _, m := range matches {
			fmt.Fprintf(&sb, "- %s (%s)%s: %s\n", m.Name, m.Source, toolHints(&m.ToolInfo), clipRunes(m.Description, discoveryDescRunes))
		}
	}
	if learnings, err := d.Memory.SimilarLearnings(ctx, topic, discoveryRecallResults); err == nil && len(learnings) > 0 {
		sb.WriteString("\n## Similar past tasks\n")
		for _, l := range learnings {
			fmt.Fprintf(&sb, "- %q: %s with %s", clipRunes(l.Query, 120), l.Outcome, strings.Join(l.Steps, " → "))
			if len(l.Errors) > 0 {
				fmt.Fprintf(&sb, " (error: %s)", clipRunes(l.Errors[0], 120))
			}
			sb.WriteByte('\n')
		}
	}
	if patterns, err := d.Memory.SuccessfulPatterns(ctx, topic, discoveryRecallResults); err == nil && len(patterns) > 0 {
		sb.WriteString("\n## Proven plans\n")
		for _, p := range patterns {
			fmt.Fprintf(&sb, "- %s: %s (%d of %d uses succeeded)\n", clipRunes(p.Goal, 120), strings.Join(p.Steps, " → "), p.Successes, p.Uses)
		}
	}
	if insights, err := d.Memory.RelevantInsights(ctx, topic, nil, discoveryRecallResults); err == nil && len(insights) > 0 {
		sb.WriteString("\n## Insights\n")
		for _, in := range insights {
			fmt.Fprintf(&sb, "- (%s) %s\n", in.Type, clipRunes(in.Text, 200))
		}
	}
	sb.WriteString("\nFrom this, explain the approach that works, the pitfalls, and the first call to make (run_task can do it all in one call).")
	return promptResult(fmt.Sprintf("What agents-mcp learned about %s", topic), sb.String()), nil
}

// bestTools lists, of the tools named, those with at least
// discoveryMinCalls recorded calls, by success rate then calls, one line
// each; "" when none qualifies. names nil means every tool.
func (d *Discovery) bestTools(ctx context.Context, names []string) string {
	if d.Performance == nil {
		return ""
	}
	perf, err := d.Performance.ListToolPerformance(ctx)
	if err != nil {
		return ""
	}
	perf = slices.DeleteFunc(slices.Clone(perf), func(p *agentsmcp.ToolPerformance) bool {
		return p.Calls < discoveryMinCalls || !slices.Contains(names, p.Tool)
	})
	slices.SortStableFunc(perf, func(a, b *agentsmcp.ToolPerformance) int {
		return cmp.Or(cmp.Compare(toolperf.SuccessRate(b), toolperf.SuccessRate(a)), cmp.Compare(b.Calls, a.Calls))
	})
	var sb strings.Builder
	for i, p := range perf {
		if i == discoveryBestTools {
			break
		}
		fmt.Fprintf(&sb, "- %s: %.0f%% of %d calls succeeded, p50 %s\n", p.Tool, 100*toolperf.SuccessRate(p), p.Calls, toolperf.Percentile(p, 0.5))
	}
	return sb.String()
}

// visibleNames lists the names of every tool of bySource (of one source
// when source is not empty).
func visibleNames(bySource map[string][]*agentsmcp.ToolInfo, source string) []string {
	var out []string
	for src, tools := range bySource {
		if source != "" && src != source {
			continue
		}
		for _, t := range tools {
			out = append(out, t.Name)
		}
	}
	return out
}

func hasTool(bySource map[string][]*agentsmcp.ToolInfo, name string) bool {
	return slices.Contains(visibleNames(bySource, ""), name)
}

// toolHints names the annotations a user must know before calling.
func toolHints(t *agentsmcp.ToolInfo) string {
	switch {
	case t.Destructive:
		return " [destructive: asks for a confirmation in tasks]"
	case t.ReadOnly:
		return " [read-only]"
	}
	return ""
}

func promptArg(req *mcp.GetPromptRequest, name string) string {
	if req == nil || req.Params == nil {
		return ""
	}
	return req.Params.Arguments[name]
}

func clipRunes(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// promptResult is one user message: the prompts hand the model what it
// needs to answer, and the model writes the guide.
func promptResult(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{
		Description: description,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}
}
