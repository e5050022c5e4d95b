package storedform

// This file applies the limits the root's types document when they are
// stored: sizes as quotas count them, the bounded task history, cut texts,
// and the derived id of a plan pattern.

import (
	"crypto/sha256"
	"encoding/json"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TaskBytes is t's size as MaxTaskBytes and the task quotas count it;
// stores record it at each write.
func TaskBytes(t *agentsmcp.Task) int64 {
	size := len(t.Request) + len(t.Inputs) + len(t.Error)
	for i := range t.Steps {
		s := &t.Steps[i]
		size += len(s.StepID) + len(s.Output) + len(s.Error) + len(s.RepairedTool) + len(s.RepairedArguments)
	}
	for _, e := range TrimHistory(t.History) {
		size += len(e.Type) + len(e.StepID) + len(e.Message)
	}
	return int64(size)
}

// InsightBytes is the size of what in holds, as the insight quotas count
// it: its text and source and the entries of its lists.
func InsightBytes(in *agentsmcp.Insight) int64 {
	size := len(in.Text) + len(in.Source)
	for _, v := range in.AppliesTo {
		size += len(v)
	}
	for _, v := range in.Evidence {
		size += len(v)
	}
	return int64(size)
}

// AddEvent appends an event to t's history, its Message cut to fit
// agentsmcp.MaxTaskEventBytes, and drops the oldest events beyond agentsmcp.MaxTaskHistory.
func AddEvent(t *agentsmcp.Task, e agentsmcp.TaskEvent) {
	if room := agentsmcp.MaxTaskEventBytes - len(e.Type) - len(e.StepID); len(e.Message) > room {
		e.Message = TruncateUTF8(e.Message, max(room, 0))
	}
	t.History = TrimHistory(append(t.History, e))
}

// TrimHistory returns the newest agentsmcp.MaxTaskHistory events of h (h itself
// when it is short enough, a copy otherwise). When the events dropped held
// a wait for an answer, the oldest event kept gives way to one that
// records the longest of those waits (see [Waits]).
func TrimHistory(h []agentsmcp.TaskEvent) []agentsmcp.TaskEvent {
	if len(h) <= agentsmcp.MaxTaskHistory {
		return h
	}
	return trimKeepingWaits(h)
}

// TruncateUTF8 cuts s to at most n bytes without splitting a character.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// OutboxError applies agentsmcp.MaxOutboxErrorBytes to an error text, on a UTF-8
// boundary.
func OutboxError(s string) string { return TruncateUTF8(s, agentsmcp.MaxOutboxErrorBytes) }

// PatternID is the id of principal's plan pattern (goal, steps): "pat_" and
// 128 bits of SHA-256 over JSON ([goal, steps...] for the anonymous
// principal, {principal, goal, steps} otherwise), so it is the pattern's
// key in every store. Stored data: the derivation must never change.
func PatternID(principal, goal string, steps []string) string {
	var b []byte
	var err error
	if agentsmcp.MemoryOwner(principal) == agentsmcp.AnonymousPrincipal {
		b, err = json.Marshal(append([]string{goal}, steps...))
	} else {
		if steps == nil {
			steps = []string{}
		}
		b, err = json.Marshal(struct {
			Principal string   `json:"principal"`
			Goal      string   `json:"goal"`
			Steps     []string `json:"steps"`
		}{principal, goal, steps})
	}
	if err != nil {
		panic(err) // strings always marshal
	}
	sum := sha256.Sum256(b)
	return agentsmcp.PatternIDPrefix + "_" + ulid.ULID(sum[:16]).String()
}

// PageSize applies [agentsmcp.DefaultPageSize] and [agentsmcp.MaxPageSize]
// to a Find* method's limit.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return agentsmcp.DefaultPageSize
	case limit > agentsmcp.MaxPageSize:
		return agentsmcp.MaxPageSize
	}
	return limit
}
