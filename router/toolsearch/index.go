package toolsearch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// DefaultQueryTimeout bounds embedding a query when
// [Options.QueryTimeout] is zero.
const DefaultQueryTimeout = 2 * time.Second

// embedBatch is the most tool texts given to the embedder in one call.
const embedBatch = 64

// Options configure an [Index].
type Options struct {
	// Embedder, if set, makes the ranking hybrid: the lexical score is fused
	// with the cosine similarity of the query's and each tool's embedding.
	// nil ranks lexically only.
	Embedder agentsmcp.Embedder
	// QueryTimeout bounds embedding the query of one search; past it the
	// search answers lexically. Zero means [DefaultQueryTimeout].
	QueryTimeout time.Duration
	// Logger receives embedding failures; nil discards them.
	Logger *slog.Logger
}

// Index ranks a registry's tools for search_tools, the agents' [Catalog]
// and the admin API. It is safe for concurrent use.
//
// The lexical index (tokens and BM25 statistics) follows the registry's tool
// set: a search after a change re-indexes first, re-tokenising only the tools
// that changed. With an embedder, a goroutine owned by the index embeds the
// tools off the request path whenever the tool set changes. Each tool's
// vector is cached under a hash of the embedder's ID and the embedded text, so
// an unchanged tool is never embedded twice. Until every tool has a vector,
// and whenever the query cannot be embedded within QueryTimeout, searches
// answer lexically and say so in [Result.Note]; embedding problems
// never fail a search.
type Index struct {
	reg     Registry
	emb     agentsmcp.Embedder
	params  rankParams // defaultRankParams, or semanticRankParams for a model of meaning
	timeout time.Duration
	logger  *slog.Logger

	mu      sync.Mutex
	gen     uint64                                  // generation of the registry that lex is of
	lex     *lexicalIndex                           // nil until the first search
	docs    map[*agentsmcp.RegisteredTool]searchDoc // tokenised tools, by registration
	vectors map[string][]float32                    // embedding cache, by embedKey
	// aligned is vectors in the order of lex.docs, and missing how many of
	// them are nil; both valid while alignedOK (reset when lex or vectors
	// change), so that a search does not look up every tool's vector.
	aligned   [][]float32
	missing   int
	alignedOK bool

	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// NewIndex returns an index of reg's tools. With opts.Embedder it starts
// embedding the catalog in the background; call Close to stop it.
func NewIndex(reg Registry, opts Options) *Index {
	x := &Index{
		reg:     reg,
		emb:     opts.Embedder,
		params:  rankParamsFor(opts.Embedder),
		timeout: opts.QueryTimeout,
		logger:  opts.Logger,
		docs:    map[*agentsmcp.RegisteredTool]searchDoc{},
		vectors: map[string][]float32{},
		done:    make(chan struct{}),
	}
	if x.timeout <= 0 {
		x.timeout = DefaultQueryTimeout
	}
	if x.logger == nil {
		x.logger = slog.New(slog.DiscardHandler)
	}
	if x.emb == nil {
		x.stop = func() {}
		close(x.done)
		return x
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.stop = cancel
	changes, unwatch := reg.WatchTools()
	go func() {
		defer close(x.done)
		defer unwatch()
		x.embedLoop(ctx, changes)
	}()
	return x
}

// Close stops the background embedding and waits for it to end. It is
// idempotent and always returns nil.
func (x *Index) Close() error {
	x.closeOnce.Do(x.stop)
	<-x.done
	return nil
}

// Search implements [Ranker]: it ranks the registry's tools against query
// within scope ("all" or "", "local", "remote") and returns the best limit
// matches.
func (x *Index) Search(ctx context.Context, query, scope string, limit int) *Result {
	res := x.search(ctx, query, scope, limit)
	for i := range res.Tools {
		res.Tools[i].Why = res.explain(res.Tools[i].Name)
	}
	res.explain = nil
	return res
}

// search is Search leaving the Whys to the result's explain.
func (x *Index) search(ctx context.Context, query, scope string, limit int) *Result {
	ix, vecs, missing := x.snapshot()
	terms := parseQuery(query, x.params.synonymWeight)
	res := &Result{Mode: ModeLexical}
	if x.emb == nil {
		res.Tools, res.explain = rankUnexplained(ix, terms, x.params, scope, limit, nil, nil, nil)
		return res
	}
	if missing > 0 {
		res.Note = fmt.Sprintf("tool embeddings are not ready (%d of %d tools missing)", missing, len(ix.docs))
		res.Tools, res.explain = rankUnexplained(ix, terms, x.params, scope, limit, nil, nil, nil)
		return res
	}
	qv, err := x.embedQuery(ctx, query)
	if err != nil {
		x.logger.Warn("search_tools: query embedding failed; ranking lexically", "embedder", x.emb.ID(), "error", err)
		res.Note = "query embedding failed; ranked by words only"
		if errors.Is(err, context.DeadlineExceeded) {
			res.Note = fmt.Sprintf("query embedding timed out after %s; ranked by words only", x.timeout)
		}
		res.Tools, res.explain = rankUnexplained(ix, terms, x.params, scope, limit, nil, nil, nil)
		return res
	}
	res.Mode = ModeHybrid
	var align aligner
	if a, ok := x.emb.(agentsmcp.AligningEmbedder); ok {
		// Local and bounded (a pass over alignCandidates descriptions), so
		// it runs without the query timeout.
		align = func(texts []string) ([]float64, error) { return a.Align(query, texts) }
	}
	if rel, ok := x.emb.(relatingEmbedder); ok {
		terms = withRelatedTerms(ix, terms, rel)
	}
	res.Tools, res.explain = rankUnexplained(ix, terms, x.params, scope, limit, qv, vecs, align)
	return res
}

// embedQuery embeds one query within the index's timeout.
func (x *Index) embedQuery(ctx context.Context, query string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	type answer struct {
		vs  [][]float32
		err error
	}
	// The embedder should honour ctx; the select makes sure a search never
	// waits past the timeout for one that does not (that call then ends
	// whenever the embedder returns).
	ch := make(chan answer, 1)
	go func() {
		vs, err := x.emb.Embed(ctx, []string{query})
		ch <- answer{vs, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		if len(a.vs) != 1 || len(a.vs[0]) == 0 {
			return nil, fmt.Errorf("embedder %s returned %d vectors for 1 text", x.emb.ID(), len(a.vs))
		}
		return normalize(a.vs[0]), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// snapshot returns the current lexical index, re-indexing if the registry's
// tools changed, the cached vectors aligned with its documents (nil without
// an embedder) and how many documents have no vector yet.
func (x *Index) snapshot() (*lexicalIndex, [][]float32, int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lex == nil || x.reg.ToolsGeneration() != x.gen {
		x.reindexLocked()
	}
	if x.emb == nil {
		return x.lex, nil, 0
	}
	if !x.alignedOK {
		vecs := make([][]float32, len(x.lex.docs))
		missing := 0
		for i, d := range x.lex.docs {
			vecs[i] = x.vectors[d.vecKey]
			if vecs[i] == nil {
				missing++
			}
		}
		// A new slice each time: a search in flight keeps reading the old.
		x.aligned, x.missing, x.alignedOK = vecs, missing, true
	}
	return x.lex, x.aligned, x.missing
}

// reindexLocked rebuilds the lexical index from the registry's tools, reusing
// the tokenised documents of unchanged tools. x.mu must be held.
func (x *Index) reindexLocked() {
	gen, entries := x.reg.ToolSnapshot()
	docs := make([]searchDoc, len(entries))
	keep := make(map[*agentsmcp.RegisteredTool]searchDoc, len(entries))
	for i, e := range entries {
		d, ok := x.docs[e]
		if !ok {
			d = docOf(e)
			if x.emb != nil {
				d.vecKey = x.embedKey(d.embedText)
			}
		}
		docs[i], keep[e] = d, d
	}
	x.docs, x.gen, x.lex = keep, gen, newLexicalIndex(docs)
	x.alignedOK = false
}

// embedKey is the cache key of a tool text's vector.
func (x *Index) embedKey(text string) string {
	h := sha256.New()
	h.Write([]byte(x.emb.ID()))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// embedLoop embeds the catalog now and after every change until ctx ends. A
// failed pass is retried with backoff (from 1s to 5m) or at the next change.
func (x *Index) embedLoop(ctx context.Context, changes <-chan struct{}) {
	const minBackoff, maxBackoff = time.Second, 5 * time.Minute
	backoff := minBackoff
	retry := time.NewTimer(maxBackoff)
	retry.Stop() // armed only after a failure (Go 1.23+ timers deliver nothing once stopped)
	defer retry.Stop()
	for {
		if err := x.embedPass(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			x.logger.Warn("search_tools: embedding tools failed; searches stay lexical until it succeeds", "embedder", x.emb.ID(), "retry_in", backoff, "error", err)
			retry.Reset(backoff)
			backoff = min(2*backoff, maxBackoff)
		} else {
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
			retry.Stop()
		case <-retry.C:
		}
	}
}

// embedPass embeds every tool text that has no cached vector, and drops
// the vectors of tools that are gone.
func (x *Index) embedPass(ctx context.Context) error {
	x.mu.Lock()
	if x.lex == nil || x.reg.ToolsGeneration() != x.gen {
		x.reindexLocked()
	}
	want := map[string]string{} // key → text
	var todo []string
	for _, d := range x.lex.docs {
		k := d.vecKey
		if _, dup := want[k]; dup {
			continue
		}
		want[k] = d.embedText
		if x.vectors[k] == nil {
			todo = append(todo, k)
		}
	}
	for k := range x.vectors {
		if _, ok := want[k]; !ok {
			delete(x.vectors, k)
			x.alignedOK = false
		}
	}
	x.mu.Unlock()

	for start := 0; start < len(todo); start += embedBatch {
		keys := todo[start:min(start+embedBatch, len(todo))]
		texts := make([]string, len(keys))
		for i, k := range keys {
			texts[i] = want[k]
		}
		vs, err := x.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed %d tool texts: %w", len(texts), err)
		}
		if len(vs) != len(texts) {
			return fmt.Errorf("embedder %s returned %d vectors for %d texts", x.emb.ID(), len(vs), len(texts))
		}
		x.mu.Lock()
		for i, k := range keys {
			x.vectors[k] = normalize(vs[i])
		}
		x.alignedOK = false
		x.mu.Unlock()
	}
	return nil
}
