package toolsearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// of TestDiscoveryOnALargeCatalog, lexical and hybrid (semantic default),
// on its needs and on the older requests of testdata/catalog, in one run.
// It runs only with FINDRANK_DEV=1; FINDRANK_VARIANTS names the variants
// of devVariants to compare with the shipped ranking (comma-separated),
// and FINDRANK_MISSES=<variant>/<needs|old>/<lex|hyb> with -v lists that
// variant's misses.
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
		name string
		doc  func(*agentsmcp.RegisteredTool) searchDoc
		p    rankParams
	}
	plain := docOf
	variants := []variant{{"shipped", plain, semanticRankParams}}
	for _, extra := range strings.Split(os.Getenv("FINDRANK_VARIANTS"), ",") {
		if v, ok := devVariants[extra]; ok {
			variants = append(variants, variant{extra, v.doc, v.p})
		}
	}
	sets := []struct {
		name string
		q    []labelledQuery
	}{{"needs", loadLabelled(t, filepath.Join("testdata", "openapicatalog", "needs.json"))}, {"old", loadQueries(t)}}
	qvecs := map[string][]float32{}
	for _, s := range sets {
		for _, q := range s.q {
			v, _ := emb.Embed(ctx, []string{q.Query})
			qvecs[q.Query] = normalize(v[0])
		}
	}
	for _, v := range variants {
		docs := make([]searchDoc, len(tools))
		texts := make([]string, len(tools))
		for i, tl := range tools {
			docs[i] = v.doc(tl)
			texts[i] = docs[i].embedText
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vecs {
			vecs[i] = normalize(vecs[i])
		}
		ix := newLexicalIndex(docs)
		line := fmt.Sprintf("%-28s", v.name)
		for _, s := range sets {
			for _, mode := range []string{"lex", "hyb"} {
				rank := func(q string) []string {
					if mode == "lex" {
						return matchNames(rankMatches(ix, parseQuery(q, defaultRankParams.synonymWeight), defaultRankParams, "all", 10, nil, nil, nil))
					}
					align := func(texts []string) ([]float64, error) { return emb.Align(q, texts) }
					return matchNames(rankMatches(ix, parseQuery(q, v.p.synonymWeight), v.p, "all", 10, qvecs[q], vecs, align))
				}
				a := measure(s.q, ranker{v.name, rank})
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
var devVariants = map[string]struct {
	doc func(*agentsmcp.RegisteredTool) searchDoc
	p   rankParams
}{}

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
	devVariants["annotitle"] = struct {
		doc func(*agentsmcp.RegisteredTool) searchDoc
		p   rankParams
	}{annoTitleDoc, semanticRankParams}
}

func init() {
	add := func(name string, f func(p *rankParams)) {
		p := semanticRankParams
		f(&p)
		devVariants[name] = struct {
			doc func(*agentsmcp.RegisteredTool) searchDoc
			p   rankParams
		}{docOf, p}
	}
	add("server3", func(p *rankParams) { p.weights[fieldServer] = 3 })
	add("vec0.35", func(p *rankParams) { p.vectorWeight = 0.35 })
	add("vec0.65", func(p *rankParams) { p.vectorWeight = 0.65 })
	add("params1", func(p *rankParams) { p.weights[fieldParams] = 1 })
	add("desc1", func(p *rankParams) { p.weights[fieldDescription] = 1 })
}
