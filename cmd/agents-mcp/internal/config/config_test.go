package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// envOf returns a getenv that sees only m, so tests never depend on the
// environment of the machine running them.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeYAML(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t *testing.T, args []string, env map[string]string) *Config {
	t.Helper()
	c, err := load(args, envOf(env), io.Discard)
	if err != nil {
		t.Fatalf("load(%q): %v", args, err)
	}
	return c
}

func TestPrecedence(t *testing.T) {
	file := writeYAML(t, "addr: 127.0.0.1:1111\ndata_dir: /from/file\n")
	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		wantAddr      string
		wantAddrSrc   Source
		wantDataDir   string
		wantDataDirSr Source
	}{
		{
			name:     "defaults",
			wantAddr: "127.0.0.1:8080", wantAddrSrc: "default",
			wantDataDir: "./data", wantDataDirSr: "default",
		},
		{
			name:     "file over default",
			args:     []string{"--config", file},
			wantAddr: "127.0.0.1:1111", wantAddrSrc: "file",
			wantDataDir: "/from/file", wantDataDirSr: "file",
		},
		{
			name:     "env over file",
			args:     []string{"--config", file},
			env:      map[string]string{"AGENTS_MCP_ADDR": "127.0.0.1:2222", "AGENTS_MCP_DATA_DIR": "/from/env"},
			wantAddr: "127.0.0.1:2222", wantAddrSrc: "env:AGENTS_MCP_ADDR",
			wantDataDir: "/from/env", wantDataDirSr: "env:AGENTS_MCP_DATA_DIR",
		},
		{
			name:     "flag over env over file",
			args:     []string{"--config", file, "--addr", "127.0.0.1:3333", "--data-dir=/from/flag"},
			env:      map[string]string{"AGENTS_MCP_ADDR": "127.0.0.1:2222", "AGENTS_MCP_DATA_DIR": "/from/env"},
			wantAddr: "127.0.0.1:3333", wantAddrSrc: "flag:--addr",
			wantDataDir: "/from/flag", wantDataDirSr: "flag:--data-dir",
		},
		{
			name:     "layers mix per setting",
			args:     []string{"--config", file, "--addr", "127.0.0.1:3333"},
			env:      map[string]string{"AGENTS_MCP_DATA_DIR": "/from/env"},
			wantAddr: "127.0.0.1:3333", wantAddrSrc: "flag:--addr",
			wantDataDir: "/from/env", wantDataDirSr: "env:AGENTS_MCP_DATA_DIR",
		},
		{
			name:     "empty env does not override",
			args:     []string{"--config", file},
			env:      map[string]string{"AGENTS_MCP_ADDR": "", "AGENTS_MCP_DATA_DIR": "  "},
			wantAddr: "127.0.0.1:1111", wantAddrSrc: "file",
			wantDataDir: "/from/file", wantDataDirSr: "file",
		},
		{
			name:     "flag equal to default still counts as set",
			args:     []string{"--addr", "127.0.0.1:8080"},
			env:      map[string]string{"AGENTS_MCP_ADDR": "127.0.0.1:2222"},
			wantAddr: "127.0.0.1:8080", wantAddrSrc: "flag:--addr",
			wantDataDir: "./data", wantDataDirSr: "default",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, tt.env)
			if c.Addr != tt.wantAddr || c.Source("addr") != tt.wantAddrSrc {
				t.Errorf("addr = %q from %q, want %q from %q", c.Addr, c.Source("addr"), tt.wantAddr, tt.wantAddrSrc)
			}
			if c.DataDir != tt.wantDataDir || c.Source("data_dir") != tt.wantDataDirSr {
				t.Errorf("data_dir = %q from %q, want %q from %q", c.DataDir, c.Source("data_dir"), tt.wantDataDir, tt.wantDataDirSr)
			}
		})
	}
}

