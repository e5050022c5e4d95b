package agents

import (
	"strings"
	"sync"
)

// GoalOf and FamilyOf are pure functions of a request's text, and a plan
// computes them for every one of the caller's recent learnings (family
// joining, same-shape candidates, the intent of each past request): the
// same few hundred texts on every task, most of a one-step run_task's CPU
// time when computed afresh. Their answers are kept, per function, for
// texts up to memoMaxText bytes and up to memoMaxEntries of them; past
// that the memo starts over (the texts in use come back on the next plan).
const (
	memoMaxEntries = 8192
	memoMaxText    = 1024
)

var (
	goalMemo   = &textMemo{}
	familyMemo = &textMemo{}
)

// textMemo keeps the answers of a pure function of a string.
type textMemo struct {
	mu sync.RWMutex
	m  map[string]string
}

// of returns f(text), from the memo when it holds text.
func (c *textMemo) of(text string, f func(string) string) string {
	if len(text) > memoMaxText {
		return f(text)
	}
	c.mu.RLock()
	out, ok := c.m[text]
	c.mu.RUnlock()
	if ok {
		return out
	}
	out = f(text)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= memoMaxEntries {
		c.m = make(map[string]string, 256)
	}
	c.m[strings.Clone(text)] = out // not a slice of a larger text kept alive
	c.mu.Unlock()
	return out
}
