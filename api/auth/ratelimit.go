package auth

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The default rate limit per principal: 50 requests a second with bursts of
// 100. An interactive agent makes a few calls a second and a busy script a
// few dozen, so they never meet it, while one runaway loop cannot starve
// every other caller of the upstreams it shares with them.
const (
	DefaultRateLimit = 50.0
	DefaultRateBurst = 100
)

const (
	// sweepEvery is how often Allow looks for idle buckets to drop.
	sweepEvery = time.Minute
	// maxBuckets bounds the buckets kept at once; past it the least
	// recently used half goes, which at worst hands those callers a fresh
	// burst.
	maxBuckets = 100_000
)

// Limiter is a token bucket per principal: [Limiter.Allow] for JSON-RPC
// callers and [Limiter.Middleware] for HTTP.
//
// Each principal gets the limiter's rate and burst unless its
// Principal.RateLimit or Principal.Burst override them. A Limiter made with
// a rate of 0 is disabled for principals without an override, which are
// then never refused; an explicit per-principal RateLimit still applies.
//
// Memory stays bounded without a goroutine: a bucket idle long enough to
// have refilled completely is indistinguishable from a new one, so Allow
// drops such buckets as it goes (at most once a minute), and never keeps
// more than 100,000. It is safe for concurrent use.
type Limiter struct {
	// OnReject, if set, is called by Middleware for every request it
	// refuses, e.g. for the audit trail.
	OnReject func(r *http.Request, p *agentsmcp.Principal, retryAfter time.Duration)

	limit      rate.Limit
	burst      int
	now        func() time.Time
	maxBuckets int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim      *rate.Limiter
	limit    rate.Limit
	burst    int
	lastUsed time.Time
}

// NewLimiter returns a Limiter allowing perSecond requests a second with
// bursts of burst to each principal. perSecond <= 0 disables the default
// limit; burst < 1 means twice perSecond (at least 1).
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond < 0 || math.IsNaN(perSecond) {
		perSecond = 0
	}
	return &Limiter{
		limit:      rate.Limit(perSecond),
		burst:      defaultBurst(perSecond, burst),
		now:        time.Now,
		maxBuckets: maxBuckets,
		buckets:    make(map[string]*bucket),
	}
}

func defaultBurst(perSecond float64, burst int) int {
	if burst >= 1 {
		return burst
	}
	return max(1, int(math.Ceil(2*perSecond)))
}

// limitFor returns the rate and burst that apply to p.
func (l *Limiter) limitFor(p *agentsmcp.Principal) (rate.Limit, int) {
	if p != nil && p.RateLimit > 0 {
		return rate.Limit(p.RateLimit), defaultBurst(p.RateLimit, p.Burst)
	}
	if p != nil && p.Burst > 0 {
		return l.limit, p.Burst
	}
	return l.limit, l.burst
}

// Allow takes one request from p's bucket. When the bucket is empty it
// reports false and how long until a request would be allowed; the refused
// request costs nothing. A nil p counts as the anonymous principal.
func (l *Limiter) Allow(p *agentsmcp.Principal) (ok bool, retryAfter time.Duration) {
	return l.AllowN(p, 1)
}

// AllowN is [Limiter.Allow] for n requests at once (the calls of a
// JSON-RPC batch): all of them or none. More than the burst is never
// allowed; the wait reported then is a second, as for any refusal that
// waiting cannot cure.
func (l *Limiter) AllowN(p *agentsmcp.Principal, n int) (ok bool, retryAfter time.Duration) {
	limit, burst := l.limitFor(p)
	if limit <= 0 {
		return true, 0
	}
	id := agentsmcp.AnonymousPrincipal
	if p != nil {
		id = p.ID
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[id]
	if b == nil || b.limit != limit || b.burst != burst {
		// New, or its configuration changed: start from a full bucket.
		b = &bucket{lim: rate.NewLimiter(limit, burst), limit: limit, burst: burst}
		l.buckets[id] = b
	}
	b.lastUsed = now
	res := b.lim.ReserveN(now, n)
	if !res.OK() {
		return false, time.Second
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops the buckets that have refilled completely; l.mu is held.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < sweepEvery && len(l.buckets) < l.maxBuckets {
		return
	}
	l.lastSweep = now
	for id, b := range l.buckets {
		refill := time.Duration(float64(b.burst) / float64(b.limit) * float64(time.Second))
		if now.Sub(b.lastUsed) >= refill {
			delete(l.buckets, id)
		}
	}
	if len(l.buckets) < l.maxBuckets {
		return
	}
	ids := make([]string, 0, len(l.buckets))
	for id := range l.buckets {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return l.buckets[a].lastUsed.Compare(l.buckets[b].lastUsed) })
	for _, id := range ids[:len(ids)/2] {
		delete(l.buckets, id)
	}
}

// Middleware wraps next so that each request takes one token from the
// bucket of its principal (from [Authenticator.Authenticate], which must
// run first). A refused request gets 429 with Retry-After in whole seconds
// (at least 1) and the JSON body {"error":{"code":"rate_limited",…}}.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.Admit(w, r, 1) {
			next.ServeHTTP(w, r)
		}
	})
}

// Admit takes n requests from the bucket of r's principal, as
// [Limiter.Middleware] does for one: when they are refused, it answers 429
// as Middleware does and reports false. The MCP endpoints call it with the
// messages of a JSON-RPC batch beyond the first, which Middleware charged.
func (l *Limiter) Admit(w http.ResponseWriter, r *http.Request, n int) bool {
	p := agentsmcp.PrincipalFrom(r.Context())
	ok, retry := l.AllowN(p, n)
	if ok {
		return true
	}
	secs := RetryAfterSeconds(retry)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSONError(w, http.StatusTooManyRequests, CodeRateLimited,
		"rate limit exceeded: retry in "+strconv.Itoa(secs)+"s")
	if l.OnReject != nil {
		l.OnReject(r, p, retry)
	}
	return false
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least 1, the
// form of the Retry-After header.
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
