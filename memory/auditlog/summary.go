package auditlog

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// DefaultSummaryWindow is the window of a [Summarizer] made with zero.
const DefaultSummaryWindow = time.Minute

// maxSummaryKeys bounds the keys a Summarizer follows at once; past it,
// new keys share one summary under [OtherSources].
const maxSummaryKeys = 10_000

// SummaryFirst is how many entries of a key are written as they come in
// each window, before the others are counted: enough that a person who
// mistyped a key finds each try at once.
const SummaryFirst = 5

// OtherSources is the key of the entries whose own key found the
// Summarizer full.
const OtherSources = "(other sources)"

// Summarizer keeps a flood of like entries (failed authentications from one
// address) from flooding the trail, while the trail still tells how many
// there were. Of the entries recorded under one key within one window, the
// first is written at once, as it came; the others are counted, and when
// the window ends one summary entry is written for them: the last of them,
// with its Error saying how many it stands for and its Arguments
// {"source": key, "count": N, "windowSeconds": W} (the first has count 1).
// So the trail holds at
// most two entries per key and window, however many came.
//
// Summaries are written by [Summarizer.Run]; when its context ends it
// writes the summaries of the windows still open. Record never blocks.
type Summarizer struct {
	rec     *Recorder
	window  time.Duration
	now     func() time.Time
	maxKeys int

	mu   sync.Mutex
	open map[string]*summary
}

type summary struct {
	start time.Time
	first int                   // entries written as they came
	more  int                   // entries counted after those
	last  *agentsmcp.AuditEntry // the latest of them
	mixed bool                  // they named more than one principal
}

// NewSummarizer returns a Summarizer writing to rec, with windows of
// window (zero: [DefaultSummaryWindow]).
func NewSummarizer(rec *Recorder, window time.Duration) *Summarizer {
	if window <= 0 {
		window = DefaultSummaryWindow
	}
	return &Summarizer{rec: rec, window: window, now: time.Now, maxKeys: maxSummaryKeys, open: make(map[string]*summary)}
}

// Record writes e, or counts it into the summary of key's window. Like
// [Recorder.Record], it takes ownership of e.
func (s *Summarizer) Record(key string, e *agentsmcp.AuditEntry) {
	now := s.now()
	s.mu.Lock()
	sum := s.open[key]
	if sum == nil && len(s.open) >= s.maxKeys {
		key = OtherSources
		sum = s.open[key]
	}
	if sum != nil && now.Sub(sum.start) < s.window {
		if sum.first >= SummaryFirst {
			if sum.last != nil && sum.last.Principal != e.Principal {
				sum.mixed = true
			}
			sum.more++
			sum.last = e
			s.mu.Unlock()
			return
		}
		sum.first++
		s.mu.Unlock()
		e.Arguments = s.arguments(key, 1)
		s.rec.Record(e)
		return
	}
	var ended *agentsmcp.AuditEntry
	if sum != nil {
		ended = s.summaryOf(key, sum)
	}
	s.open[key] = &summary{start: now, first: 1}
	s.mu.Unlock()
	if ended != nil {
		s.rec.Record(ended)
	}
	e.Arguments = s.arguments(key, 1)
	s.rec.Record(e)
}

// summaryOf is the entry that stands for sum's counted entries, nil when
// there were none; s.mu is held.
func (s *Summarizer) summaryOf(key string, sum *summary) *agentsmcp.AuditEntry {
	if sum.more == 0 {
		return nil
	}
	e := sum.last
	if sum.mixed {
		e.Principal = "(several)"
	}
	e.At = time.Time{} // stamped when recorded: the end of the window
	e.Error = fmt.Sprintf("%d more like this from %s within %s; the last: %s", sum.more, key, s.window, e.Error)
	e.Arguments = s.arguments(key, sum.more)
	return e
}

// arguments are the Arguments of an entry that stands for count entries
// from source.
func (s *Summarizer) arguments(source string, count int) json.RawMessage {
	b, _ := json.Marshal(struct {
		Source        string  `json:"source"`
		Count         int     `json:"count"`
		WindowSeconds float64 `json:"windowSeconds"`
	}{source, count, s.window.Seconds()})
	return b
}

// Run writes the summaries of the windows that have ended, a few times a
// window, until ctx ends; then those of the windows still open.
func (s *Summarizer) Run(ctx context.Context) {
	t := time.NewTicker(s.window / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.flush(time.Time{})
			return
		case <-t.C:
			s.flush(s.now())
		}
	}
}

// flush writes the summaries of the windows that ended by now, or of
// every window when now is zero.
func (s *Summarizer) flush(now time.Time) {
	var ended []*agentsmcp.AuditEntry
	s.mu.Lock()
	for key, sum := range s.open {
		if now.IsZero() || now.Sub(sum.start) >= s.window {
			if e := s.summaryOf(key, sum); e != nil {
				ended = append(ended, e)
			}
			delete(s.open, key)
		}
	}
	s.mu.Unlock()
	for _, e := range ended {
		s.rec.Record(e)
	}
}
