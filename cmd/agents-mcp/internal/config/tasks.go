package config

import (
	"strings"
	"time"
)

// Defaults and lower bounds of the task executor's lease settings. The
// defaults are the executor's own (agents.ExecutorOptions).
const (
	DefaultTaskLeaseTTL       = 30 * time.Second
	DefaultTaskResumeInterval = 5 * time.Second
	// MinTaskLeaseTTL keeps a renewal (every third of the TTL) well above
	// the time one store round trip takes.
	MinTaskLeaseTTL = time.Second
	// MinTaskResumeInterval keeps the resume loop from polling the store
	// in a busy loop.
	MinTaskResumeInterval = 100 * time.Millisecond
)

// fileTasks is the `tasks:` section.
type fileTasks struct {
	LeaseTTL       *string `yaml:"lease_ttl"`
	ResumeInterval *string `yaml:"resume_interval"`
}

// fileDuration parses a duration of the file into dst, reporting a bad one
// under its key.
func (l *loader) fileDuration(name string, v *string, dst *time.Duration) {
	if v == nil {
		return
	}
	d, err := time.ParseDuration(strings.TrimSpace(*v))
	if err != nil {
		l.errorf(name, "invalid duration %q", *v)
		return
	}
	*dst = d
	l.cfg.setSource(name, SourceFile)
}

// envDuration parses a duration of the environment into dst, reporting a
// bad one under the variable's name.
func (l *loader) envDuration(name, env string, dst *time.Duration) {
	v := l.env(env)
	if v == "" {
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		l.errorf(env, "invalid duration %q", v)
		return
	}
	*dst = d
	l.cfg.setSource(name, envSource(env))
}

// applyFileTasks copies the tasks section.
func (l *loader) applyFileTasks(f *fileConfig) {
	if t := f.Tasks; t != nil {
		l.fileDuration("tasks.lease_ttl", t.LeaseTTL, &l.cfg.TaskLeaseTTL)
		l.fileDuration("tasks.resume_interval", t.ResumeInterval, &l.cfg.TaskResumeInterval)
	}
}

// applyEnvTasks overrides the file with the task variables.
func (l *loader) applyEnvTasks() {
	l.envDuration("tasks.lease_ttl", "AGENTS_MCP_TASK_LEASE_TTL", &l.cfg.TaskLeaseTTL)
	l.envDuration("tasks.resume_interval", "AGENTS_MCP_TASK_RESUME_INTERVAL", &l.cfg.TaskResumeInterval)
}

// validateTasks checks the task settings; bad is validate's reporter.
func (c *Config) validateTasks(bad func(name, format string, args ...any)) {
	if c.TaskLeaseTTL < MinTaskLeaseTTL {
		bad("tasks.lease_ttl", "must be at least %s, got %s", MinTaskLeaseTTL, c.TaskLeaseTTL)
	}
	if c.TaskResumeInterval < MinTaskResumeInterval {
		bad("tasks.resume_interval", "must be at least %s, got %s", MinTaskResumeInterval, c.TaskResumeInterval)
	}
}

// describeTasks adds the task settings to Describe.
func (c *Config) describeTasks(add func(name, value string)) {
	add("tasks.lease_ttl", c.TaskLeaseTTL.String())
	add("tasks.resume_interval", c.TaskResumeInterval.String())
}
