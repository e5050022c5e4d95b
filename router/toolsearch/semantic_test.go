package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/router"
)

// The paraphrase sets: testdata/paraphrase/catalog.json is a
// catalog of 151 tools over 34 domains; heldout.json (held out: written
// before the second round of tuning, nothing is tuned on it), heldout2.json,
// heldout3.json and heldout4.json (held out: written in the third, fourth
// and fifth rounds before any ranking of them was seen, none of their
// requests sharing a word with the right tool), dev.json and
// dev2.json (for tuning; dev2.json was the first round's test set, looked
// at during that round) are requests worded as people word them, most
// sharing no content word with the right tool.

type paraphraseTool struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Params      map[string]string `json:"params"`
	Required    []string          `json:"required"`
}

// loadParaphraseCatalog returns the catalog as servers of MCP tools named
// server__name.
func loadParaphraseCatalog(t testing.TB) []catalogServer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "paraphrase", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Servers []struct {
			Server string           `json:"server"`
			Tools  []paraphraseTool `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var out []catalogServer
	for _, s := range f.Servers {
		cs := catalogServer{Server: s.Server}
		for _, pt := range s.Tools {
			props := map[string]any{}
			for name, desc := range pt.Params {
				props[name] = map[string]any{"type": "string", "description": desc}
			}
			schema := map[string]any{"type": "object", "properties": props}
			if len(pt.Required) > 0 {
				schema["required"] = pt.Required
			}
			cs.Tools = append(cs.Tools, &mcp.Tool{Name: s.Server + "__" + pt.Name, Description: pt.Description, InputSchema: schema})
		}
		out = append(out, cs)
	}
	return out
}

func loadParaphraseQueries(t testing.TB, set string) []labelledQuery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "paraphrase", set+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Queries []labelledQuery `json:"queries"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Queries
}

// recall is the share of queries with a right tool in the first 1, 3 and
// 10 results.
type recall struct {
	at1, at3, at10 float64
	misses         []string
}

func measureRecall(queries []labelledQuery, rank func(string) []string) recall {
	var r recall
	for _, q := range queries {
		got := rank(q.Query)
		hit := func(n int) bool {
			return slices.ContainsFunc(got[:min(n, len(got))], func(name string) bool { return slices.Contains(q.Want, name) })
		}
		if hit(1) {
			r.at1++
		}
		if hit(3) {
			r.at3++
		} else {
			r.misses = append(r.misses, fmt.Sprintf("%q want %v got %v", q.Query, q.Want, got[:min(3, len(got))]))
		}
		if hit(10) {
			r.at10++
		}
	}
	n := float64(len(queries))
	r.at1, r.at3, r.at10 = r.at1/n, r.at3/n, r.at10/n
	return r
}

