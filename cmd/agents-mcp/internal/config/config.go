// Package config builds the effective configuration of `agents-mcp serve` and
// `agents-mcp stdio` from four layers: flag > environment > config file >
// default. Every effective setting remembers which layer supplied it, so that
// startup can log where each value came from without ever printing a secret.
//
// The names users rely on (flags, environment variables, YAML keys) are part of
// the external interface, listed in the settings table of docs/configuration.md
// (a test keeps that table and this package in step; docs/interface.md lists
// what this project added to the shared interface description); they may only
// be added to.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/remote"
)

// Defaults of the settings that have one. They are what `make run` uses, so
// none of them may require an external service.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultDataDir         = "./data"
	DefaultMongoDatabase   = "agents_mcp"
	DefaultEmbedder        = "semantic"
	DefaultLLM             = "auto"
	DefaultLogLevel        = "info"
	DefaultMaxBodyBytes    = 4 << 20
	DefaultShutdownTimeout = 15 * time.Second
	DefaultUpstreamTimeout = 30 * time.Second
)

// DefaultStdioLogLevel is the log level of `agents-mcp stdio` when no layer
// sets one: stdio clients (the Inspector, the Python SDK) show the server's
// stderr in the user's terminal, so only warnings and errors go there unless
// asked for.
const DefaultStdioLogLevel = "warn"

// Source names the layer that supplied an effective setting: "default",
// "file", "env:NAME" or "flag:--name".
type Source string

// The fixed sources; environment and flag sources carry the variable or flag
// name, see [Config.Source].
const (
	SourceDefault Source = "default"
	SourceFile    Source = "file"
)

func envSource(name string) Source  { return Source("env:" + name) }
func flagSource(name string) Source { return Source("flag:--" + name) }

