package config

import (
	"strings"
	"testing"
	"time"
)

func TestTaskLeaseSettings(t *testing.T) {
	file := writeYAML(t, "tasks:\n  lease_ttl: 2s\n  resume_interval: 250ms\n")
	tests := []struct {
		name                   string
		args                   []string
		env                    map[string]string
		wantTTL, wantResume    time.Duration
		wantTTLSrc, wantResSrc Source
	}{
		{
			name:    "defaults",
			wantTTL: 30 * time.Second, wantResume: 5 * time.Second,
			wantTTLSrc: SourceDefault, wantResSrc: SourceDefault,
		},
		{
			name:    "file",
			args:    []string{"--config", file},
			wantTTL: 2 * time.Second, wantResume: 250 * time.Millisecond,
			wantTTLSrc: SourceFile, wantResSrc: SourceFile,
		},
		{
			name:    "env over file",
			args:    []string{"--config", file},
			env:     map[string]string{"AGENTS_MCP_TASK_LEASE_TTL": " 1m ", "AGENTS_MCP_TASK_RESUME_INTERVAL": "100ms"},
			wantTTL: time.Minute, wantResume: 100 * time.Millisecond,
			wantTTLSrc: "env:AGENTS_MCP_TASK_LEASE_TTL", wantResSrc: "env:AGENTS_MCP_TASK_RESUME_INTERVAL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, tt.env)
			if c.TaskLeaseTTL != tt.wantTTL || c.Source("tasks.lease_ttl") != tt.wantTTLSrc {
				t.Errorf("TaskLeaseTTL = %s from %q, want %s from %q", c.TaskLeaseTTL, c.Source("tasks.lease_ttl"), tt.wantTTL, tt.wantTTLSrc)
			}
			if c.TaskResumeInterval != tt.wantResume || c.Source("tasks.resume_interval") != tt.wantResSrc {
				t.Errorf("TaskResumeInterval = %s from %q, want %s from %q", c.TaskResumeInterval, c.Source("tasks.resume_interval"), tt.wantResume, tt.wantResSrc)
			}
			described := map[string]Setting{}
			for _, s := range c.Describe() {
				described[s.Name] = s
			}
			if s := described["tasks.lease_ttl"]; s.Value != tt.wantTTL.String() || s.Source != tt.wantTTLSrc {
				t.Errorf("Describe tasks.lease_ttl = %+v", s)
			}
			if s := described["tasks.resume_interval"]; s.Value != tt.wantResume.String() || s.Source != tt.wantResSrc {
				t.Errorf("Describe tasks.resume_interval = %+v", s)
			}
		})
	}
}