// sharedWords returns the stems a query shares with a tool's name,
// description and parameters (names and descriptions).
func sharedWords(query string, tool *mcp.Tool) []string {
	d := newSearchDoc(tool.Name, tool.Title, tool.Description, "", toolschema.JSON(tool.InputSchema))
	var out []string
	for _, t := range tokenize(query) {
		if _, ok := d.tf[t]; ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// searchRanker ranks through an Index, as search_tools does.
func searchRanker(t testing.TB, r *router.Router, emb agentsmcp.Embedder) func(string) []string {
	t.Helper()
	x := NewIndex(r, Options{Embedder: emb})
	t.Cleanup(func() { x.Close() })
	if emb != nil {
		waitEmbedded(t, x)
	}
	return func(q string) []string {
		res := x.Search(context.Background(), q, "all", 10)
		if emb != nil && res.Mode != ModeHybrid {
			t.Fatalf("search %q: mode %s (%s)", q, res.Mode, res.Note)
		}
		return matchNames(res.Tools)
	}
}

// Names of the rankers of TestSemanticRetrieval.
const (
	rankHashBM25     = "hash + BM25 (hybrid, hash embedder)"
	rankSemantic     = "semantic (hybrid, shipped default)"
	rankLexicalOnly  = "BM25 only (no embedder)"
	rankSemanticOnly = "semantic vectors only"
)

// TestSemanticRetrieval measures recall@1/3/10 of the right tool on the
// paraphrase sets and on the real catalog of TestSearchQuality, for
// search_tools with the hash embedder (BM25 fused with hashed words), with
// the semantic default, and for the parts alone, all in the same run, and
// holds the semantic default to its retrieval goals on the held-out sets:
// ≥ 0.10 above hash + BM25 in recall@3, and no worse than measured (the
// goal of 0.90 is not reached; see below).
// SEARCH_MISSES=<set>/<ranker> with -v lists that ranker's misses.
func TestSemanticRetrieval(t *testing.T) {
	if raceEnabled {
		t.Skip("a measurement: make test runs it without the race detector (make test-measures)")
	}
	type catalog struct {
		servers []catalogServer
		tools   map[string]*mcp.Tool
		rankers []struct {
			name string
			rank func(string) []string
		}
	}
	newCatalog := func(servers []catalogServer) *catalog {
		c := &catalog{servers: servers, tools: map[string]*mcp.Tool{}}
		for _, s := range servers {
			for _, tool := range s.Tools {
				c.tools[tool.Name] = tool
			}
		}
		r := catalogRouter(t, servers)
		c.rankers = []struct {
			name string
			rank func(string) []string
		}{
			{rankLexicalOnly, func(q string) []string { return matchNames(SearchLexical(r, q, "all", 10)) }},
			{rankHashBM25, searchRanker(t, r, embed.Hash{})},
			{rankSemanticOnly, semanticRanker(t, servers)},
			{rankSemantic, searchRanker(t, r, embed.Semantic{})},
		}
		return c
	}
	para, real := newCatalog(loadParaphraseCatalog(t)), newCatalog(loadCatalog(t))
	results := map[string]recall{}
	// "real" is the catalog of real MCP servers of TestSearchQuality, whose
	// requests mostly share words with their tool: what users send today.
	for _, set := range []string{"heldout", "heldout2", "heldout3", "heldout4", "dev2", "dev", "real"} {
		c, queries := para, []labelledQuery(nil)
		if set == "real" {
			c, queries = real, loadQueries(t)
		} else {
			queries = loadParaphraseQueries(t, set)
		}
		noShared := 0
		for _, q := range queries {
			for _, w := range q.Want {
				if c.tools[w] == nil {
					t.Fatalf("%s: %q wants unknown tool %s", set, q.Query, w)
				}
			}
			if len(sharedWords(q.Query, c.tools[q.Want[0]])) == 0 {
				noShared++
			}
		}
		t.Logf("%s set: %d queries over %d tools of %d servers; %d (%.0f%%) share no word with the right tool", set, len(queries), len(c.tools), len(c.servers), noShared, 100*float64(noShared)/float64(len(queries)))
		t.Logf("| %-36s | set | recall@1 | recall@3 | recall@10 |", "ranker")
		for _, rk := range c.rankers {
			res := measureRecall(queries, rk.rank)
			results[set+"/"+rk.name] = res
			t.Logf("| %-36s | %s | %.3f | %.3f | %.3f |", rk.name, set, res.at1, res.at3, res.at10)
		}
		if strings.HasPrefix(set, "heldout") && float64(noShared) < 0.75*float64(len(queries)) {
			t.Errorf("only %d of %d held-out queries share no word with the right tool; the set must be mostly paraphrases", noShared, len(queries))
		}
	}
	if name := os.Getenv("SEARCH_MISSES"); name != "" {
		for _, m := range results[name].misses {
			t.Log("miss:", m)
		}
	}
	// The goal is recall@3 ≥ 0.90 on every held-out set, ≥ 0.10 above hash
	// + BM25; the semantic default reaches 0.438, 0.407, 0.332 and 0.307 on
	// the four held-out sets (sixth round: WordNet words the corpus lacked,
	// generic words damped in the alignment; hash + BM25 0.170, 0.106,
	// 0.126, 0.073), so the goal is open
	// (docs/adr/0015-offline-semantic-model.md).
	// Each floor holds what was measured minus two queries, so that a
	// change that makes it worse fails; the margin is the goal's.
	for _, f := range []struct {
		set      string
		floor    float64
		measured float64
		margin   bool
	}{
		{"heldout", 65.0 / 153, 67.0 / 153, true},
		{"heldout2", 44.0 / 113, 46.0 / 113, true},
		{"heldout3", 61.0 / 190, 63.0 / 190, true},
		// heldout4 was written in the fifth round before any change of it
		// (0.240 with the fourth round's ranking, 0.296 with the fifth's).
		{"heldout4", 53.0 / 179, 55.0 / 179, true},
		// dev2 holds the word alignment's, the knowledge step's and the
		// related query terms' gains (0.357 without the alignment, 0.401
		// with it, 0.412 with the topics and entity types, 0.473 with the
		// related terms).
		{"dev2", 84.0 / 182, 86.0 / 182, false},
	} {
		sem, hash := results[f.set+"/"+rankSemantic], results[f.set+"/"+rankHashBM25]
		if f.margin && sem.at3 < 0.90 {
			t.Logf("goal not met: semantic recall@3 %.3f on %s, goal ≥ 0.90", sem.at3, f.set)
		}
		if sem.at3 < f.floor-1e-9 {
			t.Errorf("semantic default: recall@3 %.3f on %s, want ≥ %.3f (measured %.3f)", sem.at3, f.set, f.floor, f.measured)
		}
		if f.margin && sem.at3 < hash.at3+0.10 {
			t.Errorf("semantic default: recall@3 %.3f on %s, want ≥ 0.10 above hash + BM25's %.3f", sem.at3, f.set, hash.at3)
		}
	}
	// The real catalog: the knowledge must not cost what users send today
	// (measured 0.754; the floor is that minus two queries).
	if r := results["real/"+rankSemantic]; r.at3 < 148.0/199-1e-9 {
		t.Errorf("semantic default: recall@3 %.3f on the real catalog, want ≥ %.3f (measured 0.754)", r.at3, 148.0/199)
	}
}

// semanticRanker ranks the catalog by the cosine of semantic vectors alone.
func semanticRanker(t testing.TB, servers []catalogServer) func(string) []string {
	docs := catalogDocs(servers)
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.embedText
	}
	vecs, err := embed.Semantic{}.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return func(q string) []string {
		qv, err := embed.Semantic{}.Embed(context.Background(), []string{q})
		if err != nil {
			t.Fatal(err)
		}
		type scored struct {
			name string
			cos  float64
		}
		out := make([]scored, len(docs))
		for i, d := range docs {
			out[i] = scored{d.match.Name, cosine(qv[0], vecs[i])}
		}
		slices.SortStableFunc(out, func(a, b scored) int {
			if a.cos != b.cos {
				if a.cos > b.cos {
					return -1
				}
				return 1
			}
			return strings.Compare(a.name, b.name)
		})
		names := make([]string, 0, 10)
		for _, s := range out[:min(10, len(out))] {
			names = append(names, s.name)
		}
		return names
	}
}

// BenchmarkSearchTools1000 measures search_tools over a catalog of 1,057
// tools (the paraphrase catalog seven times, under seven server names),
// with the semantic default and with the hash embedder, tool vectors
// cached, one query at a time; it reports the p50 and p95 latency of one
// search. The goal is p50 ≤ 5 ms with the semantic default.
func BenchmarkSearchTools1000(b *testing.B) {
	base := loadParaphraseCatalog(b)
	var servers []catalogServer
	for k := range 7 {
		for _, s := range base {
			c := catalogServer{Server: fmt.Sprintf("%s%d", s.Server, k)}
			for _, tool := range s.Tools {
				t := *tool
				t.Name = fmt.Sprintf("%s%d__%s", s.Server, k, strings.SplitN(tool.Name, "__", 2)[1])
				c.Tools = append(c.Tools, &t)
			}
			servers = append(servers, c)
		}
	}
	r := catalogRouter(b, servers)
	queries := loadParaphraseQueries(b, "dev")
	for _, bc := range []struct {
		name string
		emb  agentsmcp.Embedder
	}{{"semantic", embed.Semantic{}}, {"hash", embed.Hash{}}} {
		b.Run(bc.name, func(b *testing.B) {
			x := NewIndex(r, Options{Embedder: bc.emb})
			defer x.Close()
			waitEmbedded(b, x)
			var took []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				res := x.Search(context.Background(), queries[i%len(queries)].Query, "all", 10)
				took = append(took, time.Since(start))
				if res.Mode != ModeHybrid {
					b.Fatalf("mode %s (%s)", res.Mode, res.Note)
				}
				i++
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
