package main

// This file counts what tools/list answers cost clients' models, per
// catalog mode: Prometheus counters and the figures of the admin API's
// GET /tools/listing-cost.

import (
	"sync"

	"github.com/agents-mcp/agents-mcp/api/admin"

	"github.com/prometheus/client_golang/prometheus"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router"
)

// listingCosts counts the tools/list pages answered, per catalog mode.
// The zero value counts without metrics; register adds them.
type listingCosts struct {
	mu      sync.Mutex
	perMode map[agentsmcp.CatalogMode]*listingCount

	lists, bytes, tokens *prometheus.CounterVec
}

// listingCount is what the pages of one mode cost so far.
type listingCount struct {
	Pages  int64                  `json:"pages"`
	Bytes  int64                  `json:"bytes"`
	Tokens int64                  `json:"tokens"`
	Last   router.ToolsListRecord `json:"last"`
}

// register adds the counters to reg.
func (l *listingCosts) register(reg prometheus.Registerer) error {
	l.lists = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_mcp_tools_list_pages_total",
		Help: "Pages of tools/list answered to clients, by catalog mode."}, []string{"mode"})
	l.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_mcp_tools_list_bytes_total",
		Help: "Bytes of the tools of the tools/list pages answered, by catalog mode."}, []string{"mode"})
	l.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_mcp_tools_list_tokens_total",
		Help: "Approximate tokens (one per 4 bytes) of the tools of the tools/list pages answered, by catalog mode."}, []string{"mode"})
	for _, c := range []prometheus.Collector{l.lists, l.bytes, l.tokens} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// record is the router's OnToolsList.
func (l *listingCosts) record(r router.ToolsListRecord) {
	l.mu.Lock()
	if l.perMode == nil {
		l.perMode = map[agentsmcp.CatalogMode]*listingCount{}
	}
	c := l.perMode[r.Mode]
	if c == nil {
		c = &listingCount{}
		l.perMode[r.Mode] = c
	}
	c.Pages++
	c.Bytes += int64(r.Bytes)
	c.Tokens += int64(r.Tokens)
	c.Last = r
	l.mu.Unlock()
	if l.lists != nil {
		mode := string(r.Mode)
		l.lists.WithLabelValues(mode).Inc()
		l.bytes.WithLabelValues(mode).Add(float64(r.Bytes))
		l.tokens.WithLabelValues(mode).Add(float64(r.Tokens))
	}
}

// counts returns a copy of the counts per mode.
func (l *listingCosts) counts() map[agentsmcp.CatalogMode]listingCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[agentsmcp.CatalogMode]listingCount, len(l.perMode))
	for m, c := range l.perMode {
		out[m] = *c
	}
	return out
}

// adminListingCosts is GET /tools/listing-cost: the router's figures now
// for a caller without an allowlist, and the counts of what was answered.
type adminListingCosts struct {
	router *router.Router
	counts *listingCosts
}

func (a adminListingCosts) ListingCosts() admin.ListingCostPage {
	counts := a.counts.counts()
	now := func(mode agentsmcp.CatalogMode) (int, int, int) {
		c := a.router.ListingCost(nil, mode)
		return c.Tools, c.Bytes, c.Tokens
	}
	page := admin.NewListingCostPage("approximate: one token per 4 bytes of JSON (OpenAI's rule of thumb; JSON with schemas is nearer one per 3 to 3.5 bytes)",
		now, func(mode agentsmcp.CatalogMode) admin.ListedCount {
			c := counts[mode]
			return admin.ListedCount{Pages: c.Pages, Bytes: c.Bytes, Tokens: c.Tokens}
		})
	page.VirtualServers = []admin.VirtualServerCost{}
	for _, vs := range a.router.VirtualServers() {
		full, disc, ok := a.router.VirtualListingCost(vs.Name)
		if !ok {
			continue // removed meanwhile
		}
		page.VirtualServers = append(page.VirtualServers, admin.VirtualServerCost{Name: vs.Name, Mode: string(vs.CatalogMode),
			Full:      admin.ToolsCount{Tools: full.Tools, Bytes: full.Bytes, Tokens: full.Tokens},
			Discovery: admin.ToolsCount{Tools: disc.Tools, Bytes: disc.Bytes, Tokens: disc.Tokens}})
	}
	return page
}
