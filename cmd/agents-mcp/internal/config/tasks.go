package config

import (
	"encoding/base64"
	"strconv"
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
	// MinTaskRetention leaves a client that polls an MCP task (every
	// second at most) the time to read its result once it has ended.
	MinTaskRetention = time.Second
	// DefaultTaskInputWait is how long an MCP task waits in input_required
	// for an answer: as long as a run_task call waits for its task.
	DefaultTaskInputWait = 10 * time.Minute
	// MinTaskInputWait leaves a client that polls every few seconds the
	// time to see the question at all; MaxTaskInputWait caps the wait, so
	// that no client polls a question nobody answers for days.
	MinTaskInputWait = time.Second
	MaxTaskInputWait = 24 * time.Hour
)

// fileTasks is the `tasks:` section.
type fileTasks struct {
	LeaseTTL        *string `yaml:"lease_ttl"`
	ResumeInterval  *string `yaml:"resume_interval"`
	Retention       *string `yaml:"retention"`
	InputWait       *string `yaml:"input_wait"`
	SecretsKey      *string `yaml:"secrets_key"`
	RequestStateKey *string `yaml:"request_state_key"`
	RequestStateTTL *string `yaml:"request_state_ttl"`
}

// RequestStateKeySize is the size of tasks.request_state_key once
// decoded: an HMAC-SHA-256 key.
const RequestStateKeySize = 32

// DefaultRequestStateTTL is how long the requestState of an input_required
// answer is accepted: as long as an elicitation waits for the user.
const DefaultRequestStateTTL = 10 * time.Minute

// MinRequestStateTTL leaves a client time to ask its user at all.
const MinRequestStateTTL = time.Second

// RequestStateKeyBytes returns the decoded tasks.request_state_key, or nil
// when none is set. Validate has checked it.
func (c *Config) RequestStateKeyBytes() []byte {
	key, _ := decodeSecretsKey(c.RequestStateKey)
	return key
}

// SecretsKeySize is the size of tasks.secrets_key once decoded: AES-256.
const SecretsKeySize = 32

// SecretsKeyBytes returns the decoded tasks.secrets_key, or nil when none
// is set. Validate has checked it.
func (c *Config) SecretsKeyBytes() []byte {
	key, _ := decodeSecretsKey(c.SecretsKey)
	return key
}

// decodeSecretsKey decodes a key in standard or URL-safe base64, padded
// or not.
func decodeSecretsKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var key []byte
		if key, err = enc.DecodeString(s); err == nil {
			return key, nil
		}
	}
	return nil, err
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

// envFloat parses a number of the environment into dst, reporting a bad
// one under the variable's name.
func (l *loader) envFloat(name, env string, dst *float64) {
	v := l.env(env)
	if v == "" {
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		l.errorf(env, "invalid number %q", v)
		return
	}
	*dst = f
	l.cfg.setSource(name, envSource(env))
}

// envInt parses an integer of the environment into dst, reporting a bad
// one under the variable's name.
func (l *loader) envInt(name, env string, dst *int) {
	v := l.env(env)
	if v == "" {
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		l.errorf(env, "invalid integer %q", v)
		return
	}
	*dst = n
	l.cfg.setSource(name, envSource(env))
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
		l.fileDuration("tasks.retention", t.Retention, &l.cfg.TaskRetention)
		l.fileDuration("tasks.input_wait", t.InputWait, &l.cfg.TaskInputWait)
		l.fileString("tasks.secrets_key", t.SecretsKey, &l.cfg.SecretsKey)
		l.fileString("tasks.request_state_key", t.RequestStateKey, &l.cfg.RequestStateKey)
		l.fileDuration("tasks.request_state_ttl", t.RequestStateTTL, &l.cfg.RequestStateTTL)
	}
}

// applyEnvTasks overrides the file with the task variables.
func (l *loader) applyEnvTasks() {
	l.envDuration("tasks.lease_ttl", "AGENTS_MCP_TASK_LEASE_TTL", &l.cfg.TaskLeaseTTL)
	l.envDuration("tasks.resume_interval", "AGENTS_MCP_TASK_RESUME_INTERVAL", &l.cfg.TaskResumeInterval)
	l.envDuration("tasks.retention", "AGENTS_MCP_TASK_RETENTION", &l.cfg.TaskRetention)
	l.envDuration("tasks.input_wait", "AGENTS_MCP_TASK_INPUT_WAIT", &l.cfg.TaskInputWait)
	l.envString("tasks.secrets_key", "AGENTS_MCP_SECRETS_KEY", &l.cfg.SecretsKey)
	l.envString("tasks.request_state_key", "AGENTS_MCP_REQUEST_STATE_KEY", &l.cfg.RequestStateKey)
	l.envDuration("tasks.request_state_ttl", "AGENTS_MCP_REQUEST_STATE_TTL", &l.cfg.RequestStateTTL)
}

// validateTasks checks the task settings; bad is validate's reporter.
func (c *Config) validateTasks(bad func(name, format string, args ...any)) {
	if c.TaskLeaseTTL < MinTaskLeaseTTL {
		bad("tasks.lease_ttl", "must be at least %s, got %s", MinTaskLeaseTTL, c.TaskLeaseTTL)
	}
	if c.TaskResumeInterval < MinTaskResumeInterval {
		bad("tasks.resume_interval", "must be at least %s, got %s", MinTaskResumeInterval, c.TaskResumeInterval)
	}
	if c.TaskRetention < 0 || (c.TaskRetention > 0 && c.TaskRetention < MinTaskRetention) {
		bad("tasks.retention", "must be 0 (keep tasks forever) or at least %s, got %s", MinTaskRetention, c.TaskRetention)
	}
	if c.TaskInputWait < MinTaskInputWait || c.TaskInputWait > MaxTaskInputWait {
		bad("tasks.input_wait", "must be between %s and %s, got %s", MinTaskInputWait, MaxTaskInputWait, c.TaskInputWait)
	}
	if key, err := decodeSecretsKey(c.SecretsKey); err != nil {
		bad("tasks.secrets_key", "must be base64; generate one with: openssl rand -base64 32")
	} else if key != nil && len(key) != SecretsKeySize {
		bad("tasks.secrets_key", "must decode to %d bytes, got %d; generate one with: openssl rand -base64 32", SecretsKeySize, len(key))
	}
	if key, err := decodeSecretsKey(c.RequestStateKey); err != nil {
		bad("tasks.request_state_key", "must be base64; generate one with: openssl rand -base64 32")
	} else if key != nil && len(key) != RequestStateKeySize {
		bad("tasks.request_state_key", "must decode to %d bytes, got %d; generate one with: openssl rand -base64 32", RequestStateKeySize, len(key))
	}
	if c.RequestStateTTL < MinRequestStateTTL {
		bad("tasks.request_state_ttl", "must be at least %s, got %s", MinRequestStateTTL, c.RequestStateTTL)
	}
}

// describeTasks adds the task settings to Describe.
func (c *Config) describeTasks(add func(name, value string)) {
	add("tasks.lease_ttl", c.TaskLeaseTTL.String())
	add("tasks.resume_interval", c.TaskResumeInterval.String())
	add("tasks.retention", c.TaskRetention.String())
	add("tasks.input_wait", c.TaskInputWait.String())
	add("tasks.secrets_key", redactSecret(c.SecretsKey))
	add("tasks.request_state_key", redactSecret(c.RequestStateKey))
	add("tasks.request_state_ttl", c.RequestStateTTL.String())
}
