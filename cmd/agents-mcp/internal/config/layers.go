package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// fileConfig is the YAML shape. Scalars are pointers so that a key present in
// the file (even with a zero value such as `stateless: false`) is told apart
// from an absent one and recorded as coming from the file. Durations are
// strings so that a bad one is reported with its key.
type fileConfig struct {
	Addr            *string                    `yaml:"addr"`
	DataDir         *string                    `yaml:"data_dir"`
	MongoDB         *fileMongo                 `yaml:"mongodb"`
	Pinecone        *filePinecone              `yaml:"pinecone"`
	Embedder        *fileEmbedder              `yaml:"embedder"`
	LLM             *fileLLM                   `yaml:"llm"`
	APIKeys         *[]string                  `yaml:"api_keys"`
	Stateless       *bool                      `yaml:"stateless"`
	MaxBodyBytes    *int64                     `yaml:"max_body_bytes"`
	ShutdownTimeout *string                    `yaml:"shutdown_timeout"`
	AllowedOrigins  *[]string                  `yaml:"allowed_origins"`
	AllowedHosts    *[]string                  `yaml:"allowed_hosts"`
	LogLevel        *string                    `yaml:"log_level"`
	PublicURL       *string                    `yaml:"public_url"`
	Upstreams       []fileUpstream             `yaml:"upstreams"`
	HTTPTools       []fileHTTPSrc              `yaml:"http_tools"`
	Auth            *fileAuth                  `yaml:"auth"`
	RateLimit       *fileRateLimit             `yaml:"rate_limit"`
	Audit           *fileAudit                 `yaml:"audit"`
	Tasks           *fileTasks                 `yaml:"tasks"`
	Sessions        *fileSessions              `yaml:"sessions"`
	Egress          *fileEgress                `yaml:"egress"`
	Memory          *fileMemory                `yaml:"memory"`
	Quotas          *fileQuotas                `yaml:"quotas"`
	Limits          *fileLimits                `yaml:"limits"`
	OpenAPI         *fileOpenAPI               `yaml:"openapi"`
	Catalog         *fileCatalog               `yaml:"catalog"`
	VirtualServers  []*agentsmcp.VirtualServer `yaml:"virtual_servers"`

	UpstreamSyncInterval *string `yaml:"upstream_sync_interval"`
}

type fileMongo struct {
	URI      *string `yaml:"uri"`
	Database *string `yaml:"database"`
}

type filePinecone struct {
	APIKey *string `yaml:"api_key"`
	Index  *string `yaml:"index"`
	Host   *string `yaml:"host"`
	// Namespace is the prefix of agents-mcp's namespaces in the index.
	Namespace *string `yaml:"namespace"`
}

type fileEmbedder struct {
	Kind    *string `yaml:"kind"`
	BaseURL *string `yaml:"base_url"`
	Model   *string `yaml:"model"`
	APIKey  *string `yaml:"api_key"`
}

type fileLLM struct {
	Kind    *string `yaml:"kind"`
	BaseURL *string `yaml:"base_url"`
	APIKey  *string `yaml:"api_key"`
	Model   *string `yaml:"model"`
}

type fileUpstream struct {
	Name            string            `yaml:"name"`
	Transport       string            `yaml:"transport"`
	URL             string            `yaml:"url"`
	Headers         map[string]string `yaml:"headers"`
	Auth            string            `yaml:"auth"`
	Command         string            `yaml:"command"`
	Args            []string          `yaml:"args"`
	Env             map[string]string `yaml:"env"`
	Tools           fileTools         `yaml:"tools"`
	Timeout         string            `yaml:"timeout"`
	ProtocolVersion string            `yaml:"protocol_version"`
	MaxConcurrency  int               `yaml:"max_concurrency"`
	MaxBackoff      string            `yaml:"max_backoff"`
	// Delegation is read only to be refused with the reason (see
	// resolve): an unknown key would be refused without one.
	Delegation string `yaml:"delegation"`
}