// Config is the effective configuration. Load returns it validated; a Config
// built by hand (for example from [Default] in tests) is not validated.
//
// Secret fields (OpenAIAPIKey, PineconeAPIKey, EmbeddingsAPIKey, APIKeys, SecretsKey, RequestStateKey, the secrets of
// AuthKeys, StdioAPIKey, the MongoURI password, upstream header and env values, http_tools header values) are plain strings so that consumers can use
// them, but every formatting path this package offers (String, GoString,
// LogValue, Describe) redacts them.
type Config struct {
	Addr       string // host:port to listen on
	ConfigFile string // YAML file that was read; empty when none
	DataDir    string // home of the embedded SQLite store and vector index

	MongoURI      string // empty selects the embedded store under DataDir
	MongoDatabase string

	PineconeAPIKey string // empty selects the embedded vector index
	PineconeIndex  string
	PineconeHost   string
	// PineconeNamespace prefixes agents-mcp's namespaces in the index
	// ("learnings" → PineconeNamespace+"learnings"), so that several
	// deployments can share one index.
	PineconeNamespace string

	Embedder          string // semantic | hash | openai | ollama | pinecone
	EmbeddingsBaseURL string
	EmbeddingsModel   string
	// EmbeddingsAPIKey authenticates to the embedder; the openai embedder
	// falls back to OpenAIAPIKey, the pinecone one to PineconeAPIKey.
	EmbeddingsAPIKey string

	LLM           string // auto | sampling | openai | builtin
	OpenAIBaseURL string
	OpenAIAPIKey  string
	LLMModel      string

	// APIKeys are the inbound bearer keys with every scope
	// (AGENTS_MCP_API_KEYS, or api_keys in the file).
	APIKeys []string
	// AuthKeys are the keys of the file's auth.api_keys, each with its own
	// scopes, tool allowlist and rate limit.
	AuthKeys []APIKey
	// JWT configures bearer JWTs (auth.jwt, AGENTS_MCP_JWKS_URL, …).
	// Without any credential ([Config.AuthConfigured]) the caller must
	// only serve loopback unless Insecure is set ([Config.CheckExposure]).
	JWT JWTConfig
	// StdioAPIKey is the credential `agents-mcp stdio` presents to itself
	// (AGENTS_MCP_API_KEY): required when credentials are configured.
	StdioAPIKey string

	// RateLimit is the default rate of requests per second per principal
	// (0 disables it; keys may override it), with bursts of RateBurst.
	RateLimit float64
	RateBurst int
	// AuthFailureRate is how many refused requests a second each client
	// address gets, with bursts of AuthFailureBurst, before its refusals
	// become 429s (0 disables it).
	AuthFailureRate  float64
	AuthFailureBurst int
	// AuditRetention is how long audit entries are kept; 0 keeps them
	// forever.
	AuditRetention time.Duration
	// AuditMaxEntries bounds the audit trail by size: beyond it the oldest
	// entries are deleted; 0 disables the bound.
	AuditMaxEntries int
	// AuditCalls is where the entries of tool calls that ran go:
	// AuditCallsDB (the store, with everything else) or AuditCallsLog (the
	// structured log; refusals and admin writes stay in the store).
	AuditCalls string

	// TaskLeaseTTL is how long a task's lease lasts unless its runner
	// renews it (every third of it): a crashed replica's tasks are taken
	// over after it. At least [MinTaskLeaseTTL].
	TaskLeaseTTL time.Duration
	// TaskResumeInterval is how often the executor looks for tasks to
	// take over. At least [MinTaskResumeInterval].
	TaskResumeInterval time.Duration
	// TaskRetention is how long an ended task is kept after it ended; 0
	// keeps tasks forever. When set, every replica sweeps the ended tasks
	// past it (see agents.SweepTasks), and MCP tasks carry it in ttlMs. At
	// least [MinTaskRetention] when not 0.
	TaskRetention time.Duration
	// TaskInputWait bounds how long an MCP task waits in input_required
	// for an answer: past it the task ends (completed, with the paused
	// task as run_task's result and a message saying how to resume it).
	// Between [MinTaskInputWait] and [MaxTaskInputWait].
	TaskInputWait time.Duration
	// SessionIdleTimeout closes an HTTP session that received no request,
	// and whose client answered no ping, for this long; 0: never.
	SessionIdleTimeout time.Duration
	// SessionsShared keeps the state of stateful /mcp sessions and the
	// events of their streams in MongoDB, so that any replica serves any
	// session (docs/scaling.md).
	SessionsShared bool
	// SessionKeepAlive is the interval of the pings to idle HTTP sessions
	// whose client has a stream for them; 0: no pings.
	SessionKeepAlive time.Duration
	// SecretsKey is the base64 AES-256 key (SecretsKeySize bytes) that
	// seals the secret inputs of tasks and arguments of plans at rest
	// (memory/secrets). Empty: with SQLite, a key generated into the data
	// dir; with MongoDB, those values are stored redacted. A secret: never
	// printed. File and environment only, never a flag (a command line is
	// visible to every local user).
	SecretsKey string
	// RequestStateKey is the base64 HMAC-SHA-256 key
	// (RequestStateKeySize bytes) that signs the requestState of the
	// input_required answers run_task and execute_task give clients of
	// MCP 2026-07-28, so that their retry can land on any replica. Empty:
	// with SQLite, a key generated into the data dir; with MongoDB, a key
	// of this process only (a retry must then come back to it). A secret:
	// never printed; file and environment only.
	RequestStateKey string
	// RequestStateTTL is how long such a requestState is accepted. At
	// least [MinRequestStateTTL].
	RequestStateTTL time.Duration
	// MemoryVisibility says whose learnings, insights and plan patterns a
	// principal reads through the memory tools and the agents: its own
	// (principal, the default) or every principal's (shared).
	MemoryVisibility agentsmcp.MemoryVisibility
	// InsightRetention is how long an insight is kept after it was
	// created, whoever's it is; 0 keeps insights forever. When set,
	// every replica sweeps the insights past it. At least
	// [MinInsightRetention] when not 0.
	InsightRetention time.Duration

	// The quotas per principal, enforced against the store (package
	// memory/quota); 0 is no quota. A create past one is refused (HTTP
	// 429 on the admin API and the REST bridge, an isError result over
	// MCP).
	QuotaInsightsMaxCount, QuotaInsightsMaxBytes int64
	QuotaTasksMaxCount, QuotaTasksMaxBytes       int64
	// QuotaListenTaskIDs bounds the distinct task ids the
	// subscriptions/listen streams of one principal watch at once on one
	// replica; 0 is no bound.
	QuotaListenTaskIDs int

	// UpstreamSyncInterval is how often a replica reads the upstreams
	// and the http_tools sources added through the admin API from the
	// store. At least
	// [MinUpstreamSyncInterval].
	UpstreamSyncInterval time.Duration

	Stateless    bool  // serve MCP without sessions
	MaxBodyBytes int64 // largest accepted request body, > 0
	// MaxResultBytes bounds one answer of an upstream (limits.
	// max_result_bytes): an MCP upstream's message, an HTTP tool's body.
	// Past it the answer is refused and not read further.
	MaxResultBytes int64
	// CachedUpstreamReads bounds, in entries, the cache of upstream
	// resources/read results that upstreams mark cacheable (limits.
	// cached_upstream_reads); 0, the default, turns it off.
	CachedUpstreamReads int
	ShutdownTimeout     time.Duration // grace period for in-flight requests, >= 0
	// AllowedOrigins (scheme://host[:port]) and AllowedHosts (host[:port])
	// extend the DNS-rebinding protection beyond the listen address.
	AllowedOrigins []string
	AllowedHosts   []string
	LogLevel       string // debug | info | warn | error
	// PublicURL is the server's URL as browsers reach it (scheme://host
	// [:port], no path): OAuth authorization servers send people back to
	// PublicURL + /oauth/callback. Empty: http://<addr>.
	PublicURL string

	Insecure            bool // allow a non-loopback bind without credentials
	ConformanceFixtures bool // add the conformance-suite fixtures

	Upstreams []Upstream
	// VirtualServers are the virtual_servers of the config file: curated
	// views of the catalog at /mcp/<name> (config file only).
	VirtualServers []*agentsmcp.VirtualServer
	// StdioServer is the virtual server `agents-mcp stdio` serves
	// (--server); "" serves the whole catalog.
	StdioServer string
	// HTTPTools are the http_tools sources: HTTP APIs whose endpoints or
	// OpenAPI operations become tools (config file only).
	HTTPTools []HTTPSource
	// Egress adjusts the egress policy of the upstream URLs (package
	// egress): Allow lifts the default refusals (cloud metadata,
	// link-local) for the hosts and networks it lists, Deny adds refusals.
	Egress egress.Config
	// OpenAPIBudget bounds the loading of each OpenAPI document of the
	// http_tools sources, from the file and the admin API alike.
	OpenAPIBudget httptools.Budget
	// CatalogMode is how tools/list shows the catalog to a caller whose
	// key, token or endpoint does not choose: every tool, or the discovery
	// meta-tools and CatalogPinned.
	CatalogMode agentsmcp.CatalogMode
	// CatalogPinned are path.Match patterns of the tools that discovery
	// mode lists besides the meta-tools (a caller still sees only those its
	// allowlist admits).
	CatalogPinned []string
	// CatalogPublishUpstreams are path.Match patterns of the upstreams
	// (and HTTP tool sources) served and published in the registry API as
	// virtual servers of their own.
	CatalogPublishUpstreams []string

	sources map[string]Source
}