// TestEnvAndFileNames pins every environment variable and YAML key to its
// field, since these names are the external interface.
func TestEnvAndFileNames(t *testing.T) {
	tests := []struct {
		setting string
		env     string
		envVal  string
		yaml    string
		get     func(*Config) string
		want    string // effective value when set through env; yaml sets "f-" + want
	}{
		{"mongodb.uri", "MONGODB_URI", "mongodb://h/x", "mongodb: {uri: mongodb://f/x}", func(c *Config) string { return c.MongoURI }, ""},
		{"mongodb.database", "MONGODB_DATABASE", "db1", "mongodb: {database: f-db1}", func(c *Config) string { return c.MongoDatabase }, ""},
		{"pinecone.api_key", "PINECONE_API_KEY", "pk", "pinecone: {api_key: f-pk}", func(c *Config) string { return c.PineconeAPIKey }, ""},
		{"pinecone.index", "PINECONE_INDEX", "idx", "pinecone: {index: f-idx}", func(c *Config) string { return c.PineconeIndex }, ""},
		{"pinecone.host", "PINECONE_HOST", "h.example", "pinecone: {host: f-h.example}", func(c *Config) string { return c.PineconeHost }, ""},
		{"pinecone.namespace", "PINECONE_NAMESPACE", "prod-", "pinecone: {namespace: f-prod-}", func(c *Config) string { return c.PineconeNamespace }, ""},
		{"embedder", "AGENTS_MCP_EMBEDDER", "OpenAI", "embedder: {kind: ollama}", func(c *Config) string { return c.Embedder }, "openai"},
		{"embedder.base_url", "EMBEDDINGS_BASE_URL", "http://e", "embedder: {base_url: http://f-e}", func(c *Config) string { return c.EmbeddingsBaseURL }, ""},
		{"embedder.model", "EMBEDDINGS_MODEL", "m", "embedder: {model: f-m}", func(c *Config) string { return c.EmbeddingsModel }, ""},
		{"embedder.api_key", "EMBEDDINGS_API_KEY", "ek", "embedder: {api_key: f-ek}", func(c *Config) string { return c.EmbeddingsAPIKey }, ""},
		{"llm", "AGENTS_MCP_LLM", "builtin", "llm: {kind: sampling}", func(c *Config) string { return c.LLM }, ""},
		{"llm.base_url", "OPENAI_BASE_URL", "http://o", "llm: {base_url: http://f-o}", func(c *Config) string { return c.OpenAIBaseURL }, ""},
		{"llm.api_key", "OPENAI_API_KEY", "ok", "llm: {api_key: f-ok}", func(c *Config) string { return c.OpenAIAPIKey }, ""},
		{"llm.model", "AGENTS_MCP_LLM_MODEL", "lm", "llm: {model: f-lm}", func(c *Config) string { return c.LLMModel }, ""},
		{"log_level", "AGENTS_MCP_LOG_LEVEL", "debug", "log_level: warn", func(c *Config) string { return c.LogLevel }, ""},
		{"stateless", "AGENTS_MCP_STATELESS", "true", "stateless: false", func(c *Config) string { return fmt.Sprint(c.Stateless) }, ""},
		{"max_body_bytes", "AGENTS_MCP_MAX_BODY_BYTES", "1024", "max_body_bytes: 2048", func(c *Config) string { return fmt.Sprint(c.MaxBodyBytes) }, ""},
		{"limits.max_result_bytes", "AGENTS_MCP_MAX_RESULT_BYTES", "1048576", "limits: {max_result_bytes: 2097152}", func(c *Config) string { return fmt.Sprint(c.MaxResultBytes) }, ""},
		{"limits.cached_upstream_reads", "AGENTS_MCP_CACHED_UPSTREAM_READS", "500", "limits: {cached_upstream_reads: 100}", func(c *Config) string { return fmt.Sprint(c.CachedUpstreamReads) }, ""},
		{"shutdown_timeout", "AGENTS_MCP_SHUTDOWN_TIMEOUT", "3s", "shutdown_timeout: 1m", func(c *Config) string { return c.ShutdownTimeout.String() }, ""},
		{"allowed_origins", "AGENTS_MCP_ALLOWED_ORIGINS", "https://a.example, http://b.example:8080", "allowed_origins: [https://f.example]", func(c *Config) string { return strings.Join(c.AllowedOrigins, " ") }, "https://a.example http://b.example:8080"},
		{"allowed_hosts", "AGENTS_MCP_ALLOWED_HOSTS", "a.example,b.example:8080", "allowed_hosts: [f.example]", func(c *Config) string { return strings.Join(c.AllowedHosts, " ") }, "a.example b.example:8080"},
		{"api_keys", "AGENTS_MCP_API_KEYS", "k1,k2", "api_keys: [f1]", func(c *Config) string { return strings.Join(c.APIKeys, " ") }, "k1 k2"},
		{"upstream_sync_interval", "AGENTS_MCP_UPSTREAM_SYNC_INTERVAL", "2s", "upstream_sync_interval: 1m", func(c *Config) string { return c.UpstreamSyncInterval.String() }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.setting, func(t *testing.T) {
			file := writeYAML(t, tt.yaml+"\n")
			fromFile := mustLoad(t, []string{"--config", file}, nil)
			if got := fromFile.Source(tt.setting); got != SourceFile {
				t.Errorf("yaml %q: source of %s = %q, want file", tt.yaml, tt.setting, got)
			}
			if got := tt.get(fromFile); got == tt.get(Default()) && tt.setting != "stateless" {
				t.Errorf("yaml %q did not change %s (still %q)", tt.yaml, tt.setting, got)
			}

			c := mustLoad(t, []string{"--config", file}, map[string]string{tt.env: tt.envVal})
			want := tt.want
			if want == "" {
				want = tt.envVal
			}
			if got := tt.get(c); got != want {
				t.Errorf("%s=%q: got %q, want %q", tt.env, tt.envVal, got, want)
			}
			if got, want := c.Source(tt.setting), Source("env:"+tt.env); got != want {
				t.Errorf("source of %s = %q, want %q", tt.setting, got, want)
			}
		})
	}
}