type fileTools struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// yamlSections turns the Go type names in yaml.v3 messages into the YAML
// section the user wrote.
var yamlSections = map[string]string{
	"config.fileConfig":          "",
	"config.fileMongo":           "mongodb",
	"config.filePinecone":        "pinecone",
	"config.fileEmbedder":        "embedder",
	"config.fileLLM":             "llm",
	"config.fileUpstream":        "upstreams entry",
	"config.fileTools":           "upstreams[].tools",
	"config.fileHTTPSrc":         "http_tools entry",
	"config.fileExchange":        "http_tools[].exchange",
	"httptools.Endpoint":         "http_tools[].endpoints entry",
	"httptools.Shape":            "http_tools[].endpoints[].response",
	"httptools.Table":            "http_tools[].endpoints[].response.table",
	"config.fileAuth":            "auth",
	"config.fileAPIKey":          "auth.api_keys entry",
	"config.fileJWT":             "auth.jwt",
	"config.fileRateLimit":       "rate_limit",
	"config.fileAudit":           "audit",
	"config.fileTasks":           "tasks",
	"config.fileSessions":        "sessions",
	"config.fileEgress":          "egress",
	"config.fileMemory":          "memory",
	"config.fileLimits":          "limits",
	"config.fileCatalog":         "catalog",
	"agentsmcp.VirtualServer":    "virtual_servers entry",
	"agentsmcp.VirtualSelection": "virtual_servers[].tools, resources or prompts entry",
	"agentsmcp.CallQuota":        "call_quotas entry",
}

var unknownFieldRE = regexp.MustCompile(`^line (\d+): field (.+) not found in type (\S+)$`)

// readFile reads and strictly decodes the config file: unknown keys and values
// of the wrong type are errors naming the key or line, since a silently
// ignored misspelt key is worse than a refusal to start.
func readFile(path string) (*fileConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: reading config file: %w", err)
	}
	f := &fileConfig{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err = dec.Decode(f)
	if errors.Is(err, io.EOF) { // empty file, or only comments
		return f, nil
	}
	if err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
		errs := make([]error, 0, len(te.Errors))
		for _, msg := range te.Errors {
			if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
				sect, known := yamlSections[m[3]]
				if !known {
					sect = m[3]
				}
				msg = fmt.Sprintf("line %s: unknown key %q", m[1], m[2])
				if sect != "" {
					msg += " (in " + sect + ")"
				}
			} else {
				for typ, sect := range yamlSections {
					if sect == "" {
						sect = "top-level"
					}
					msg = strings.ReplaceAll(msg, typ, sect+" mapping")
				}
			}
			errs = append(errs, fmt.Errorf("config: %s: %s", path, msg))
		}
		return nil, errors.Join(errs...)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: %s: more than one YAML document", path)
	}
	return f, nil
}

func (l *loader) fileString(name string, v *string, dst *string) {
	if v != nil {
		*dst = *v
		l.cfg.setSource(name, SourceFile)
	}
}

func (l *loader) fileList(name string, v *[]string, dst *[]string) {
	if v != nil {
		*dst = cleanList(*v)
		l.cfg.setSource(name, SourceFile)
	}
}

