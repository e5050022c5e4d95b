package admin

import (
	"context"
	"strconv"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file holds pattern filtering and offset paging; q without a Recall
// is answered by mcptools' Lexical* functions (Recall's own fallback).

// maxFilterRounds bounds the store pages one filtered page may read; a
// page short of its limit, with a next cursor, is the result past it.
const maxFilterRounds = 10

// filterPatterns pages the store's patterns, keeping those that reach
// minRate. Each round asks the store for exactly the items still missing,
// so the store's cursor after the last round resumes right after the last
// pattern examined.
func filterPatterns(ctx context.Context, s agentsmcp.PatternService, f agentsmcp.PatternFilter, limit int, minRate float64) ([]*agentsmcp.PlanPattern, string, error) {
	out := []*agentsmcp.PlanPattern{}
	cursor := f.Cursor
	for round := 0; round < maxFilterRounds && len(out) < limit; round++ {
		f.Cursor, f.Limit = cursor, limit-len(out)
		ps, next, err := s.FindPatterns(ctx, f)
		if err != nil {
			return nil, "", err
		}
		for _, p := range ps {
			if minRate == 0 || p.SuccessRate() >= minRate {
				out = append(out, p)
			}
		}
		cursor = next
		if next == "" {
			break
		}
	}
	return out, cursor, nil
}

// offsetCursorPrefix marks cursors that are offsets into a list computed
// whole per request (tool performance, upstreams, operations).
const offsetCursorPrefix = "o"

// maxOffset bounds offset cursors to what a list can hold.
const maxOffset = 1 << 30

func offsetPageOf(p *params) (rankPage, error) {
	limit, err := p.limit()
	if err != nil {
		return rankPage{}, err
	}
	pg := rankPage{limit: storedform.PageSize(limit)}
	if c := p.str("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, offsetCursorPrefix))
		if !strings.HasPrefix(c, offsetCursorPrefix) || err != nil || n < 1 || n > maxOffset {
			return rankPage{}, invalidf("cursor %q is not one that this list returned", storedform.TruncateUTF8(c, 64))
		}
		pg.offset = n
	}
	return pg, nil
}

// cutOffset is cut for offset pages.
func (pg rankPage) cutOffset(n int) (from, to int, next string) {
	from, to = min(pg.offset, n), min(pg.offset+pg.limit, n)
	if to < n {
		next = offsetCursorPrefix + strconv.Itoa(to)
	}
	return from, to, next
}
