package auth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// fakeClock drives a Limiter's notion of time.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestLimiter(perSecond float64, burst int) (*Limiter, *fakeClock) {
	clock := &fakeClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(perSecond, burst)
	l.now = clock.now
	return l, clock
}

func TestLimiterAllow(t *testing.T) {
	l, clock := newTestLimiter(2, 3)
	alice := &agentsmcp.Principal{ID: "key:alice"}
	bob := &agentsmcp.Principal{ID: "key:bob"}
	for i := range 3 {
		if ok, _ := l.Allow(alice); !ok {
			t.Fatalf("request %d of a burst of 3 refused", i+1)
		}
	}
	ok, retry := l.Allow(alice)
	if ok || retry <= 0 || retry > 500*time.Millisecond {
		t.Fatalf("4th request: ok %v retry %v, want refused with 0 < retry <= 500ms", ok, retry)
	}
	// A refused request costs nothing: after retry, exactly one more passes.
	clock.advance(retry)
	if ok, _ := l.Allow(alice); !ok {
		t.Fatal("refused after waiting the advised retry")
	}
	if ok, _ := l.Allow(alice); ok {
		t.Fatal("allowed a second request after waiting for one")
	}
	// Buckets are per principal.
	if ok, _ := l.Allow(bob); !ok {
		t.Fatal("bob limited by alice's traffic")
	}
	// nil is the anonymous principal, with its own bucket.
	for range 3 {
		if ok, _ := l.Allow(nil); !ok {
			t.Fatal("anonymous refused within its burst")
		}
	}
	if ok, _ := l.Allow(&agentsmcp.Principal{ID: agentsmcp.AnonymousPrincipal}); ok {
		t.Fatal("nil and the anonymous principal do not share a bucket")
	}
}

func TestLimiterOverrides(t *testing.T) {
	tests := []struct {
		name        string
		perSecond   float64
		burst       int
		p           *agentsmcp.Principal
		wantAllowed int // in a burst at one instant
	}{
		{"default", 10, 4, &agentsmcp.Principal{ID: "a"}, 4},
		{"rate override, burst 2x rate", 10, 4, &agentsmcp.Principal{ID: "a", RateLimit: 1.5}, 3},
		{"rate and burst override", 10, 4, &agentsmcp.Principal{ID: "a", RateLimit: 1, Burst: 6}, 6},
		{"burst override only", 10, 4, &agentsmcp.Principal{ID: "a", Burst: 2}, 2},
		{"disabled", 0, 4, &agentsmcp.Principal{ID: "a"}, -1},
		{"disabled but key has a limit", 0, 4, &agentsmcp.Principal{ID: "a", RateLimit: 1, Burst: 2}, 2},
		{"disabled, burst override alone", 0, 4, &agentsmcp.Principal{ID: "a", Burst: 2}, -1},
		{"burst 0 means 2x rate", 5, 0, &agentsmcp.Principal{ID: "a"}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := newTestLimiter(tt.perSecond, tt.burst)
			allowed := 0
			for range 1000 {
				if ok, retry := l.Allow(tt.p); ok {
					allowed++
				} else if retry <= 0 {
					t.Fatalf("refused with retry %v", retry)
				}
			}
			want := tt.wantAllowed
			if want < 0 {
				want = 1000
			}
			if allowed != want {
				t.Errorf("allowed %d of 1000 at once, want %d", allowed, want)
			}
		})
	}
	// A principal whose limits change (configuration reload) gets them at once.
	l, _ := newTestLimiter(10, 4)
	p := &agentsmcp.Principal{ID: "a", RateLimit: 1, Burst: 1}
	l.Allow(p)
	if ok, _ := l.Allow(p); ok {
		t.Fatal("burst 1 allowed two")
	}
	p2 := *p
	p2.Burst = 5
	if ok, _ := l.Allow(&p2); !ok {
		t.Error("raised burst not applied")
	}
}

// Idle buckets go, so memory follows the active principals, not every
// principal ever seen, and dropping them changes no answer.
func TestLimiterEviction(t *testing.T) {
	l, clock := newTestLimiter(10, 20) // refills in 2s
	for i := range 1000 {
		l.Allow(&agentsmcp.Principal{ID: fmt.Sprintf("jwt:user-%d", i)})
	}
	busy := &agentsmcp.Principal{ID: "jwt:busy"}
	for range 20 {
		l.Allow(busy)
	}
	if n := len(l.buckets); n != 1001 {
		t.Fatalf("%d buckets, want 1001", n)
	}
	clock.advance(sweepEvery)
	for range 5 {
		l.Allow(busy) // its old bucket had refilled too: a fresh one is the same
		clock.advance(time.Millisecond)
	}
	if n := len(l.buckets); n != 1 {
		t.Fatalf("%d buckets after a sweep, want only the busy one", n)
	}
	// A sweep happens at most once per sweepEvery.
	l.Allow(&agentsmcp.Principal{ID: "jwt:new"})
	clock.advance(3 * time.Second)
	l.Allow(busy)
	if n := len(l.buckets); n != 2 {
		t.Errorf("%d buckets before the next sweep is due, want 2", n)
	}
}