// applyFile copies the values present in the file; upstream problems are
// collected, not returned, so they are reported with everything else.
func (l *loader) applyFile(f *fileConfig) {
	c := l.cfg
	l.fileString("addr", f.Addr, &c.Addr)
	l.fileString("data_dir", f.DataDir, &c.DataDir)
	l.fileString("public_url", f.PublicURL, &c.PublicURL)
	if m := f.MongoDB; m != nil {
		l.fileString("mongodb.uri", m.URI, &c.MongoURI)
		l.fileString("mongodb.database", m.Database, &c.MongoDatabase)
	}
	if p := f.Pinecone; p != nil {
		l.fileString("pinecone.api_key", p.APIKey, &c.PineconeAPIKey)
		l.fileString("pinecone.index", p.Index, &c.PineconeIndex)
		l.fileString("pinecone.host", p.Host, &c.PineconeHost)
		l.fileString("pinecone.namespace", p.Namespace, &c.PineconeNamespace)
	}
	if e := f.Embedder; e != nil {
		l.fileString("embedder", e.Kind, &c.Embedder)
		l.fileString("embedder.base_url", e.BaseURL, &c.EmbeddingsBaseURL)
		l.fileString("embedder.model", e.Model, &c.EmbeddingsModel)
		l.fileString("embedder.api_key", e.APIKey, &c.EmbeddingsAPIKey)
	}
	if m := f.LLM; m != nil {
		l.fileString("llm", m.Kind, &c.LLM)
		l.fileString("llm.base_url", m.BaseURL, &c.OpenAIBaseURL)
		l.fileString("llm.api_key", m.APIKey, &c.OpenAIAPIKey)
		l.fileString("llm.model", m.Model, &c.LLMModel)
	}
	l.fileList("api_keys", f.APIKeys, &c.APIKeys)
	if f.Stateless != nil {
		c.Stateless = *f.Stateless
		c.setSource("stateless", SourceFile)
	}
	if f.MaxBodyBytes != nil {
		c.MaxBodyBytes = *f.MaxBodyBytes
		c.setSource("max_body_bytes", SourceFile)
	}
	if f.ShutdownTimeout != nil {
		d, err := time.ParseDuration(strings.TrimSpace(*f.ShutdownTimeout))
		if err != nil {
			l.errorf("shutdown_timeout", "invalid duration %q", *f.ShutdownTimeout)
		} else {
			c.ShutdownTimeout = d
			c.setSource("shutdown_timeout", SourceFile)
		}
	}
	l.fileList("allowed_origins", f.AllowedOrigins, &c.AllowedOrigins)
	l.fileList("allowed_hosts", f.AllowedHosts, &c.AllowedHosts)
	l.fileString("log_level", f.LogLevel, &c.LogLevel)
	if f.Upstreams != nil {
		c.setSource("upstreams", SourceFile)
		for i, fu := range f.Upstreams {
			u, errs := fu.resolve(fmt.Sprintf("upstreams[%d]", i), l.getenv)
			l.errs = append(l.errs, errs...)
			c.Upstreams = append(c.Upstreams, u)
		}
	}
	if f.HTTPTools != nil {
		c.setSource("http_tools", SourceFile)
		dir := ""
		if c.ConfigFile != "" {
			dir = filepath.Dir(c.ConfigFile)
		}
		for i, fs := range f.HTTPTools {
			s, errs := fs.resolve(fmt.Sprintf("http_tools[%d]", i), dir, l.getenv)
			l.errs = append(l.errs, errs...)
			c.HTTPTools = append(c.HTTPTools, s)
		}
	}
	l.applyFileVirtualServers(f)
	l.applyFileAuth(f)
	l.applyFileTasks(f)
	l.applyFileSessions(f) // sessions.go
	l.applyFileEgress(f)
	l.applyFileMemory(f)
	l.applyFileQuotas(f)
	l.applyFileLimits(f)
	l.applyFileOpenAPI(f)
	l.applyFileCatalog(f)
	l.fileDuration("upstream_sync_interval", f.UpstreamSyncInterval, &c.UpstreamSyncInterval)
	// Enumerations are case-insensitive for users but compared exactly by
	// consumers.
	c.Embedder = strings.ToLower(strings.TrimSpace(c.Embedder))
	c.LLM = strings.ToLower(strings.TrimSpace(c.LLM))
	c.LogLevel = strings.ToLower(strings.TrimSpace(c.LogLevel))
}

func (l *loader) envString(name, env string, dst *string) {
	if v := l.env(env); v != "" {
		*dst = v
		l.cfg.setSource(name, envSource(env))
	}
}

func (l *loader) envList(name, env string, dst *[]string) {
	if v := l.env(env); v != "" {
		*dst = splitList(v)
		l.cfg.setSource(name, envSource(env))
	}
}