// Default returns the configuration used when nothing is configured. All
// sources are [SourceDefault].
func Default() *Config {
	return &Config{
		Addr:             DefaultAddr,
		DataDir:          DefaultDataDir,
		MongoDatabase:    DefaultMongoDatabase,
		Embedder:         DefaultEmbedder,
		LLM:              DefaultLLM,
		MaxBodyBytes:     DefaultMaxBodyBytes,
		MaxResultBytes:   DefaultMaxResultBytes,
		ShutdownTimeout:  DefaultShutdownTimeout,
		LogLevel:         DefaultLogLevel,
		JWT:              JWTConfig{ScopesClaim: auth.DefaultScopesClaim},
		RateLimit:        DefaultRateLimit,
		RateBurst:        DefaultRateBurst,
		AuthFailureRate:  DefaultAuthFailureRate,
		AuthFailureBurst: DefaultAuthFailureBurst,
		AuditRetention:   DefaultAuditRetention,
		AuditMaxEntries:  DefaultAuditMaxEntries,
		AuditCalls:       AuditCallsDB,

		TaskLeaseTTL:       DefaultTaskLeaseTTL,
		SessionIdleTimeout: DefaultSessionIdleTimeout,
		SessionKeepAlive:   DefaultSessionKeepAlive,
		TaskResumeInterval: DefaultTaskResumeInterval,
		TaskInputWait:      DefaultTaskInputWait,
		RequestStateTTL:    DefaultRequestStateTTL,

		MemoryVisibility: DefaultMemoryVisibility,

		QuotaInsightsMaxCount: DefaultQuotaInsightsMaxCount,
		QuotaInsightsMaxBytes: DefaultQuotaInsightsMaxBytes,
		QuotaTasksMaxCount:    DefaultQuotaTasksMaxCount,
		QuotaTasksMaxBytes:    DefaultQuotaTasksMaxBytes,
		QuotaListenTaskIDs:    DefaultQuotaListenTaskIDs,

		UpstreamSyncInterval: remote.DefaultSyncInterval,
		OpenAPIBudget:        defaultOpenAPIBudget(),
		CatalogMode:          DefaultCatalogMode,
	}
}