func TestLimiterMaxBuckets(t *testing.T) {
	l, clock := newTestLimiter(0.001, 1) // refills in 1000s: nothing idles out
	const maxBuckets = 2000
	l.maxBuckets = maxBuckets
	for i := range maxBuckets {
		l.Allow(&agentsmcp.Principal{ID: fmt.Sprintf("p%d", i)})
		if i%100 == 0 {
			clock.advance(time.Millisecond)
		}
	}
	l.Allow(&agentsmcp.Principal{ID: "one-more"})
	if n := len(l.buckets); n > maxBuckets/2+1 {
		t.Errorf("%d buckets, want at most %d after the cap was hit", n, maxBuckets/2+1)
	}
	if _, kept := l.buckets["one-more"]; !kept {
		t.Error("the newest bucket was dropped")
	}
}

func TestLimiterMiddleware(t *testing.T) {
	l, clock := newTestLimiter(1, 2)
	var rejected []string
	l.OnReject = func(_ *http.Request, p *agentsmcp.Principal, _ time.Duration) { rejected = append(rejected, p.ID) }
	a, err := New(Config{Keys: []Key{{Secret: mcpKey, Scopes: []string{"mcp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Middleware(agentsmcp.ScopeMCP)(l.Middleware(okHandler))
	for i := range 2 {
		if rec, _ := do(t, h, http.MethodPost, bearer(mcpKey)); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
	}
	clock.advance(100 * time.Millisecond)
	rec, body := do(t, h, http.MethodPost, bearer(mcpKey))
	if rec.Code != http.StatusTooManyRequests || body.Error.Code != "rate_limited" || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("3rd request: %d %+v Retry-After %q; want 429 rate_limited, Retry-After 1", rec.Code, body, rec.Header().Get("Retry-After"))
	}
	if len(rejected) != 1 || rejected[0] != "key:"+sha256Hex(mcpKey)[:12] {
		t.Errorf("OnReject calls %q", rejected)
	}
	// Unauthenticated requests never reach the limiter.
	if rec, _ := do(t, h, http.MethodPost, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", rec.Code)
	}

	// Long waits are whole seconds, rounded up.
	slow, _ := newTestLimiter(0.1, 1)
	sh := slow.Middleware(okHandler)
	req := httptest.NewRequest(http.MethodGet, "/admin/v1/x", nil)
	sh.ServeHTTP(httptest.NewRecorder(), req)
	rec = httptest.NewRecorder()
	sh.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "10" {
		t.Errorf("0.1 req/s: %d Retry-After %q, want 429 and 10", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Nanosecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 90 * time.Second: 90} {
		if got := RetryAfterSeconds(d); got != want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

// Concurrent use from many goroutines is safe and never over-admits.
func TestLimiterConcurrent(t *testing.T) {
	l := NewLimiter(0.001, 50) // real clock; effectively no refill during the test
	p := &agentsmcp.Principal{ID: "key:shared"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if ok, _ := l.Allow(p); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("allowed %d of 800 concurrent requests, want the burst of 50", allowed)
	}
}

// TestLimiterAllowN: a batch takes one token per message, all or none.
func TestLimiterAllowN(t *testing.T) {
	l, clock := newTestLimiter(1, 3)
	p := &agentsmcp.Principal{ID: "key:batch"}
	if ok, _ := l.AllowN(p, 4); ok {
		t.Fatal("a batch of 4 allowed with a burst of 3")
	}
	if ok, _ := l.AllowN(p, 3); !ok {
		t.Fatal("a batch of 3 refused with a full bucket of 3 (the refused batch of 4 must cost nothing)")
	}
	ok, retry := l.AllowN(p, 2)
	if ok || retry < time.Second {
		t.Fatalf("a batch of 2 on an empty bucket: ok %v retry %v, want refused for at least 2 s of refill", ok, retry)
	}
	clock.advance(2 * time.Second)
	if ok, _ := l.AllowN(p, 2); !ok {
		t.Fatal("a batch of 2 refused after 2 s at 1/s")
	}
}