// applyEnv overrides the file with every non-empty environment variable.
func (l *loader) applyEnv() {
	c := l.cfg
	l.envString("addr", "AGENTS_MCP_ADDR", &c.Addr)
	l.envString("data_dir", "AGENTS_MCP_DATA_DIR", &c.DataDir)
	l.envString("public_url", "AGENTS_MCP_PUBLIC_URL", &c.PublicURL)
	l.envString("mongodb.uri", "MONGODB_URI", &c.MongoURI)
	l.envString("mongodb.database", "MONGODB_DATABASE", &c.MongoDatabase)
	l.envString("pinecone.api_key", "PINECONE_API_KEY", &c.PineconeAPIKey)
	l.envString("pinecone.index", "PINECONE_INDEX", &c.PineconeIndex)
	l.envString("pinecone.host", "PINECONE_HOST", &c.PineconeHost)
	l.envString("pinecone.namespace", "PINECONE_NAMESPACE", &c.PineconeNamespace)
	l.envString("embedder", "AGENTS_MCP_EMBEDDER", &c.Embedder)
	l.envString("embedder.base_url", "EMBEDDINGS_BASE_URL", &c.EmbeddingsBaseURL)
	l.envString("embedder.model", "EMBEDDINGS_MODEL", &c.EmbeddingsModel)
	l.envString("embedder.api_key", "EMBEDDINGS_API_KEY", &c.EmbeddingsAPIKey)
	l.envString("llm", "AGENTS_MCP_LLM", &c.LLM)
	l.envString("llm.base_url", "OPENAI_BASE_URL", &c.OpenAIBaseURL)
	l.envString("llm.api_key", "OPENAI_API_KEY", &c.OpenAIAPIKey)
	l.envString("llm.model", "AGENTS_MCP_LLM_MODEL", &c.LLMModel)
	l.envList("api_keys", "AGENTS_MCP_API_KEYS", &c.APIKeys)
	if v := l.env("AGENTS_MCP_STATELESS"); v != "" {
		if b, err := strconv.ParseBool(v); err != nil {
			l.errorf("AGENTS_MCP_STATELESS", "invalid boolean %q", v)
		} else {
			c.Stateless = b
			c.setSource("stateless", envSource("AGENTS_MCP_STATELESS"))
		}
	}
	if v := l.env("AGENTS_MCP_MAX_BODY_BYTES"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil {
			l.errorf("AGENTS_MCP_MAX_BODY_BYTES", "invalid integer %q", v)
		} else {
			c.MaxBodyBytes = n
			c.setSource("max_body_bytes", envSource("AGENTS_MCP_MAX_BODY_BYTES"))
		}
	}
	if v := l.env("AGENTS_MCP_SHUTDOWN_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err != nil {
			l.errorf("AGENTS_MCP_SHUTDOWN_TIMEOUT", "invalid duration %q", v)
		} else {
			c.ShutdownTimeout = d
			c.setSource("shutdown_timeout", envSource("AGENTS_MCP_SHUTDOWN_TIMEOUT"))
		}
	}
	l.envList("allowed_origins", "AGENTS_MCP_ALLOWED_ORIGINS", &c.AllowedOrigins)
	l.envList("allowed_hosts", "AGENTS_MCP_ALLOWED_HOSTS", &c.AllowedHosts)
	l.envString("log_level", "AGENTS_MCP_LOG_LEVEL", &c.LogLevel)
	l.applyEnvAuth()
	l.applyEnvTasks()
	l.applyEnvSessions()
	l.applyEnvEgress()
	l.applyEnvMemory()
	l.applyEnvQuotas()
	l.applyEnvLimits()
	l.applyEnvOpenAPI()
	l.applyEnvCatalog()
	l.envDuration("upstream_sync_interval", "AGENTS_MCP_UPSTREAM_SYNC_INTERVAL", &c.UpstreamSyncInterval)
	c.Embedder = strings.ToLower(c.Embedder)
	c.LLM = strings.ToLower(c.LLM)
	c.LogLevel = strings.ToLower(c.LogLevel)
}