func TestBoolFlagsOverrideEnv(t *testing.T) {
	c := mustLoad(t, []string{"--stateless=false", "--insecure", "--conformance-fixtures", "--log-level", "ERROR"},
		map[string]string{"AGENTS_MCP_STATELESS": "true", "AGENTS_MCP_LOG_LEVEL": "debug"})
	if c.Stateless || c.Source("stateless") != "flag:--stateless" {
		t.Errorf("stateless = %v from %q, want false from flag:--stateless", c.Stateless, c.Source("stateless"))
	}
	if !c.Insecure || c.Source("insecure") != "flag:--insecure" {
		t.Errorf("insecure = %v from %q", c.Insecure, c.Source("insecure"))
	}
	if !c.ConformanceFixtures || c.Source("conformance_fixtures") != "flag:--conformance-fixtures" {
		t.Errorf("conformance_fixtures = %v from %q", c.ConformanceFixtures, c.Source("conformance_fixtures"))
	}
	if c.LogLevel != "error" || c.SlogLevel() != slog.LevelError {
		t.Errorf("log level = %q (%v), want error", c.LogLevel, c.SlogLevel())
	}
}

// The rebinding protection reads "*" as "any"; validation must let it through.
func TestAllowedWildcards(t *testing.T) {
	c := mustLoad(t, nil, map[string]string{"AGENTS_MCP_ALLOWED_ORIGINS": "*", "AGENTS_MCP_ALLOWED_HOSTS": "*"})
	if !slices.Equal(c.AllowedOrigins, []string{"*"}) || !slices.Equal(c.AllowedHosts, []string{"*"}) {
		t.Errorf("wildcards: origins %q, hosts %q", c.AllowedOrigins, c.AllowedHosts)
	}
}

func TestConfigFileLocation(t *testing.T) {
	a := writeYAML(t, "addr: 127.0.0.1:1\n")
	b := writeYAML(t, "addr: 127.0.0.1:2\n")
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    string
		wantSrc Source
	}{
		{"env", nil, map[string]string{"AGENTS_MCP_CONFIG": a}, "127.0.0.1:1", "env:AGENTS_MCP_CONFIG"},
		{"flag wins over env", []string{"--config", b}, map[string]string{"AGENTS_MCP_CONFIG": a}, "127.0.0.1:2", "flag:--config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, tt.env)
			if c.Addr != tt.want || c.Source("config") != tt.wantSrc {
				t.Errorf("addr %q, config from %q; want %q from %q", c.Addr, c.Source("config"), tt.want, tt.wantSrc)
			}
		})
	}

	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"missing via flag", []string{"--config", missing}, nil},
		{"missing via env", nil, map[string]string{"AGENTS_MCP_CONFIG": missing}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.args, envOf(tt.env), io.Discard)
			if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
				t.Fatalf("err = %v, want an error naming the missing file", err)
			}
		})
	}

	empty := writeYAML(t, "# nothing here\n")
	if c := mustLoad(t, []string{"--config", empty}, nil); c.Addr != DefaultAddr {
		t.Errorf("empty file changed addr to %q", c.Addr)
	}
	two := writeYAML(t, "addr: 127.0.0.1:1\n---\naddr: 127.0.0.1:2\n")
	if _, err := load([]string{"--config", two}, envOf(nil), io.Discard); err == nil {
		t.Error("two YAML documents: no error")
	}
}

