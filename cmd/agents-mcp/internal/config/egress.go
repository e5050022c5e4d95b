package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agents-mcp/agents-mcp/egress"
)

// fileEgress is the `egress:` section: hosts, *.domains, addresses and
// CIDRs whose default refusal is lifted (allow) or that are refused too
// (deny).
type fileEgress struct {
	Allow *[]string `yaml:"allow"`
	Deny  *[]string `yaml:"deny"`
}

// applyFileEgress copies the egress section.
func (l *loader) applyFileEgress(f *fileConfig) {
	if e := f.Egress; e != nil {
		l.fileList("egress.allow", e.Allow, &l.cfg.Egress.Allow)
		l.fileList("egress.deny", e.Deny, &l.cfg.Egress.Deny)
	}
}

// applyEnvEgress overrides the file with the egress variables
// (comma-separated lists).
func (l *loader) applyEnvEgress() {
	l.envList("egress.allow", "AGENTS_MCP_EGRESS_ALLOW", &l.cfg.Egress.Allow)
	l.envList("egress.deny", "AGENTS_MCP_EGRESS_DENY", &l.cfg.Egress.Deny)
}

// validateEgress checks the egress entries, and the URLs of the file's
// upstreams and http_tools sources against the policy they make (names and literal addresses;
// the pool checks resolved addresses and the listen address when it
// starts them; httptools when it loads them), so that a refused URL stops
// start-up with its field
// named. bad is validate's reporter.
func (c *Config) validateEgress(bad func(name, format string, args ...any)) {
	policy, err := egress.New(c.Egress)
	if err != nil {
		for _, p := range c.Egress.Problems() {
			list, _, _ := strings.Cut(p, "[") // "allow" or "deny"
			bad("egress."+list, "%s", p)
		}
		return
	}
	for i, u := range c.Upstreams {
		if u.URL == "" {
			continue
		}
		parsed, err := url.Parse(u.URL)
		if err != nil {
			continue // reported by the upstream's own validation
		}
		if err := policy.CheckTarget(parsed); err != nil && egress.IsRefused(err) {
			bad(fmt.Sprintf("upstreams[%d].url", i), "%s: %v", redactURL(u.URL), err)
		}
	}
	for i, s := range c.HTTPTools {
		for _, f := range [][2]string{{"base_url", s.BaseURL}, {"openapi", s.OpenAPI}} {
			field, raw := f[0], f[1]
			parsed, err := url.Parse(raw)
			if raw == "" || err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") {
				continue // not a URL (an openapi file), or reported by the source's own validation
			}
			if err := policy.CheckTarget(parsed); err != nil && egress.IsRefused(err) {
				bad(fmt.Sprintf("http_tools[%d].%s", i, field), "%s: %v", redactURL(raw), err)
			}
		}
	}
}
