// Package vectorsync keeps a vector index in step with the memory store: a
// [Syncer] drains the store's outbox (see [agentsmcp.OutboxService]) into
// an [agentsmcp.VectorIndex], and reconciles the index with the store when
// it may have lost writes (an embedded index after a crash) or been built
// from nothing (a new embedder, a corrupt file, `agents-mcp reindex`).
//
// The store is the source of truth. An outbox entry names a document, never
// its text: processing reads the document as the store holds it now, so
// retries and duplicates converge, and a document that is gone is skipped.
// A failed embedder or index call never reaches the writer of the document:
// the entry is retried with exponential backoff until it succeeds.
package vectorsync

import (
	"context"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Document is what the index holds of one stored document: the text that
// is embedded and the metadata that filters match.
type Document struct {
	ID       string
	Text     string
	Metadata map[string]string
}

// Source reads the current state of one namespace's documents.
type Source struct {
	Namespace string
	// Load returns the document, or an ENOTFOUND error when the store no
	// longer (or not yet) holds it.
	Load func(ctx context.Context, id string) (*Document, error)
}

// Metadata keys set on indexed documents, for filters.
const (
	MetaOutcome = "outcome" // learnings: the task's Outcome
	MetaType    = "type"    // insights: the InsightType
)

// Learnings indexes a learning by its request and generalised goal: what a
// later, similar request will resemble.
func Learnings(s agentsmcp.LearningService) Source {
	return Source{Namespace: agentsmcp.NamespaceLearnings, Load: func(ctx context.Context, id string) (*Document, error) {
		l, err := s.FindLearningByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return &Document{ID: l.ID, Text: LearningText(l), Metadata: map[string]string{MetaOutcome: string(l.Outcome)}}, nil
	}}
}

// LearningText is the embedded text of a learning.
func LearningText(l *agentsmcp.Learning) string { return joinText(l.Query, l.Goal) }

// Insights indexes an insight by its text and what it applies to.
func Insights(s agentsmcp.InsightService) Source {
	return Source{Namespace: agentsmcp.NamespaceInsights, Load: func(ctx context.Context, id string) (*Document, error) {
		in, err := s.FindInsightByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return &Document{ID: in.ID, Text: InsightText(in), Metadata: map[string]string{MetaType: string(in.Type)}}, nil
	}}
}

// InsightText is the embedded text of an insight.
func InsightText(in *agentsmcp.Insight) string {
	return joinText(in.Text, strings.Join(in.AppliesTo, " "))
}

// Patterns indexes a plan pattern by its goal.
func Patterns(s agentsmcp.PatternService) Source {
	return Source{Namespace: agentsmcp.NamespacePatterns, Load: func(ctx context.Context, id string) (*Document, error) {
		p, err := s.FindPatternByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return &Document{ID: p.ID, Text: PatternText(p)}, nil
	}}
}

// PatternText is the embedded text of a plan pattern.
func PatternText(p *agentsmcp.PlanPattern) string { return p.Goal }

func joinText(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p)
	}
	return b.String()
}
