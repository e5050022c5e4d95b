package config

import (
	"strconv"

	"github.com/agents-mcp/agents-mcp/remote"
)

// The bounds of limits.max_result_bytes, the most bytes one answer of an
// upstream (a tool result, a listing, an HTTP tool's body) may have.
const (
	DefaultMaxResultBytes = remote.DefaultMaxResultBytes
	// MinMaxResultBytes leaves room for the tools/list of a large
	// upstream.
	MinMaxResultBytes = 64 << 10
	// MaxMaxResultBytes keeps the bound a bound: each answer being read
	// costs about this much memory.
	MaxMaxResultBytes = 1 << 30
	// MaxCachedUpstreamReads bounds limits.cached_upstream_reads: each
	// entry may weigh up to 1 MiB.
	MaxCachedUpstreamReads = 100_000
)

// fileLimits is the `limits:` section.
type fileLimits struct {
	MaxResultBytes      *int64 `yaml:"max_result_bytes"`
	CachedUpstreamReads *int   `yaml:"cached_upstream_reads"`
}

// applyFileLimits copies the limits section.
func (l *loader) applyFileLimits(f *fileConfig) {
	if f.Limits != nil && f.Limits.MaxResultBytes != nil {
		l.cfg.MaxResultBytes = *f.Limits.MaxResultBytes
		l.cfg.setSource("limits.max_result_bytes", SourceFile)
	}
	if f.Limits != nil && f.Limits.CachedUpstreamReads != nil {
		l.cfg.CachedUpstreamReads = *f.Limits.CachedUpstreamReads
		l.cfg.setSource("limits.cached_upstream_reads", SourceFile)
	}
}

// applyEnvLimits overrides the file with the limits variables.
func (l *loader) applyEnvLimits() {
	const env = "AGENTS_MCP_MAX_RESULT_BYTES"
	if v := l.env(env); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil {
			l.errorf(env, "invalid integer %q", v)
		} else {
			l.cfg.MaxResultBytes = n
			l.cfg.setSource("limits.max_result_bytes", envSource(env))
		}
	}
	const readsEnv = "AGENTS_MCP_CACHED_UPSTREAM_READS"
	if v := l.env(readsEnv); v != "" {
		if n, err := strconv.Atoi(v); err != nil {
			l.errorf(readsEnv, "invalid integer %q", v)
		} else {
			l.cfg.CachedUpstreamReads = n
			l.cfg.setSource("limits.cached_upstream_reads", envSource(readsEnv))
		}
	}
}

// validateLimits checks the limits; bad is validate's reporter.
func (c *Config) validateLimits(bad func(name, format string, args ...any)) {
	if c.MaxResultBytes < MinMaxResultBytes || c.MaxResultBytes > MaxMaxResultBytes {
		bad("limits.max_result_bytes", "must be between %d and %d, got %d", MinMaxResultBytes, MaxMaxResultBytes, c.MaxResultBytes)
	}
	if c.CachedUpstreamReads < 0 || c.CachedUpstreamReads > MaxCachedUpstreamReads {
		bad("limits.cached_upstream_reads", "must be between 0 (off) and %d, got %d", MaxCachedUpstreamReads, c.CachedUpstreamReads)
	}
}

// describeLimits adds the limits to Describe.
func (c *Config) describeLimits(add func(name, value string)) {
	add("limits.max_result_bytes", strconv.FormatInt(c.MaxResultBytes, 10))
	add("limits.cached_upstream_reads", strconv.Itoa(c.CachedUpstreamReads))
}