// Source reports which layer supplied the setting with the given name (the
// names [Config.Describe] uses, e.g. "addr", "mongodb.uri", "embedder").
// Settings nobody set, and unknown names, report [SourceDefault].
func (c *Config) Source(name string) Source {
	if s, ok := c.sources[name]; ok {
		return s
	}
	return SourceDefault
}

func (c *Config) setSource(name string, s Source) {
	if c.sources == nil {
		c.sources = make(map[string]Source)
	}
	c.sources[name] = s
}

// IsLoopbackAddr reports whether Addr binds only loopback: a host of
// 127.0.0.0/8, ::1 or "localhost". An empty host (":8080"), 0.0.0.0, :: and any
// other name are not loopback, because they may be reachable from elsewhere.
func (c *Config) IsLoopbackAddr() bool {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return ip.Unmap().IsLoopback()
}

// UseStdioLogDefault makes [DefaultStdioLogLevel] the log level when no
// layer (flag, environment, file) set one; `agents-mcp stdio` calls it.
func (c *Config) UseStdioLogDefault() {
	if c.Source("log_level") == SourceDefault {
		c.LogLevel = DefaultStdioLogLevel
	}
}

// SlogLevel returns LogLevel as a slog.Level; an unknown level (only possible
// in a Config that was not loaded) is Info.
func (c *Config) SlogLevel() slog.Level {
	switch c.LogLevel {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Load builds the effective configuration from the command-line arguments
// that follow the subcommand (e.g. os.Args[2:]) and the environment read
// through getenv (nil means os.Getenv).
//
// Flags: --addr, --config, --data-dir, --stateless, --insecure, --log-level and
// the hidden --conformance-fixtures. Only flags present in args override. The
// config file is named by --config, else by AGENTS_MCP_CONFIG; naming a file
// that cannot be read is an error. An environment variable counts as set only
// when it is non-empty (after trimming spaces).
//
// Flag errors and -h are printed with the usage to stderr, as the flag package
// does; -h returns an error that matches flag.ErrHelp with errors.Is. All
// problems in the file values, environment and final settings are reported
// together, each naming its field, joined with errors.Join.
func Load(args []string, getenv func(string) string) (*Config, error) {
	return load(args, getenv, os.Stderr)
}

// hiddenFlags are accepted but left out of the usage text: they exist for the
// conformance harness, not for users.
var hiddenFlags = map[string]bool{"conformance-fixtures": true}

type flagValues struct {
	addr, config, dataDir, logLevel string
	stateless, insecure, fixtures   bool
	server                          string
}

func newFlagSet(out io.Writer) (*flag.FlagSet, *flagValues) {
	v := &flagValues{}
	fs := flag.NewFlagSet("agents-mcp", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&v.addr, "addr", DefaultAddr, "listen `host:port` (env AGENTS_MCP_ADDR)")
	fs.StringVar(&v.config, "config", "", "YAML config `file` (env AGENTS_MCP_CONFIG)")
	fs.StringVar(&v.dataDir, "data-dir", DefaultDataDir, "`dir`ectory of the embedded store and index (env AGENTS_MCP_DATA_DIR)")
	fs.BoolVar(&v.stateless, "stateless", false, "serve MCP without sessions (env AGENTS_MCP_STATELESS)")
	fs.BoolVar(&v.insecure, "insecure", false, "allow a non-loopback listen address without credentials")
	fs.StringVar(&v.logLevel, "log-level", DefaultLogLevel, "debug, info, warn or error (env AGENTS_MCP_LOG_LEVEL)")
	fs.BoolVar(&v.fixtures, "conformance-fixtures", false, "add the MCP conformance-suite fixtures")
	fs.StringVar(&v.server, "server", "", "stdio: serve the virtual server `name` in place of the whole catalog")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: agents-mcp serve|stdio [flags]\n\nFlags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			if hiddenFlags[f.Name] {
				return
			}
			name, usage := flag.UnquoteUsage(f)
			line := "  --" + f.Name
			if name != "" {
				line += " " + name
			}
			fmt.Fprintf(w, "%s\n    \t%s", line, usage)
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
	}
	return fs, v
}

func load(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	fs, fv := newFlagSet(out)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })

	l := &loader{cfg: Default(), getenv: getenv}
	c := l.cfg

	// The file must be located before anything else is applied, since it is
	// the lowest non-default layer.
	switch {
	case setFlags["config"]:
		c.ConfigFile = fv.config
		c.setSource("config", flagSource("config"))
	case l.env("AGENTS_MCP_CONFIG") != "":
		c.ConfigFile = l.env("AGENTS_MCP_CONFIG")
		c.setSource("config", envSource("AGENTS_MCP_CONFIG"))
	}
	if c.ConfigFile != "" {
		f, err := readFile(c.ConfigFile)
		if err != nil {
			return nil, err
		}
		l.applyFile(f)
	}

	l.applyEnv()

	if setFlags["addr"] {
		c.Addr = fv.addr
		c.setSource("addr", flagSource("addr"))
	}
	if setFlags["data-dir"] {
		c.DataDir = fv.dataDir
		c.setSource("data_dir", flagSource("data-dir"))
	}
	if setFlags["log-level"] {
		c.LogLevel = strings.ToLower(strings.TrimSpace(fv.logLevel))
		c.setSource("log_level", flagSource("log-level"))
	}
	if setFlags["stateless"] {
		c.Stateless = fv.stateless
		c.setSource("stateless", flagSource("stateless"))
	}
	if setFlags["insecure"] {
		c.Insecure = fv.insecure
		c.setSource("insecure", flagSource("insecure"))
	}
	if setFlags["conformance-fixtures"] {
		c.ConformanceFixtures = fv.fixtures
		c.setSource("conformance_fixtures", flagSource("conformance-fixtures"))
	}
	if setFlags["server"] {
		c.StdioServer = strings.TrimSpace(fv.server)
		c.setSource("stdio.server", flagSource("server"))
	}

	l.errs = append(l.errs, c.validate()...)
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return c, nil
}

// loader carries the configuration being built and the problems found so far,
// so that every layer can report all of its problems instead of the first.
type loader struct {
	cfg    *Config
	getenv func(string) string
	errs   []error
}

func (l *loader) errorf(field, format string, args ...any) {
	l.errs = append(l.errs, fieldError(field, format, args...))
}

func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("config: %s: %s", field, fmt.Sprintf(format, args...))
}

func (l *loader) env(name string) string { return strings.TrimSpace(l.getenv(name)) }

// splitList parses a comma-separated list: entries are trimmed and empty
// entries dropped, so "a, ,b," is [a b].
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// cleanList applies the splitList rules to a list from the file.
func cleanList(in []string) []string {
	var out []string
	for _, p := range in {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
