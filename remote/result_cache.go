package remote

import (
	"container/list"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file caches what upstreams let be cached. Under the 2026-07-28
// revision a server marks its list results, server/discover and
// resources/read results with ttlMs (how long the result stays fresh) and
// cacheScope ("public": the same for every caller; "private": for the
// authorization context that asked only). Tool results carry no such hint
// in that revision, so tools/call is never cached. The lists clients see
// are the pool's catalog, kept current by list_changed, so the upstream
// requests a cache saves are resources/read: a read the upstream marked
// with a positive ttlMs is kept that long and served from here.
//
// Keys: the upstream, the original URI and, for a private result, the
// caller's principal: a private result is never served to anyone else.
// A public result of an OAuth upstream is kept per principal as well,
// since each caller reads it over its own authorization there. The cache
// is bounded in entries and each entry in size, least recently used going
// first. An upstream's notifications/resources/list_changed drops all its
// entries, and so does every new listing of it (after a reconnect above
// all); a read that began before such a drop is not stored. (The pool does
// not subscribe to upstream resources, so notifications/resources/updated
// does not come.)

// maxCachedResultBytes is the most bytes of JSON one cached read may
// weigh; larger results are relayed and not kept.
const maxCachedResultBytes = 1 << 20

// resultKey identifies a cached resources/read.
type resultKey struct {
	upstream  string
	principal string // "" for a public result of a non-OAuth upstream
	uri       string // the upstream's own URI
}

type cachedRead struct {
	key     resultKey
	raw     []byte // the result as JSON: each hit decodes its own copy
	expires time.Time
}

// resultCache is the pool's cache of upstream resources/read results; nil
// when caching is off.
type resultCache struct {
	max int // entries

	mu      sync.Mutex
	entries map[resultKey]*list.Element // of *cachedRead
	lru     list.List                   // front: most recently used
	// gens counts the drops of each upstream: a read stores its result
	// only if no drop happened since it began.
	gens map[string]uint64
}

func newResultCache(maxEntries int) *resultCache {
	if maxEntries <= 0 {
		return nil
	}
	return &resultCache{max: maxEntries, entries: map[resultKey]*list.Element{}, gens: map[string]uint64{}}
}

// get returns a fresh copy of the cached read of key, its ttlMs set to
// what is left of its freshness, and the drop generation of key's
// upstream (to pass to put after a miss).
func (c *resultCache) get(key resultKey, now time.Time) (*mcp.ReadResourceResult, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := c.gens[key.upstream]
	e, ok := c.entries[key]
	if !ok {
		return nil, gen
	}
	cr := e.Value.(*cachedRead)
	left := cr.expires.Sub(now)
	if left <= 0 {
		c.removeLocked(e)
		return nil, gen
	}
	var res mcp.ReadResourceResult
	if err := json.Unmarshal(cr.raw, &res); err != nil {
		c.removeLocked(e)
		return nil, gen
	}
	c.lru.MoveToFront(e)
	res.TTLMs = int(left / time.Millisecond)
	return &res, gen
}

// put keeps res under key for its ttlMs from now, unless it is not
// cacheable (ttlMs ≤ 0, too large) or key's upstream was dropped since
// generation gen.
func (c *resultCache) put(key resultKey, gen uint64, res *mcp.ReadResourceResult, now time.Time) {
	if res == nil || res.TTLMs <= 0 {
		return
	}
	raw, err := json.Marshal(res)
	if err != nil || len(raw) > maxCachedResultBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[key.upstream] != gen {
		return
	}
	if e, ok := c.entries[key]; ok {
		c.removeLocked(e)
	}
	for c.lru.Len() >= c.max {
		c.removeLocked(c.lru.Back())
	}
	c.entries[key] = c.lru.PushFront(&cachedRead{key: key, raw: raw, expires: now.Add(time.Duration(res.TTLMs) * time.Millisecond)})
}

// drop forgets the reads of upstream.
func (c *resultCache) drop(upstream string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gens[upstream]++
	for key, e := range c.entries {
		if key.upstream == upstream {
			c.removeLocked(e)
		}
	}
}

func (c *resultCache) removeLocked(e *list.Element) {
	delete(c.entries, e.Value.(*cachedRead).key)
	c.lru.Remove(e)
}

// cachedRead reads the upstream's URI original over cs, or serves it from
// the pool's cache (see [resultCache]).
func (u *upstream) cachedRead(ctx context.Context, cs *mcp.ClientSession, original string) (*mcp.ReadResourceResult, error) {
	cache := u.pool.reads
	if cache == nil {
		return readUpstream(ctx, cs, original)
	}
	principal := agentsmcp.PrincipalIDFrom(ctx)
	// A public result is the same for every caller, except from an OAuth
	// upstream, where each caller reads over its own authorization.
	shared := !u.usesOAuth()
	if !shared && principal == "" {
		return readUpstream(ctx, cs, original)
	}
	public := resultKey{upstream: u.cfg.Name, uri: original}
	if !shared {
		public.principal = principal
	}
	private := resultKey{upstream: u.cfg.Name, uri: original, principal: principal}
	now := time.Now()
	res, gen := cache.get(public, now)
	if res != nil {
		return res, nil
	}
	if principal != "" && private != public {
		if res, _ := cache.get(private, now); res != nil {
			return res, nil
		}
	}
	res, err := readUpstream(ctx, cs, original)
	if err != nil || res.NeedsInput() {
		return res, err
	}
	key := public
	// Shared only when the upstream said public (go-sdk writes an absent
	// scope as "public"); any other value, misspelt or unknown, is kept as
	// private, as the router's hints treat it.
	if res.CacheScope != "" && res.CacheScope != "public" {
		if principal == "" {
			return res, nil // no authorization context to keep it for
		}
		key = private
	}
	cache.put(key, gen, res, time.Now())
	return res, nil
}

// dropReads forgets the cached reads of u.
func (u *upstream) dropReads() {
	if u.pool.reads != nil {
		u.pool.reads.drop(u.cfg.Name)
	}
}

// go-sdk's ClientSession keeps each resources/read result of a 2026-07-28
// session by URI for its ttlMs and answers the session's next read of that
// URI with it, without asking. The pool's session is shared by every
// caller, that cache is not dropped on resources/list_changed, and what it
// keeps is the very result handed to the pool, whose contents the pool
// then rewrites (their URIs exposed). So the pool's reads go through
// readUpstream: the client's sending middleware keepReadsOutOfSessionCache
// hands the result as the upstream sent it to readUpstream (through ctx)
// and gives go-sdk a copy with ttlMs 0 to keep, which its cache never
// serves. Whether a read is served again is the pool's cache's decision.

type upstreamReadKey struct{}

// upstreamRead is where keepReadsOutOfSessionCache leaves the result.
type upstreamRead struct{ res *mcp.ReadResourceResult }

// readUpstream reads uri over cs, never from go-sdk's session cache.
func readUpstream(ctx context.Context, cs *mcp.ClientSession, uri string) (*mcp.ReadResourceResult, error) {
	holder := &upstreamRead{}
	res, err := cs.ReadResource(context.WithValue(ctx, upstreamReadKey{}, holder), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if holder.res != nil {
		return holder.res, nil
	}
	return res, nil
}

// keepReadsOutOfSessionCache is the upstream clients' sending middleware
// described above.
func keepReadsOutOfSessionCache(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		rr, ok := res.(*mcp.ReadResourceResult)
		if err != nil || !ok || rr == nil {
			return res, err
		}
		if holder, _ := ctx.Value(upstreamReadKey{}).(*upstreamRead); holder != nil {
			holder.res = rr
		}
		stale := *rr
		stale.TTLMs = 0
		return &stale, nil
	}
}
