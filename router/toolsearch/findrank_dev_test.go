package toolsearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/netnstest"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/router"
)

// TestFindRankDevVariants compares ranking variants on the large catalog
// of TestDiscoveryOnALargeCatalog, lexical (as SearchLexical) and hybrid
// (as search_tools with the semantic default, its related words
// included), on its needs, its held-out set and the older requests of
// testdata/catalog, in one run. It runs only with FINDRANK_DEV=1;
// FINDRANK_VARIANTS names the variants of devVariants to compare with the
// shipped ranking (comma-separated), FINDRANK_MISSES=<variant>/<set>/<lex|hyb>
// with -v lists that variant's misses, and FINDRANK_DIFF=1 with -v lists
// the requests whose top-1 a variant changes against the shipped ranking.
func TestFindRankDevVariants(t *testing.T) {
	if os.Getenv("FINDRANK_DEV") == "" {
		t.Skip("FINDRANK_DEV=1")
	}
	if !netnstest.Isolate(t) {
		return
	}
	ctx := context.Background()
	r := router.New(router.Options{})
	for _, s := range loadCatalog(t) {
		_ = r.AddProvider(ctx, &catalogProvider{name: s.Server, tools: s.Tools})
	}
	// A loaded machine must not time the big documents out: the
	// measurement needs every operation.
	src := httptools.NewSources(r, httptools.Options{Budget: httptools.Budget{Timeout: 10 * time.Minute}})
	for _, s := range openAPISources {
		if err := src.Add(ctx, httptools.Source{Name: s.name, OpenAPI: filepath.Join(openAPICatalog, s.file), BaseURL: "http://127.0.0.1:9"}); err != nil {
			t.Fatal(err)
		}
	}
	_, tools := r.ToolSnapshot()
	emb := embed.Semantic{}
	type variant struct {
		name    string
		doc     func(*agentsmcp.RegisteredTool) searchDoc
		p, lexP rankParams
	}
	plain := docOf
	variants := []variant{{"shipped", plain, semanticRankParams, defaultRankParams}}
	for _, extra := range strings.Split(os.Getenv("FINDRANK_VARIANTS"), ",") {
		if v, ok := devVariants[extra]; ok {
			lexP := defaultRankParams
			if v.lex != nil {
				v.lex(&lexP)
			}
			variants = append(variants, variant{extra, v.doc, v.p, lexP})
		}
	}
	sets := []struct {
		name string
		q    []labelledQuery
	}{
		{"needs", loadLabelled(t, filepath.Join("testdata", "openapicatalog", "needs.json"))},
		{"heldout", loadLabelled(t, filepath.Join("testdata", "openapicatalog", "heldout.json"))},
		{"old", loadQueries(t)},
	}
	qvecs := map[string][]float32{}
	for _, s := range sets {
		for _, q := range s.q {
			v, _ := emb.Embed(ctx, []string{q.Query})
			qvecs[q.Query] = normalize(v[0])
		}
	}
	shippedTop1 := map[string]bool{}
	// Vectors by text: variants that tokenise alike embed once.
	byText := map[string][]float32{}
	for _, v := range variants {
		docs := make([]searchDoc, len(tools))
		var texts []string
		for i, tl := range tools {
			docs[i] = v.doc(tl)
			if byText[docs[i].embedText] == nil {
				texts = append(texts, docs[i].embedText)
			}
		}
		for start := 0; start < len(texts); start += embedBatch {
			batch := texts[start:min(start+embedBatch, len(texts))]
			vs, err := emb.Embed(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range batch {
				byText[text] = normalize(vs[i])
			}
		}
		vecs := make([][]float32, len(docs))
		for i := range docs {
			vecs[i] = byText[docs[i].embedText]
		}
		ix := newLexicalIndex(docs)
		line := fmt.Sprintf("%-28s", v.name)
		for _, s := range sets {
			for _, mode := range []string{"lex", "hyb"} {
				rank := func(q string) []string {
					if mode == "lex" {
						return matchNames(rankMatches(ix, parseQuery(q, v.lexP.synonymWeight), v.lexP, "all", 10, nil, nil, nil))
					}
					align := func(texts []string) ([]float64, error) { return emb.Align(q, texts) }
					terms := withRelatedTerms(ix, parseQuery(q, v.p.synonymWeight), emb)
					if w := devRelatedPresent[v.name]; w > 0 {
						terms = relatedEverywhere(ix, parseQuery(q, v.p.synonymWeight), emb, w)
					}
					return matchNames(rankMatches(ix, terms, v.p, "all", 10, qvecs[q], vecs, align))
				}
				a := measure(s.q, ranker{v.name, rank})
				key := s.name + "/" + mode
				for _, q := range s.q {
					got := rank(q.Query)
					hit := len(got) > 0 && slices.Contains(q.Want, got[0])
					if v.name == "shipped" {
						shippedTop1[key+"/"+q.Query] = hit
					} else if os.Getenv("FINDRANK_DIFF") != "" && hit != shippedTop1[key+"/"+q.Query] {
						t.Logf("%s %s top-1 %v→%v: %q want %v got %v", v.name, key, !hit, hit, q.Query, q.Want, got[:min(3, len(got))])
					}
				}
				line += fmt.Sprintf(" | %s %s %.3f/%.3f", s.name, mode, a.top1, a.top3)
				if os.Getenv("FINDRANK_MISSES") == v.name+"/"+s.name+"/"+mode {
					for _, m := range a.misses {
						t.Log("miss:", m)
					}
				}
			}
		}
		t.Log(line)
	}
}

// devVariants are the variants TestFindRankDevVariants can compare: how
// a tool is tokenised and the ranking's knobs.
var devVariants = map[string]devVariant{}

// devRelatedPresent is, for a variant, the weight of the related words of
// the query's words that tools contain (see relatedEverywhere).
var devRelatedPresent = map[string]float64{}

// devVariant is a tokenising, the hybrid ranking's knobs and a change to
// the lexical ones (nil: none).
type devVariant struct {
	doc func(*agentsmcp.RegisteredTool) searchDoc
	p   rankParams
	lex func(p *rankParams)
}

// annoTitleDoc tokenises a tool with its annotations' title as its title
// when it has none of its own (the OpenAPI summary of an HTTP tool).
func annoTitleDoc(t *agentsmcp.RegisteredTool) searchDoc {
	title := t.Tool.Title
	if title == "" && t.Tool.Annotations != nil {
		title = t.Tool.Annotations.Title
	}
	return newSearchDoc(t.Tool.Name, title, t.Tool.Description, t.Source, t.InputSchema)
}

func init() {
	devVariants["annotitle"] = devVariant{annoTitleDoc, semanticRankParams, nil}
}

func init() {
	add := func(name string, f func(p *rankParams)) {
		p := semanticRankParams
		f(&p)
		devVariants[name] = devVariant{docOf, p, f}
	}
	add("server3", func(p *rankParams) { p.weights[fieldServer] = 3 })
	add("vec0.35", func(p *rankParams) { p.vectorWeight = 0.35 })
	add("vec0.65", func(p *rankParams) { p.vectorWeight = 0.65 })
	add("params1", func(p *rankParams) { p.weights[fieldParams] = 1 })
	add("desc1", func(p *rankParams) { p.weights[fieldDescription] = 1 })
}

func init() {
	for _, w := range []float64{0.05, 0.1, 0.2, 0.3} {
		f := func(p *rankParams) { p.shapeWeight, p.shapeCandidates = w, 20 }
		p := semanticRankParams
		f(&p)
		devVariants[fmt.Sprintf("shape%g", w)] = devVariant{docOf, p, f}
	}
	for _, w := range []float64{0.25, 0.5} {
		name := fmt.Sprintf("related%g", w)
		devVariants[name] = devVariant{docOf, semanticRankParams, nil}
		devRelatedPresent[name] = w
	}
	for _, w := range []float64{0.2, 0.3} {
		f := func(p *rankParams) { p.shapeWeight, p.shapeCandidates, p.shapeSameSource = w, 20, true }
		p := semanticRankParams
		f(&p)
		devVariants[fmt.Sprintf("shapesrc%g", w)] = devVariant{docOf, p, f}
	}
	devVariants["echo"] = devVariant{echoFreeDoc, semanticRankParams, nil}
	f := func(p *rankParams) { p.shapeWeight, p.shapeCandidates = 0.1, 20 }
	p := semanticRankParams
	f(&p)
	devVariants["echo+shape0.1"] = devVariant{echoFreeDoc, p, f}
}

// echoFreeDoc tokenises a tool without the words of its server's name in
// its own name ("slack__slack_post_message": "post message").
func echoFreeDoc(t *agentsmcp.RegisteredTool) searchDoc {
	d := docOf(t)
	dropServerEcho(&d)
	return d
}

// relatedEverywhere is withRelatedTerms that also adds, at presentWeight
// × relatedTermWeight × the relation's weight, the related words of the
// words some tool does contain.
func relatedEverywhere(ix *lexicalIndex, terms []queryTerm, rel relatingEmbedder, presentWeight float64) []queryTerm {
	out := withRelatedTerms(ix, terms, rel)
	have := make(map[string]bool, len(out))
	for _, t := range out {
		have[t.term] = true
	}
	for _, qt := range terms {
		if qt.from != "" || ix.df[qt.term] == 0 {
			continue
		}
		words, weights := rel.RelatedWords(qt.word)
		for k, w := range words {
			for _, stem := range tokenize(w) {
				if !have[stem] && ix.df[stem] > 0 {
					have[stem] = true
					out = append(out, queryTerm{term: stem, weight: presentWeight * relatedTermWeight * weights[k], word: w, from: qt.word})
				}
			}
		}
	}
	return out
}

// dropServerEcho removes from a document's name field the words of its
// server's name ("slack__slack_post_message" is "post message" there):
// a name that repeats its server's name would otherwise match a request
// naming the product twice, once as the server and once as the name, and
// outrank another source's tools for that product that have the server
// match only.
func dropServerEcho(d *searchDoc) {
	server := map[string]bool{}
	for _, t := range d.fields[fieldServer] {
		server[t] = true
	}
	kept := d.fields[fieldName][:0:0]
	for _, t := range d.fields[fieldName] {
		if server[t] {
			c := d.tf[t]
			c[fieldName]--
			d.tf[t] = c
			continue
		}
		kept = append(kept, t)
	}
	d.fields[fieldName] = kept
}
