package config

import (
	"strconv"
	"time"
)

// The liveness of HTTP sessions (stateful streamable /mcp and legacy /sse):
// see router/transport/session's liveness.
const (
	// DefaultSessionIdleTimeout closes a session that received no request,
	// and whose client answered no ping, for this long.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultSessionKeepAlive is the interval of the pings to idle
	// sessions whose client has a stream for them.
	DefaultSessionKeepAlive = 30 * time.Second
	// MinSessionKeepAlive keeps pings from becoming traffic of their own.
	MinSessionKeepAlive = time.Second
)

// fileSessions is the `sessions:` section.
type fileSessions struct {
	IdleTimeout *string `yaml:"idle_timeout"`
	KeepAlive   *string `yaml:"keepalive"`
	Shared      *bool   `yaml:"shared"`
}

// applyFileSessions copies the sessions section.
func (l *loader) applyFileSessions(f *fileConfig) {
	if s := f.Sessions; s != nil {
		l.fileDuration("sessions.idle_timeout", s.IdleTimeout, &l.cfg.SessionIdleTimeout)
		l.fileDuration("sessions.keepalive", s.KeepAlive, &l.cfg.SessionKeepAlive)
		if s.Shared != nil {
			l.cfg.SessionsShared = *s.Shared
			l.cfg.setSource("sessions.shared", SourceFile)
		}
	}
}

// applyEnvSessions overrides the file with the session variables.
func (l *loader) applyEnvSessions() {
	l.envDuration("sessions.idle_timeout", "AGENTS_MCP_SESSION_IDLE_TIMEOUT", &l.cfg.SessionIdleTimeout)
	l.envDuration("sessions.keepalive", "AGENTS_MCP_SESSION_KEEPALIVE", &l.cfg.SessionKeepAlive)
	if v := l.env("AGENTS_MCP_SESSIONS_SHARED"); v != "" {
		if b, err := strconv.ParseBool(v); err != nil {
			l.errorf("AGENTS_MCP_SESSIONS_SHARED", "invalid boolean %q", v)
		} else {
			l.cfg.SessionsShared = b
			l.cfg.setSource("sessions.shared", envSource("AGENTS_MCP_SESSIONS_SHARED"))
		}
	}
}

// validateSessions checks the session settings; bad is validate's reporter.
func (c *Config) validateSessions(bad func(name, format string, args ...any)) {
	if c.SessionIdleTimeout < 0 {
		bad("sessions.idle_timeout", "must be 0 (never) or a positive duration, got %s", c.SessionIdleTimeout)
	}
	if c.SessionKeepAlive < 0 || (c.SessionKeepAlive > 0 && c.SessionKeepAlive < MinSessionKeepAlive) {
		bad("sessions.keepalive", "must be 0 (no pings) or at least %s, got %s", MinSessionKeepAlive, c.SessionKeepAlive)
	}
	if c.SessionsShared && c.MongoURI == "" {
		bad("sessions.shared", "needs MONGODB_URI: replicas share sessions through MongoDB")
	}
}

// describeSessions adds the session settings to Describe.
func (c *Config) describeSessions(add func(name, value string)) {
	add("sessions.idle_timeout", c.SessionIdleTimeout.String())
	add("sessions.keepalive", c.SessionKeepAlive.String())
	add("sessions.shared", strconv.FormatBool(c.SessionsShared))
}
