package agents

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// Patterns built from words of a request or names of a tool's parameters
// (a parameter's name quoted into a pattern that finds "name: value") were
// compiled on every plan: a fifth of a one-step run_task's CPU time. They
// repeat from one task to the next (the same tools, the same parameters),
// so compiled patterns are kept, up to maxCachedPatterns of them, since
// upstreams and requests choose the words; past that a pattern is compiled
// each time as before.
const maxCachedPatterns = 4096

var (
	patternCache sync.Map // pattern → *regexp.Regexp
	cachedCount  atomic.Int64
)

// mustCompileCached is regexp.MustCompile for a pattern that recurs,
// compiled once (a *regexp.Regexp is safe for concurrent use).
func mustCompileCached(pattern string) *regexp.Regexp {
	if re, ok := patternCache.Load(pattern); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(pattern)
	if cachedCount.Load() < maxCachedPatterns {
		if _, loaded := patternCache.LoadOrStore(pattern, re); !loaded {
			cachedCount.Add(1)
		}
	}
	return re
}