func TestUnknownYAMLKey(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"top level", "addr: 127.0.0.1:1\nadr: x\n", []string{`line 2`, `unknown key "adr"`}},
		{"nested", "mongodb:\n  uri: mongodb://h\n  databse: x\n", []string{`line 3`, `unknown key "databse"`, "mongodb"}},
		{"upstream", "upstreams:\n  - name: a\n    transport: stdio\n    command: x\n    cmd: y\n", []string{`line 5`, `unknown key "cmd"`, "upstreams"}},
		{"insecure is flag only", "insecure: true\n", []string{`unknown key "insecure"`}},
		{"wrong type", "embedder: openai\n", []string{"line 1", "embedder"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load([]string{"--config", writeYAML(t, tt.yaml)}, envOf(nil), io.Discard)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		args []string
		want string
	}{
		{"embedder enum", "", map[string]string{"AGENTS_MCP_EMBEDDER": "foo"}, nil,
			`config: embedder: "foo" is not one of hash, semantic, openai, ollama, pinecone (from env:AGENTS_MCP_EMBEDDER)`},
		{"pinecone embedder needs key", "embedder: {kind: pinecone}", nil, nil, `config: embedder: pinecone requires pinecone.api_key`},
		{"llm enum", "llm: {kind: gpt}", nil, nil, `config: llm: "gpt" is not one of auto, sampling, openai, builtin (from file)`},
		{"log level enum", "", nil, []string{"--log-level", "loud"}, `config: log_level: "loud" is not one of debug, info, warn, error (from flag:--log-level)`},
		{"addr missing port", "", nil, []string{"--addr", "localhost"}, `config: addr: missing port`},
		{"addr bad port", "addr: 'localhost:http'", nil, nil, `config: addr: invalid port "http"`},
		{"addr port range", "", map[string]string{"AGENTS_MCP_ADDR": ":70000"}, nil, `config: addr: invalid port "70000"`},
		{"empty data dir", "", nil, []string{"--data-dir="}, `config: data_dir: must not be empty`},
		{"mongo scheme", "", map[string]string{"MONGODB_URI": "postgres://u:hunter2@h/db"}, nil, `config: mongodb.uri: "postgres://u:xxxxx@h/db" must start with mongodb://`},
		{"empty database", "mongodb: {database: ''}", nil, nil, `config: mongodb.database: must not be empty`},
		{"llm base url", "", map[string]string{"OPENAI_BASE_URL": "localhost:11434"}, nil, `config: llm.base_url:`},
		{"embedder base url", "embedder: {base_url: /v1}", nil, nil, `config: embedder.base_url: "/v1" must be an absolute http or https URL`},
		{"negative body", "max_body_bytes: -1", nil, nil, `config: max_body_bytes: must be positive, got -1`},
		{"zero body", "", map[string]string{"AGENTS_MCP_MAX_BODY_BYTES": "0"}, nil, `config: max_body_bytes: must be positive, got 0`},
		{"body not int", "", map[string]string{"AGENTS_MCP_MAX_BODY_BYTES": "4MB"}, nil, `config: AGENTS_MCP_MAX_BODY_BYTES: invalid integer "4MB"`},
		{"result bound too small", "limits: {max_result_bytes: 1024}", nil, nil, `config: limits.max_result_bytes: must be between 65536 and 1073741824, got 1024 (from file)`},
		{"result bound too large", "", map[string]string{"AGENTS_MCP_MAX_RESULT_BYTES": "4294967296"}, nil, `config: limits.max_result_bytes: must be between 65536 and 1073741824, got 4294967296 (from env:AGENTS_MCP_MAX_RESULT_BYTES)`},
		{"result bound not int", "", map[string]string{"AGENTS_MCP_MAX_RESULT_BYTES": "16MiB"}, nil, `config: AGENTS_MCP_MAX_RESULT_BYTES: invalid integer "16MiB"`},
		{"negative read cache", "limits: {cached_upstream_reads: -1}", nil, nil, `config: limits.cached_upstream_reads: must be between 0 (off) and 100000, got -1 (from file)`},
		{"read cache not int", "", map[string]string{"AGENTS_MCP_CACHED_UPSTREAM_READS": "many"}, nil, `config: AGENTS_MCP_CACHED_UPSTREAM_READS: invalid integer "many"`},
		{"limits unknown key", "limits: {max_results: 5}", nil, nil, `unknown key "max_results" (in limits)`},
		{"env duration", "", map[string]string{"AGENTS_MCP_SHUTDOWN_TIMEOUT": "x"}, nil, `config: AGENTS_MCP_SHUTDOWN_TIMEOUT: invalid duration "x"`},
		{"file duration", "shutdown_timeout: 15", nil, nil, `config: shutdown_timeout: invalid duration "15"`},
		{"negative duration", "shutdown_timeout: -1s", nil, nil, `config: shutdown_timeout: must not be negative`},
		{"env bool", "", map[string]string{"AGENTS_MCP_STATELESS": "maybe"}, nil, `config: AGENTS_MCP_STATELESS: invalid boolean "maybe"`},
		{"origin with path", "allowed_origins: [https://a.example/x]", nil, nil, `config: allowed_origins[0]: "https://a.example/x" must be scheme://host[:port]`},
		{"origin without scheme", "", map[string]string{"AGENTS_MCP_ALLOWED_ORIGINS": "ok.example"}, nil, `config: allowed_origins[0]: "ok.example"`},
		{"host with scheme", "allowed_hosts: [a.example, 'http://b.example']", nil, nil, `config: allowed_hosts[1]: "http://b.example" must be host or host:port`},
		{"upstream name", "upstreams:\n- {name: ok, transport: stdio, command: x}\n- {name: Bad Name, transport: stdio, command: x}", nil, nil,
			`config: upstreams[1].name: "Bad Name" must match ^[a-z0-9-]{1,32}$`},
		{"upstream name too long", "upstreams:\n- {name: " + strings.Repeat("a", 33) + ", transport: stdio, command: x}", nil, nil,
			`config: upstreams[0].name: "` + strings.Repeat("a", 33) + `" must match`},
		{"duplicate upstream", "upstreams:\n- {name: a, transport: stdio, command: x}\n- {name: a, transport: stdio, command: y}", nil, nil,
			`config: upstreams[1].name: "a" is already used by upstreams[0]`},
		{"transport missing", "upstreams:\n- {name: a, url: 'http://h/mcp'}", nil, nil, `config: upstreams[0].transport: required`},
		{"transport enum", "upstreams:\n- {name: a, transport: ws, url: 'http://h/mcp'}", nil, nil, `config: upstreams[0].transport: "ws" is not one of streamable, sse, stdio`},
		{"url required", "upstreams:\n- {name: a, transport: sse}", nil, nil, `config: upstreams[0].url: required for transport sse`},
		{"url relative", "upstreams:\n- {name: a, transport: streamable, url: /mcp}", nil, nil, `config: upstreams[0].url: "/mcp" must be an absolute http or https URL`},
		{"url scheme", "upstreams:\n- {name: a, transport: streamable, url: 'ftp://h/mcp'}", nil, nil, `config: upstreams[0].url: "ftp://h/mcp" must be an absolute`},
		{"command with http", "upstreams:\n- {name: a, transport: streamable, url: 'http://h', command: x}", nil, nil, `config: upstreams[0].command: only valid with transport stdio`},
		{"command required", "upstreams:\n- {name: a, transport: stdio}", nil, nil, `config: upstreams[0].command: required for transport stdio`},
		{"url with stdio", "upstreams:\n- {name: a, transport: stdio, command: x, url: 'http://h'}", nil, nil, `config: upstreams[0].url: not allowed with transport stdio`},
		{"headers with stdio", "upstreams:\n- {name: a, transport: stdio, command: x, headers: {A: b}}", nil, nil, `config: upstreams[0].headers: not allowed with transport stdio`},
		{"bad header name", "upstreams:\n- {name: a, transport: sse, url: 'http://h', headers: {'Bad Header': b}}", nil, nil, `config: upstreams[0].headers: "Bad Header" is not a valid header name`},
		{"upstream timeout", "upstreams:\n- {name: a, transport: stdio, command: x, timeout: soon}", nil, nil, `config: upstreams[0].timeout: invalid duration "soon"`},
		{"upstream zero timeout", "upstreams:\n- {name: a, transport: stdio, command: x, timeout: 0s}", nil, nil, `config: upstreams[0].timeout: must be positive`},
		{"protocol version", "upstreams:\n- {name: a, transport: stdio, command: x, protocol_version: latest}", nil, nil, `config: upstreams[0].protocol_version: "latest" is not a YYYY-MM-DD`},
		{"empty allow entry", "upstreams:\n- {name: a, transport: stdio, command: x, tools: {allow: ['']}}", nil, nil, `config: upstreams[0].tools.allow[0]: empty tool name`},
		{"positional argument", "", nil, []string{"extra"}, `config: unexpected argument "extra"`},
		{"unknown flag", "", nil, []string{"--port", "1"}, `config: flag provided but not defined: -port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.yaml != "" {
				args = append([]string{"--config", writeYAML(t, tt.yaml+"\n")}, args...)
			}
			c, err := load(args, envOf(tt.env), io.Discard)
			if err == nil {
				t.Fatalf("no error; config: %v", c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
}

func TestValidationCollectsAllErrors(t *testing.T) {
	file := writeYAML(t, "llm: {kind: gpt}\nupstreams:\n- {name: A, transport: stdio}\n")
	_, err := load([]string{"--config", file, "--addr", "nohost"},
		envOf(map[string]string{"AGENTS_MCP_SHUTDOWN_TIMEOUT": "x", "AGENTS_MCP_EMBEDDER": "foo"}), io.Discard)
	if err == nil {
		t.Fatal("no error")
	}
	for _, field := range []string{"config: addr:", "config: llm:", "config: embedder:", "config: AGENTS_MCP_SHUTDOWN_TIMEOUT:", "config: upstreams[0].name:", "config: upstreams[0].command:"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not report %q:\n%v", field, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 6 {
		t.Errorf("got %d error lines, want 6:\n%v", n, err)
	}
}

func TestUpstreams(t *testing.T) {
	file := writeYAML(t, `
upstreams:
  - name: everything
    transport: streamable
    url: http://127.0.0.1:3301/mcp
    headers: { Authorization: "Bearer ${EVERYTHING_TOKEN}", X-Price: "$$5", X-Both: "$A-${B}" }
    tools: { allow: [echo], deny: [add] }
    protocol_version: "2025-06-18"
  - name: files
    transport: STDIO
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/share"]
    env: { HOME: "${HOME_DIR}" }
    timeout: 5s
`)
	env := map[string]string{"EVERYTHING_TOKEN": "tok", "A": "a", "B": "b", "HOME_DIR": "/home/x"}
	c := mustLoad(t, []string{"--config", file}, env)
	if len(c.Upstreams) != 2 || c.Source("upstreams") != SourceFile {
		t.Fatalf("upstreams = %v from %q", c.Upstreams, c.Source("upstreams"))
	}
	e, f := c.Upstreams[0], c.Upstreams[1]
	for k, want := range map[string]string{"Authorization": "Bearer tok", "X-Price": "$5", "X-Both": "a-b"} {
		if got := e.Headers[k]; got != want {
			t.Errorf("headers[%s] = %q, want %q", k, got, want)
		}
	}
	if e.Timeout != DefaultUpstreamTimeout || f.Timeout != 5*time.Second {
		t.Errorf("timeouts = %v, %v; want %v, 5s", e.Timeout, f.Timeout, DefaultUpstreamTimeout)
	}
	if !slices.Equal(e.Tools.Allow, []string{"echo"}) || !slices.Equal(e.Tools.Deny, []string{"add"}) || e.ProtocolVersion != "2025-06-18" {
		t.Errorf("everything = %#v", e)
	}
	if f.Transport != TransportStdio || f.Command != "npx" || len(f.Args) != 3 || f.Env["HOME"] != "/home/x" {
		t.Errorf("files = %+v, env %v", f, f.Env)
	}
	if err := validate.UpstreamConfig(&f); err != nil {
		t.Errorf("Validate of a loaded upstream: %v", err)
	}
	bad := Upstream{Name: "x", Transport: TransportSSE, Timeout: time.Second}
	if err := validate.UpstreamConfig(&bad); err == nil || !strings.HasPrefix(err.Error(), "url: required") {
		t.Errorf("Validate without url = %v, want it to start with url: required", err)
	}
}

func TestUpstreamUnsetVariable(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want string
	}{
		{"header", "upstreams:\n- name: everything\n  transport: streamable\n  url: http://h/mcp\n  headers: {Authorization: 'Bearer ${EVERYTHING_TOKEN}'}\n",
			nil, "config: upstreams[0].headers.Authorization: environment variable EVERYTHING_TOKEN is not set"},
		{"empty counts as unset", "upstreams:\n- name: everything\n  transport: streamable\n  url: http://h/mcp\n  headers: {Authorization: 'Bearer ${EVERYTHING_TOKEN}'}\n",
			map[string]string{"EVERYTHING_TOKEN": ""}, "config: upstreams[0].headers.Authorization: environment variable EVERYTHING_TOKEN is not set"},
		{"env, second upstream", "upstreams:\n- {name: a, transport: stdio, command: x}\n- {name: b, transport: stdio, command: x, env: {TOKEN: '${T1}${T2}'}}\n",
			nil, "config: upstreams[1].env.TOKEN: environment variables T1, T2 are not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load([]string{"--config", writeYAML(t, tt.yaml)}, envOf(tt.env), io.Discard)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}

func TestRedaction(t *testing.T) {
	secrets := []string{"sk-openai-SECRET", "pc-SECRET", "inbound-SECRET-1", "inbound-SECRET-2", "hunter2", "hdr-SECRET", "envval-SECRET", "SESSIONTOKEN", "urlpass", "sig-SECRET"}
	file := writeYAML(t, `
pinecone: {api_key: pc-SECRET, index: memories}
api_keys: [inbound-SECRET-1]
upstreams:
  - name: remote
    transport: streamable
    url: https://bob:urlpass@remote.example/mcp?sig=sig-SECRET&v=1
    headers: {Authorization: "Bearer ${TOKEN}"}
  - name: local
    transport: stdio
    command: server
    env: {API_TOKEN: envval-SECRET}
`)
	env := map[string]string{
		"OPENAI_API_KEY":      "sk-openai-SECRET",
		"EMBEDDINGS_API_KEY":  "emb-SECRET",
		"AGENTS_MCP_API_KEYS": "inbound-SECRET-1, inbound-SECRET-2",
		"MONGODB_URI":         "mongodb://agent:hunter2@db1.example:27017,db2.example:27017/agents?authSource=admin&authMechanismProperties=AWS_SESSION_TOKEN:SESSIONTOKEN",
		"TOKEN":               "hdr-SECRET",
	}
	c := mustLoad(t, []string{"--config", file}, env)

	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	c.LogSettings(t.Context(), logger)
	logger.Info("whole", "config", c, "upstream", c.Upstreams[0])
	outputs := map[string]string{
		"LogSettings": logged.String(),
		"%v":          fmt.Sprintf("%v", c),
		"%+v":         fmt.Sprintf("%+v", *c),
		"%#v":         fmt.Sprintf("%#v", c),
		"%s upstream": fmt.Sprintf("%s %v %#v", c.Upstreams[0], c.Upstreams, c.Upstreams[1]),
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains secret %q:\n%s", name, s, out)
			}
		}
	}

	want := map[string]string{
		"mongodb.uri":      "mongodb://agent:xxxxx@db1.example:27017,db2.example:27017/agents?authSource=admin&authMechanismProperties=xxxxx",
		"llm.api_key":      "[redacted]",
		"pinecone.api_key": "[redacted]",
		"pinecone.index":   "memories",
		"api_keys":         "[redacted] (2 keys)",
		"upstreams":        "remote,local",
		"upstreams[0]":     "name=remote transport=streamable url=https://bob:xxxxx@remote.example/mcp?sig=xxxxx&v=1 headers=Authorization:[redacted] timeout=30s max_concurrency=32 max_backoff=8s",
		"upstreams[1]":     "name=local transport=stdio command=server env=API_TOKEN:[redacted] timeout=30s max_concurrency=32 max_backoff=8s",
	}
	got := map[string]Setting{}
	for _, s := range c.Describe() {
		got[s.Name] = s
	}
	for name, w := range want {
		if got[name].Value != w {
			t.Errorf("%s = %q, want %q", name, got[name].Value, w)
		}
	}
	if got["api_keys"].Source != "env:AGENTS_MCP_API_KEYS" || got["pinecone.api_key"].Source != "file" {
		t.Errorf("sources: api_keys %q, pinecone.api_key %q", got["api_keys"].Source, got["pinecone.api_key"].Source)
	}
	if line := "level=INFO msg=setting name=llm.api_key value=[redacted] source=env:OPENAI_API_KEY"; !strings.Contains(logged.String(), line) {
		t.Errorf("log does not contain %q:\n%s", line, logged.String())
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, mongo, other string }{
		{"", "", ""},
		{"mongodb://h:27017/db", "mongodb://h:27017/db", "mongodb://h:27017/db"},
		{"mongodb+srv://u:p%40ss@cluster.example/db", "mongodb+srv://u:xxxxx@cluster.example/db", "mongodb+srv://u:xxxxx@cluster.example/db"},
		{"mongodb://u:p@ss/word@h/db", "mongodb://u:xxxxx@h/db", "mongodb://u:xxxxx@h/db"},
		{"https://KEY@api.example/v1", "https://KEY@api.example/v1", "https://xxxxx@api.example/v1"},
		{"https://api.example/v1?api_key=K&model=m#frag", "https://api.example/v1?api_key=xxxxx&model=m", "https://api.example/v1?api_key=xxxxx&model=m"},
		{"idx.svc.pinecone.io", "idx.svc.pinecone.io", "idx.svc.pinecone.io"},
		{"idx.svc.pinecone.io:443", "idx.svc.pinecone.io:443", "idx.svc.pinecone.io:443"},
		{"k:v@idx:443", "[redacted]", "[redacted]"},
	}
	for _, tt := range tests {
		if got := redactMongoURI(tt.in); got != tt.mongo {
			t.Errorf("redactMongoURI(%q) = %q, want %q", tt.in, got, tt.mongo)
		}
		if got := redactURL(tt.in); got != tt.other {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.other)
		}
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:80", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LocalHost:0", true},
		{"[::ffff:127.0.0.1]:1", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.168.1.10:8080", false},
		{"example.com:443", false},
		{"localhost.example.com:80", false},
		{"127.0.0.1", false}, // no port: not a valid address at all
	}
	for _, tt := range tests {
		c := &Config{Addr: tt.addr}
		if got := c.IsLoopbackAddr(); got != tt.want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestAPIKeys(t *testing.T) {
	file := writeYAML(t, "api_keys: [' filekey ', '']\n")
	tests := []struct {
		name    string
		args    []string
		env     string
		want    []string
		wantSrc Source
	}{
		{"unset", nil, "", nil, "default"},
		{"one", nil, "k1", []string{"k1"}, "env:AGENTS_MCP_API_KEYS"},
		{"trimmed, empties dropped", nil, " k1 , ,k2,, ", []string{"k1", "k2"}, "env:AGENTS_MCP_API_KEYS"},
		{"file, cleaned", []string{"--config", file}, "", []string{"filekey"}, "file"},
		{"env replaces file", []string{"--config", file}, "k3", []string{"k3"}, "env:AGENTS_MCP_API_KEYS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, map[string]string{"AGENTS_MCP_API_KEYS": tt.env})
			if !slices.Equal(c.APIKeys, tt.want) || c.Source("api_keys") != tt.wantSrc {
				t.Errorf("APIKeys = %q from %q, want %q from %q", c.APIKeys, c.Source("api_keys"), tt.want, tt.wantSrc)
			}
		})
	}
}

func TestUsageHidesConformanceFlag(t *testing.T) {
	var out bytes.Buffer
	_, err := load([]string{"-h"}, envOf(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: err = %v, want flag.ErrHelp", err)
	}
	usage := out.String()
	for _, f := range []string{"--addr", "--config", "--data-dir", "--stateless", "--insecure", "--log-level"} {
		if !strings.Contains(usage, f) {
			t.Errorf("usage lacks %s:\n%s", f, usage)
		}
	}
	if strings.Contains(usage, "conformance") {
		t.Errorf("usage shows the hidden flag:\n%s", usage)
	}
}

func TestDescribeCoversDefaults(t *testing.T) {
	c := mustLoad(t, nil, nil)
	names := map[string]bool{}
	for _, s := range c.Describe() {
		names[s.Name] = true
		if s.Source != SourceDefault {
			t.Errorf("%s from %q with nothing configured", s.Name, s.Source)
		}
	}
	for _, n := range []string{"addr", "config", "data_dir", "mongodb.uri", "mongodb.database", "pinecone.api_key", "pinecone.index",
		"pinecone.host", "embedder", "embedder.base_url", "embedder.model", "llm", "llm.base_url", "llm.api_key", "llm.model",
		"api_keys", "stateless", "max_body_bytes", "shutdown_timeout", "allowed_origins", "allowed_hosts", "log_level",
		"insecure", "conformance_fixtures", "upstreams", "auth.api_keys", "auth.jwt.jwks_url", "auth.jwt.issuer", "auth.jwt.audience",
		"auth.jwt.scopes_claim", "auth.jwt.resource", "auth.jwt.authorization_servers", "stdio.api_key", "rate_limit.requests_per_second",
		"rate_limit.burst", "audit.retention", "upstream_sync_interval"} {
		if !names[n] {
			t.Errorf("Describe lacks %s", n)
		}
	}
	if c.MaxBodyBytes != 4<<20 || c.ShutdownTimeout != 15*time.Second || c.MongoDatabase != "agents_mcp" || c.Embedder != "semantic" || c.LLM != "auto" || c.LogLevel != "info" {
		t.Errorf("defaults: %v", c)
	}
}
