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

// ToolName is the local tool that searches the whole tool catalog.
const ToolName = "search_tools"

// searchToolsSchema is written by hand (not inferred) so that it carries the
// bounds and the enum a client needs to call it right.
const searchToolsSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"What the tool should do, in plain words"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"Most results to return (default 10)"},` +
	`"scope":{"type":"string","enum":["all","local","remote"],"description":"Which tools to search (default all)"}},` +
	`"required":["query"],"additionalProperties":false}`

// Args are the arguments of search_tools.
type Args struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
	Scope string `json:"scope,omitempty"`
}

// The ranking modes of a [Result].
const (
	// ModeLexical ranks by words only (BM25 with synonyms).
	ModeLexical = "lexical"
	// ModeHybrid fuses the lexical score with the embedding similarity
	// of the query and each tool.
	ModeHybrid = "hybrid"
)

// Result is the structured result of search_tools, and what a [Ranker]
// answers.
type Result struct {
	Tools []Match `json:"tools"`
	// Mode is [ModeHybrid] or [ModeLexical].
	Mode string `json:"mode"`
	// Note says why a search with an embedder fell back to lexical ranking
	// (tool embeddings not ready yet, query embedding failed or timed out).
	Note string `json:"note,omitempty"`

	// explain, when the Whys were left out ([Index] searched for a
	// [Learned] ranking), explains one of Tools by name.
	explain func(name string) string
}

// Match is one ranked tool.
type Match struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Description string `json:"description,omitempty"`
	// Score orders the matches: the fused score in [0, 1] in hybrid mode,
	// the weighted BM25 score in lexical mode. Only its order is meaningful.
	Score float64 `json:"score"`
	// Why explains the match in a line: the query words that matched, by
	// field ("name: create, issue; description: ticket→issue"), and in hybrid
	// mode the vector similarity.
	Why string `json:"why,omitempty"`
	// Reliability is what a ranker that weighs outcomes ([Learned]) knew
	// of the tool; nil from an [Index] alone.
	Reliability *ToolReliability `json:"reliability,omitempty"`
}

// AddSearchTools registers search_tools on l, ranking with ranker (an
// [Index], or a ranker that wraps one). The tool shows a caller only the
// tools its allowlist admits (agentsmcp.Principal.MayUseTool): for a
// restricted caller everything is ranked and the hidden tools are dropped
// before the limit is applied, so a hidden tool is neither shown nor
// counted. The caller keeps owning the ranker (and closes an Index when
// done).
func AddSearchTools(l *localtools.Provider, ranker Ranker) error {
	return localtools.Add(l, &mcp.Tool{
		Name:        ToolName,
		Title:       "Search tools",
		Description: "Search every local and remote tool by what it does. Returns the best matching tools with their source, a relevance score and why they matched.",
		InputSchema: json.RawMessage(searchToolsSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, args Args) (*mcp.CallToolResult, *Result, error) {
		limit := args.Limit
		if limit == 0 {
			limit = 10
		}
		var res *Result
		if p, view := agentsmcp.PrincipalFrom(ctx), viewOf(ctx); p.Restricted() || view != nil {
			// Rank everything, then keep what the caller may use and
			// the view shows: a hidden tool is neither shown nor counted.
			res = ranker.Search(ctx, args.Query, args.Scope, math.MaxInt32)
			res.Tools = slices.DeleteFunc(res.Tools, func(m Match) bool { return !p.MayUseTool(m.Name) || !view.Shows(m.Name) })
			res.Tools = res.Tools[:min(len(res.Tools), limit)]
			for i := range res.Tools {
				res.Tools[i] = exposed(view, res.Tools[i])
			}
		} else {
			res = ranker.Search(ctx, args.Query, args.Scope, limit)
		}
		var sb strings.Builder
		if len(res.Tools) == 0 {
			fmt.Fprintf(&sb, "No tool matches %q.\n", args.Query)
		}
		for i, m := range res.Tools {
			fmt.Fprintf(&sb, "%d. %s (%s, score %.3f): %s\n   why: %s\n", i+1, m.Name, m.Source, m.Score, m.Description, m.Why)
		}
		fmt.Fprintf(&sb, "Ranking: %s", res.Mode)
		if res.Note != "" {
			fmt.Fprintf(&sb, " (%s)", res.Note)
		}
		sb.WriteByte('\n')
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sb.String()}}}, res, nil
	})
}

// SearchLexical ranks reg's tools against query lexically (BM25 over
// server, name, description and parameters, with synonyms), as search_tools
// does without an embedder. scope is "all" (or ""), "local" or "remote". It
// indexes the catalog on every call; an [Index] keeps its index between
// calls. Like a [Ranker], it does not apply the caller's allowlist.
func SearchLexical(reg Registry, query, scope string, limit int) []Match {
	_, entries := reg.ToolSnapshot()
	docs := make([]searchDoc, len(entries))
	for i, e := range entries {
		docs[i] = docOf(e)
	}
	return rankMatches(newLexicalIndex(docs), parseQuery(query, defaultRankParams.synonymWeight), defaultRankParams, scope, limit, nil, nil, nil)
}

// docOf tokenises a registered tool.
func docOf(t *agentsmcp.RegisteredTool) searchDoc {
	d := newSearchDoc(t.Tool.Name, t.Tool.Title, t.Tool.Description, t.Source, t.InputSchema)
	d.action = toolAction(t)
	return d
}

// inScope reports whether a tool from source belongs to scope.
func inScope(scope, source string) bool {
	local := source == localtools.ProviderName
	return (scope != "local" || local) && (scope != "remote" || !local)
}

// rankMatches ranks ix for the query terms with p within scope and returns
// the best limit matches, each with its Why; with queryVec and docVecs
// (aligned with ix.docs) it ranks hybrid, and with align also re-ranks the
// best p.alignCandidates by their word alignment with the query (see
// [rankParams.alignWeight]).
func rankMatches(ix *lexicalIndex, terms []queryTerm, p rankParams, scope string, limit int, queryVec []float32, docVecs [][]float32, align aligner) []Match {
	out, explain := rankUnexplained(ix, terms, p, scope, limit, queryVec, docVecs, align)
	for i := range out {
		out[i].Why = explain(out[i].Name)
	}
	return out
}

// rankUnexplained is [rankMatches] without the Whys, and a function that
// explains any of the matches returned by name: a caller that re-orders
// more candidates than it shows (a [Learned] ranking) explains only the
// page it returns.
func rankUnexplained(ix *lexicalIndex, terms []queryTerm, p rankParams, scope string, limit int, queryVec []float32, docVecs [][]float32, align aligner) ([]Match, func(name string) string) {
	out := []Match{}
	if limit <= 0 || (len(terms) == 0 && queryVec == nil) {
		return out, func(string) string { return "" }
	}
	hybrid := queryVec != nil && docVecs != nil
	var rs []ranked
	for _, r := range ix.rank(terms, p, queryVec, docVecs) {
		if inScope(scope, r.doc.match.Source) {
			rs = append(rs, r)
		}
	}
	aligned := false
	if top := rs[:min(p.alignCandidates, len(rs))]; hybrid && align != nil {
		w := p.alignWeight
		if slices.ContainsFunc(top, func(r ranked) bool { return r.lexical > 0 }) {
			w = p.alignWeightLexical
		}
		aligned = w > 0 && realign(top, w, align)
	}
	if top := rs[:min(p.shapeCandidates, len(rs))]; len(top) > 0 {
		reshape(top, requestAction(queryTokens(terms)), p.shapeWeight, p.shapeSameSource)
	}
	rs = rs[:min(limit, len(rs))]
	for _, r := range rs {
		m := r.doc.match
		m.Score = roundScore(r.score)
		out = append(out, m)
	}
	explain := func(name string) string {
		i := slices.IndexFunc(rs, func(r ranked) bool { return r.doc.match.Name == name })
		if i < 0 {
			return ""
		}
		r := rs[i]
		// The hits are counted again for the tools explained only.
		_, r.hits = ix.scoreDoc(r.doc, terms, ix.idfs(terms), p)
		return r.why(hybrid, aligned)
	}
	return out, explain
}

// aligner scores texts by their word alignment with a query, in [0, 1]
// (an [agentsmcp.AligningEmbedder]'s Align, for one query).
type aligner func(texts []string) ([]float64, error)

// realign adds weight × the word alignment of each candidate with the query
// to its score and sorts them again (ties by name); false, leaving rs as it
// was, if align fails.
func realign(rs []ranked, weight float64, align aligner) bool {
	texts := make([]string, len(rs))
	for i, r := range rs {
		texts[i] = r.doc.embedText
	}
	scores, err := align(texts)
	if err != nil || len(scores) != len(rs) {
		return false
	}
	for i := range rs {
		rs[i].alignment = scores[i]
		rs[i].score += weight * scores[i]
	}
	slices.SortFunc(rs, byScore)
	return true
}

func roundScore(s float64) float64 {
	return float64(int64(s*1000+0.5)) / 1000
}