func TestTaskLeaseSettingsRejected(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // every one must be in the error
	}{
		{
			name: "below the minimums in the file",
			yaml: "tasks: {lease_ttl: 999ms, resume_interval: 99ms}\n",
			want: []string{"tasks.lease_ttl: must be at least 1s, got 999ms (from file)", "tasks.resume_interval: must be at least 100ms, got 99ms (from file)"},
		},
		{
			name: "below the minimums in the environment",
			env:  map[string]string{"AGENTS_MCP_TASK_LEASE_TTL": "0s", "AGENTS_MCP_TASK_RESUME_INTERVAL": "-1s"},
			want: []string{"tasks.lease_ttl: must be at least 1s, got 0s (from env:AGENTS_MCP_TASK_LEASE_TTL)", "tasks.resume_interval: must be at least 100ms, got -1s (from env:AGENTS_MCP_TASK_RESUME_INTERVAL)"},
		},
		{
			name: "not durations",
			yaml: "tasks: {lease_ttl: soon}\n",
			env:  map[string]string{"AGENTS_MCP_TASK_RESUME_INTERVAL": "5"},
			want: []string{`tasks.lease_ttl: invalid duration "soon"`, `AGENTS_MCP_TASK_RESUME_INTERVAL: invalid duration "5"`},
		},
		{
			name: "unknown key",
			yaml: "tasks: {lease: 2s}\n",
			want: []string{`unknown key "lease" (in tasks)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.yaml != "" {
				args = []string{"--config", writeYAML(t, tt.yaml)}
			}
			_, err := Load(args, envOf(tt.env))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestSecretsKeySetting(t *testing.T) {
	const key = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=" // 32 bytes
	c := mustLoad(t, nil, map[string]string{"AGENTS_MCP_SECRETS_KEY": key})
	if got := c.SecretsKeyBytes(); len(got) != SecretsKeySize || c.Source("tasks.secrets_key") != "env:AGENTS_MCP_SECRETS_KEY" {
		t.Errorf("key of %d bytes from %q", len(got), c.Source("tasks.secrets_key"))
	}
	if strings.Contains(c.String(), key) || strings.Contains(c.String(), key[:12]) {
		t.Errorf("the key is printed: %s", c.String())
	}
	c = mustLoad(t, []string{"--config", writeYAML(t, "tasks:\n  secrets_key: "+key+"\n")}, nil)
	if len(c.SecretsKeyBytes()) != SecretsKeySize || c.Source("tasks.secrets_key") != SourceFile {
		t.Errorf("from the file: %d bytes from %q", len(c.SecretsKeyBytes()), c.Source("tasks.secrets_key"))
	}
	if c := mustLoad(t, nil, nil); c.SecretsKeyBytes() != nil {
		t.Errorf("no key set, got %d bytes", len(c.SecretsKeyBytes()))
	}
	for _, bad := range []string{"c2hvcnQ=", "not base64 !!"} {
		_, err := Load(nil, envOf(map[string]string{"AGENTS_MCP_SECRETS_KEY": bad}))
		if err == nil || !strings.Contains(err.Error(), "tasks.secrets_key") {
			t.Errorf("key %q: %v, want an error naming tasks.secrets_key", bad, err)
		}
	}
}

func TestRequestStateSettings(t *testing.T) {
	const key = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=" // 32 bytes
	c := mustLoad(t, nil, map[string]string{"AGENTS_MCP_REQUEST_STATE_KEY": key, "AGENTS_MCP_REQUEST_STATE_TTL": "90s"})
	if got := c.RequestStateKeyBytes(); len(got) != RequestStateKeySize || c.Source("tasks.request_state_key") != "env:AGENTS_MCP_REQUEST_STATE_KEY" {
		t.Errorf("key of %d bytes from %q", len(got), c.Source("tasks.request_state_key"))
	}
	if c.RequestStateTTL != 90*time.Second || c.Source("tasks.request_state_ttl") != "env:AGENTS_MCP_REQUEST_STATE_TTL" {
		t.Errorf("ttl %s from %q", c.RequestStateTTL, c.Source("tasks.request_state_ttl"))
	}
	if strings.Contains(c.String(), key) || strings.Contains(c.String(), key[:12]) {
		t.Errorf("the key is printed: %s", c.String())
	}
	c = mustLoad(t, []string{"--config", writeYAML(t, "tasks:\n  request_state_key: "+key+"\n  request_state_ttl: 2m\n")}, nil)
	if len(c.RequestStateKeyBytes()) != RequestStateKeySize || c.Source("tasks.request_state_key") != SourceFile || c.RequestStateTTL != 2*time.Minute {
		t.Errorf("from the file: %d bytes from %q, ttl %s", len(c.RequestStateKeyBytes()), c.Source("tasks.request_state_key"), c.RequestStateTTL)
	}
	if c := mustLoad(t, nil, nil); c.RequestStateKeyBytes() != nil || c.RequestStateTTL != DefaultRequestStateTTL {
		t.Errorf("defaults: %d bytes, ttl %s", len(c.RequestStateKeyBytes()), c.RequestStateTTL)
	}
	for env, want := range map[string]string{
		"AGENTS_MCP_REQUEST_STATE_KEY=c2hvcnQ=":     "tasks.request_state_key: must decode to 32 bytes",
		"AGENTS_MCP_REQUEST_STATE_KEY=not base64 !": "tasks.request_state_key: must be base64",
		"AGENTS_MCP_REQUEST_STATE_TTL=500ms":        "tasks.request_state_ttl: must be at least 1s",
	} {
		k, v, _ := strings.Cut(env, "=")
		_, err := Load(nil, envOf(map[string]string{k: v}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", env, err, want)
		}
	}
}

func TestTaskRetentionSetting(t *testing.T) {
	if c := mustLoad(t, nil, nil); c.TaskRetention != 0 || !strings.Contains(c.String(), "tasks.retention") {
		t.Errorf("default: %s, want 0 (keep forever), and described in %s", c.TaskRetention, c.String())
	}
	c := mustLoad(t, nil, map[string]string{"AGENTS_MCP_TASK_RETENTION": "168h"})
	if c.TaskRetention != 168*time.Hour || c.Source("tasks.retention") != "env:AGENTS_MCP_TASK_RETENTION" {
		t.Errorf("env: %s from %q", c.TaskRetention, c.Source("tasks.retention"))
	}
	c = mustLoad(t, []string{"--config", writeYAML(t, "tasks:\n  retention: 24h\n")}, nil)
	if c.TaskRetention != 24*time.Hour || c.Source("tasks.retention") != SourceFile {
		t.Errorf("file: %s from %q", c.TaskRetention, c.Source("tasks.retention"))
	}
	for _, v := range []string{"-1s", "500ms"} {
		_, err := Load(nil, envOf(map[string]string{"AGENTS_MCP_TASK_RETENTION": v}))
		if err == nil || !strings.Contains(err.Error(), "tasks.retention: must be 0 (keep tasks forever) or at least 1s") {
			t.Errorf("retention %s: %v", v, err)
		}
	}
}

func TestTaskInputWaitSetting(t *testing.T) {
	if c := mustLoad(t, nil, nil); c.TaskInputWait != DefaultTaskInputWait || !strings.Contains(c.String(), "tasks.input_wait") {
		t.Errorf("default: %s, want %s, and described in %s", c.TaskInputWait, DefaultTaskInputWait, c.String())
	}
	c := mustLoad(t, nil, map[string]string{"AGENTS_MCP_TASK_INPUT_WAIT": "90s"})
	if c.TaskInputWait != 90*time.Second || c.Source("tasks.input_wait") != "env:AGENTS_MCP_TASK_INPUT_WAIT" {
		t.Errorf("env: %s from %q", c.TaskInputWait, c.Source("tasks.input_wait"))
	}
	c = mustLoad(t, []string{"--config", writeYAML(t, "tasks:\n  input_wait: 1h\n")}, nil)
	if c.TaskInputWait != time.Hour || c.Source("tasks.input_wait") != SourceFile {
		t.Errorf("file: %s from %q", c.TaskInputWait, c.Source("tasks.input_wait"))
	}
	for _, v := range []string{"0", "-1s", "500ms", "25h"} {
		_, err := Load(nil, envOf(map[string]string{"AGENTS_MCP_TASK_INPUT_WAIT": v}))
		if err == nil || !strings.Contains(err.Error(), "tasks.input_wait: must be between 1s and 24h0m0s") {
			t.Errorf("input wait %s: %v", v, err)
		}
	}
}
