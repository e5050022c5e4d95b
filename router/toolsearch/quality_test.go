package toolsearch

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/router"
)

// The labelled catalog: testdata/catalog/<server>.json are the tools/list
// results of real MCP servers from npm (scripts/catalog/dump.mjs writes them),
// and queries.json holds hand-written requests, each with the tool(s) that
// are right for it.

type catalogServer struct {
	Server string      `json:"server"`
	Tools  []*mcp.Tool `json:"tools"`
}

type labelledQuery struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

func loadCatalog(t testing.TB) []catalogServer {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "catalog", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []catalogServer
	for _, f := range files {
		if filepath.Base(f) == "queries.json" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s catalogServer
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		t.Fatal("no catalog in testdata/catalog")
	}
	return out
}

func loadQueries(t testing.TB) []labelledQuery {
	t.Helper()
	return loadLabelled(t, filepath.Join("testdata", "catalog", "queries.json"))
}

// loadLabelled reads a file of labelled queries ({"queries": [...]}).
func loadLabelled(t testing.TB, path string) []labelledQuery {
	t.Helper()
	data, err := os.ReadFile(path)
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

func catalogDocs(servers []catalogServer) []searchDoc {
	var docs []searchDoc
	for _, s := range servers {
		for _, tool := range s.Tools {
			docs = append(docs, newSearchDoc(tool.Name, tool.Title, tool.Description, s.Server, toolschema.JSON(tool.InputSchema)))
		}
	}
	return docs
}

// catalogProvider serves one server of the catalog.
type catalogProvider struct {
	name  string
	tools []*mcp.Tool
}

func (p *catalogProvider) Name() string                               { return p.name }
func (p *catalogProvider) Tools(context.Context) ([]*mcp.Tool, error) { return p.tools, nil }
func (p *catalogProvider) CallTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// catalogRouter registers every server of the catalog on a new router.
func catalogRouter(t testing.TB, servers []catalogServer) *router.Router {
	t.Helper()
	r := router.New(router.Options{})
	for _, s := range servers {
		if err := r.AddProvider(context.Background(), &catalogProvider{name: s.Server, tools: s.Tools}); err != nil {
			t.Fatalf("add %s: %v", s.Server, err)
		}
	}
	return r
}

// waitEmbedded waits until every tool of x's registry has a vector.
func waitEmbedded(t testing.TB, x *Index) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, missing := x.snapshot(); missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("tool embeddings not ready after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ranker returns tool names best first.
type ranker struct {
	name string
	rank func(query string) []string
}

type accuracy struct {
	top1, top3 float64
	misses     []string
}

func measure(queries []labelledQuery, r ranker) accuracy {
	var a accuracy
	for _, q := range queries {
		got := r.rank(q.Query)
		hit := func(n int) bool {
			return slices.ContainsFunc(got[:min(n, len(got))], func(name string) bool { return slices.Contains(q.Want, name) })
		}
		if hit(1) {
			a.top1++
		}
		if hit(3) {
			a.top3++
		} else {
			a.misses = append(a.misses, fmt.Sprintf("%q want %v got %v", q.Query, q.Want, got[:min(3, len(got))]))
		}
	}
	n := float64(len(queries))
	a.top1, a.top3 = a.top1/n, a.top3/n
	return a
}

// hashVectors embeds texts with the offline default embedder.
func hashVectors(t testing.TB, texts []string) [][]float32 {
	t.Helper()
	vs, err := embed.Hash{}.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// cosine is the cosine similarity of any two vectors.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func rankedNames(rs []ranked) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.doc.match.Name
	}
	return out
}

func matchNames(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// Ranker names of the table; the assertions refer to them.
const (
	rankBM25    = "bm25 (before)"
	rankHash    = "hash (plain cosine)"
	rankLexical = "lexical (shipped, no embedder)"
	rankHybrid  = "hybrid (shipped, hash embedder)"
)

// catalogRankers builds every ranker compared on the labelled set. The two
// shipped ones run through the production entry points: SearchLexical
// and an Index with the hash embedder.
func catalogRankers(t testing.TB, servers []catalogServer) []ranker {
	docs := catalogDocs(servers)
	ix := newLexicalIndex(docs)
	plainTexts := make([]string, len(docs))
	for i, d := range docs {
		plainTexts[i] = d.match.Name + " " + d.match.Description
	}
	plainVecs := hashVectors(t, plainTexts)
	legacy := newLegacyBM25(servers)

	// byCosine ranks the tools by the cosine of q's hash vector with vecs,
	// one vector per doc.
	byCosine := func(q string, vecs [][]float32) []string {
		qv := hashVectors(t, []string{q})[0]
		cos := make(map[string]float64, len(docs))
		out := make([]string, len(docs))
		for i, d := range docs {
			out[i] = d.match.Name
			cos[d.match.Name] = cosine(qv, vecs[i])
		}
		slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(cos[b], cos[a]) })
		return out
	}
	plainHash := func(q string) []string { return byCosine(q, plainVecs) }
	lexical := func(p rankParams) func(string) []string {
		return func(q string) []string { return rankedNames(ix.rank(parseQuery(q, p.synonymWeight), p, nil, nil)) }
	}
	with := func(f func(*rankParams)) rankParams {
		p := defaultRankParams
		f(&p)
		return p
	}
	// Reciprocal-rank fusion of the shipped lexical ranking and the hash
	// ranking of the same tool texts, the alternative to score fusion.
	embedTexts := make([]string, len(docs))
	for i, d := range docs {
		embedTexts[i] = d.embedText
	}
	docVecs := hashVectors(t, embedTexts)
	rrf := func(q string) []string {
		vec := byCosine(q, docVecs)
		score := map[string]float64{}
		for i, n := range lexical(defaultRankParams)(q) {
			score[n] += 1 / (60 + float64(i+1))
		}
		for i, n := range vec {
			score[n] += 1 / (60 + float64(i+1))
		}
		out := make([]string, 0, len(score))
		for n := range score {
			out = append(out, n)
		}
		slices.SortFunc(out, func(a, b string) int {
			if score[a] != score[b] {
				if score[a] > score[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		return out
	}

	r := catalogRouter(t, servers)
	x := NewIndex(r, Options{Embedder: embed.Hash{}})
	t.Cleanup(func() { x.Close() })
	waitEmbedded(t, x)
	return []ranker{
		{rankBM25, legacy.rank},
		{rankHash, plainHash},
		{"fields+stems", lexical(with(func(p *rankParams) { p.synonymWeight, p.coord = 0, 0 }))},
		{"fields+stems+synonyms", lexical(with(func(p *rankParams) { p.coord = 0 }))},
		{rankLexical, func(q string) []string { return matchNames(SearchLexical(r, q, "all", 10)) }},
		{"rrf k=60 (lexical, hash)", rrf},
		{"hybrid, vector share 0.3", func(q string) []string {
			p := with(func(p *rankParams) { p.vectorWeight = 0.3 })
			return rankedNames(ix.rank(parseQuery(q, p.synonymWeight), p, hashVectors(t, []string{q})[0], docVecs))
		}},
		{rankHybrid, func(q string) []string {
			res := x.Search(context.Background(), q, "all", 10)
			if res.Mode != ModeHybrid {
				t.Fatalf("search %q: mode %s (%s)", q, res.Mode, res.Note)
			}
			return matchNames(res.Tools)
		}},
	}
}

// TestSearchQuality measures top-1 and top-3 accuracy of the rankers on the
// labelled catalog and holds the shipped ones to what they scored, so that a
// change that makes retrieval worse fails here. SEARCH_MISSES=<ranker name>
// with -v lists that ranker's top-3 misses.
func TestSearchQuality(t *testing.T) {
	if raceEnabled {
		t.Skip("a measurement: make test runs it without the race detector (make test-measures)")
	}
	servers := loadCatalog(t)
	queries := loadQueries(t)
	tools := 0
	for _, s := range servers {
		tools += len(s.Tools)
	}
	t.Logf("%d tools of %d servers, %d queries", tools, len(servers), len(queries))
	t.Logf("| %-32s | %6s | %6s |", "ranker", "top-1", "top-3")
	res := map[string]accuracy{}
	for _, r := range catalogRankers(t, servers) {
		a := measure(queries, r)
		res[r.name] = a
		t.Logf("| %-32s | %5.1f%% | %5.1f%% |", r.name, 100*a.top1, 100*a.top3)
	}
	if name := os.Getenv("SEARCH_MISSES"); name != "" {
		for _, m := range res[name].misses {
			t.Log("miss:", m)
		}
	}

	bm25, hash, lex, hybrid := res[rankBM25], res[rankHash], res[rankLexical], res[rankHybrid]
	if hybrid.top3 < bm25.top3 || hybrid.top3 < hash.top3 || hybrid.top1 < bm25.top1 {
		t.Errorf("hybrid %.3f/%.3f (top-1/top-3) is not at least BM25 %.3f/%.3f and hashing top-3 %.3f", hybrid.top1, hybrid.top3, bm25.top1, bm25.top3, hash.top3)
	}
	// Floors a little below what was measured (top-1/top-3: hybrid
	// 58.3/75.9%, lexical 57.8/76.4% on 199 queries): losing four or five
	// queries fails.
	for _, c := range []struct {
		name       string
		a          accuracy
		top1, top3 float64
	}{{rankHybrid, hybrid, 0.55, 0.73}, {rankLexical, lex, 0.54, 0.73}} {
		if c.a.top1 < c.top1 || c.a.top3 < c.top3 {
			t.Errorf("%s: top-1 %.3f top-3 %.3f, want at least %.2f and %.2f", c.name, c.a.top1, c.a.top3, c.top1, c.top3)
		}
	}
}

// TestSearchIntentPhrasings holds the everyday phrasings of a request that
// share no word with the tool made for it ("let #ops know …", "drop a note
// in …", "find out …", see intentPhrases) to ranking that tool first, on
// both shipped rankers. Each of these missed the top three before the
// intent phrases (the labelled set has them too).
func TestSearchIntentPhrasings(t *testing.T) {
	servers := loadCatalog(t)
	cases := []labelledQuery{
		{Query: "let the #ops channel know the deploy finished", Want: []string{"slack__slack_post_message"}},
		{Query: "let everyone in #general know lunch is here", Want: []string{"slack__slack_post_message"}},
		{Query: "drop a note in #general that the demo went well", Want: []string{"slack__slack_post_message"}},
		{Query: "give #general a heads-up that the build is red", Want: []string{"slack__slack_post_message"}},
		{Query: "ping #ops about the outage", Want: []string{"slack__slack_post_message"}},
		{Query: "find out who is in our Slack workspace", Want: []string{"slack__slack_get_users"}},
		// "ping" alone keeps its own meaning.
		{Query: "ping the cluster", Want: []string{"kubernetes__ping"}},
	}
	for _, r := range catalogRankers(t, servers) {
		if r.name != rankLexical && r.name != rankHybrid {
			continue
		}
		for _, c := range cases {
			if got := r.rank(c.Query); len(got) == 0 || !slices.Contains(c.Want, got[0]) {
				t.Errorf("%s: %q ranks %v first, want %v", r.name, c.Query, got[:min(3, len(got))], c.Want)
			}
		}
	}
}

// BenchmarkSearchTools compares a lexical search with a hybrid one (hash
// embedder, tool vectors cached) over the real catalog.
func BenchmarkSearchTools(b *testing.B) {
	servers := loadCatalog(b)
	queries := loadQueries(b)
	r := catalogRouter(b, servers)
	for _, bc := range []struct {
		name string
		emb  agentsmcp.Embedder
	}{{"lexical", nil}, {"hybrid", embed.Hash{}}} {
		b.Run(bc.name, func(b *testing.B) {
			x := NewIndex(r, Options{Embedder: bc.emb})
			defer x.Close()
			if bc.emb != nil {
				waitEmbedded(b, x)
			}
			want := ModeLexical
			if bc.emb != nil {
				want = ModeHybrid
			}
			i := 0
			for b.Loop() {
				res := x.Search(context.Background(), queries[i%len(queries)].Query, "all", 10)
				if res.Mode != want {
					b.Fatalf("mode %s (%s)", res.Mode, res.Note)
				}
				i++
			}
		})
	}
}

// legacyBM25 is search_tools' ranking before the hybrid (kept verbatim as
// the baseline): BM25 summed over name+title (3), description (1.5) and
// parameter text (0.75), with a three-suffix stemmer.
type legacyBM25 struct {
	docs []legacyDoc
}

type legacyDoc struct {
	name   string
	fields [3][]string
}

func newLegacyBM25(servers []catalogServer) *legacyBM25 {
	l := &legacyBM25{}
	for _, s := range servers {
		for _, tool := range s.Tools {
			l.docs = append(l.docs, legacyDoc{name: tool.Name, fields: [3][]string{
				legacyTokenize(tool.Name + " " + tool.Title),
				legacyTokenize(tool.Description),
				legacyTokenize(schemaText(toolschema.JSON(tool.InputSchema))),
			}})
		}
	}
	return l
}

func (l *legacyBM25) rank(query string) []string {
	terms := legacyTokenize(query)
	weights := [3]float64{3, 1.5, 0.75}
	const k1, b = 1.2, 0.75
	var avgLen [3]float64
	df := map[string]int{}
	for _, d := range l.docs {
		seen := map[string]bool{}
		for f, toks := range d.fields {
			avgLen[f] += float64(len(toks))
			for _, t := range toks {
				if !seen[t] {
					seen[t] = true
					df[t]++
				}
			}
		}
	}
	for f := range avgLen {
		avgLen[f] = max(avgLen[f]/float64(len(l.docs)), 1)
	}
	n := float64(len(l.docs))
	type scored struct {
		name  string
		score float64
	}
	var out []scored
	for _, d := range l.docs {
		score := 0.0
		for _, term := range terms {
			if df[term] == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[term])+0.5)/(float64(df[term])+0.5))
			for f, toks := range d.fields {
				tf := 0.0
				for _, t := range toks {
					if t == term {
						tf++
					}
				}
				if tf > 0 {
					norm := tf * (k1 + 1) / (tf + k1*(1-b+b*float64(len(toks))/avgLen[f]))
					score += weights[f] * idf * norm
				}
			}
		}
		if score > 0 {
			out = append(out, scored{d.name, score})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(out))
	for i, s := range out {
		names[i] = s.name
	}
	return names
}

func legacyTokenize(s string) []string {
	var toks []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 || (len(cur) == 1 && unicode.IsDigit(cur[0])) {
			toks = append(toks, legacyStem(string(cur)))
		}
		cur = cur[:0]
	}
	var prev rune
	for _, c := range s {
		switch {
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			flush()
			cur = append(cur, unicode.ToLower(c))
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			cur = append(cur, unicode.ToLower(c))
		default:
			flush()
		}
		prev = c
	}
	flush()
	return slices.DeleteFunc(toks, func(t string) bool { return legacyStopWords[t] })
}

var legacyStopWords = map[string]bool{"the": true, "a": true, "an": true, "of": true, "to": true, "and": true, "or": true, "in": true, "for": true, "is": true, "on": true, "with": true, "by": true, "it": true, "be": true, "this": true, "that": true, "from": true, "as": true, "at": true}

func legacyStem(w string) string {
	for _, suf := range []string{"ing", "ed", "s"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}
