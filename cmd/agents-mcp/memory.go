package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mongo"
	"github.com/agents-mcp/agents-mcp/memory/pinecone"
	"github.com/agents-mcp/agents-mcp/memory/quota"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// store is what the server needs of a memory store; memory/sqlite and
// memory/mongo both provide it.
type store interface {
	agentsmcp.InsightService
	agentsmcp.LearningService
	agentsmcp.ToolPerformanceService
	agentsmcp.PatternService
	agentsmcp.OutboxService
	agentsmcp.ThoughtService
	agentsmcp.PlanService
	agentsmcp.TaskService
	agentsmcp.AuditService
	agentsmcp.UpstreamService
	agentsmcp.VirtualServerService
	agentsmcp.CredentialService
	agentsmcp.UsageService
	agentsmcp.InsightPruner
	agentsmcp.CallCounterService
	CountTasksByStatus(ctx context.Context) (map[agentsmcp.TaskStatus]int64, error)
	Ping(ctx context.Context) error
}

// memory is the assembled memory layer: store, embedder, vector index and
// the syncer between them.
type memory struct {
	store store
	// tasks, plans, thoughts and insights are the store's, with their
	// secrets sealed or redacted at rest (memory/secrets), tasks and
	// insights within the quotas of their principals (memory/quota): what
	// the agents, the memory tools and the admin API use.
	tasks    agentsmcp.TaskService
	plans    agentsmcp.PlanService
	thoughts agentsmcp.ThoughtService
	insights agentsmcp.InsightService
	// credentials is the credential store with its secrets sealed (ADR
	// 0012); nil when no secrets key is configured, since credentials
	// cannot then be kept.
	credentials *secrets.Credentials
	// upstreamDefinitions are the upstreams and HTTP tool sources added
	// through the admin API, their header values sealed at rest.
	upstreamDefinitions agentsmcp.UpstreamService
	embedder            agentsmcp.Embedder
	// queryEmbedder embeds search queries: embedder, or its query twin.
	queryEmbedder agentsmcp.Embedder
	index         agentsmcp.VectorIndex
	// embedded is the embedded index, read in the background by run
	// (see embeddedIndex); nil with Pinecone.
	embedded *embeddedIndex
	syncer   *vectorsync.Syncer
	where    string // for logs: which store, never credentials

	reconcile struct {
		sync.Mutex
		progress vectorsync.Progress
		done     bool
		err      error
	}
	closers []func(context.Context) error
}

// SQLiteFile is the embedded store's file name under the data dir.
const SQLiteFile = "agents-mcp.db"

// SecretsKeyFile is the file under the data dir that holds the generated
// secrets key of the embedded store, when tasks.secrets_key is not set.
const SecretsKeyFile = "secrets.key"

// openSealer returns what seals the secrets of tasks and plans at rest:
// the configured key; else, with the embedded store, the key in the data
// dir (generated on first start, mode 0600), so that `make run` needs no
// setup; else (MongoDB, several replicas, no shared key) redaction, with a
// warning.
func openSealer(cfg *config.Config, logger *slog.Logger) (*secrets.Sealer, error) {
	if key := cfg.SecretsKeyBytes(); key != nil {
		return secrets.New(key)
	}
	if cfg.MongoURI != "" {
		logger.Warn("tasks.secrets_key (AGENTS_MCP_SECRETS_KEY) is not set: secret task inputs and plan arguments are stored redacted, " +
			"so a paused task asks for them again when resumed, and a plan that holds one runs without it; set the same key on every replica")
		return secrets.Redacting(), nil
	}
	key, err := secretsKeyFile(filepath.Join(cfg.DataDir, SecretsKeyFile))
	if err != nil {
		return nil, err
	}
	return secrets.New(key)
}

// secretsKeyFile reads the base64 key in path, creating it with a random
// key (mode 0600, never replaced) when it does not exist.
func secretsKeyFile(path string) ([]byte, error) {
	return keyFile(path, "secrets key", secrets.KeySize, "secrets sealed with the old key are then lost")
}

// keyFile reads the base64 key of size bytes in path, creating it with a
// random key (mode 0600, never replaced) when it does not exist. what
// names the key in errors; loss says what removing it loses.
func keyFile(path, what string, size int, loss string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, size)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate the %s: %w", what, err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create the %s: %w", what, err)
		}
		// Written whole under another name, then linked into place: a
		// process starting at the same moment either finds no key or the
		// whole one, never an empty file.
		tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
		if err != nil {
			return nil, fmt.Errorf("create the %s: %w", what, err)
		}
		defer os.Remove(tmp.Name())
		_, werr := tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		serr := tmp.Sync()
		if err := errors.Join(werr, serr, tmp.Close()); err != nil {
			return nil, fmt.Errorf("write the %s %s: %w", what, path, err)
		}
		if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
			return keyFile(path, what, size, loss) // another process made it first
		} else if err != nil {
			return nil, fmt.Errorf("create the %s: %w", what, err)
		}
		return key, nil
	} else if err != nil {
		return nil, fmt.Errorf("read the %s: %w", what, err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != size {
		return nil, fmt.Errorf("the %s %s is not %d bytes of base64; restore it, or remove it to make a new one (%s)", what, path, size, loss)
	}
	return key, nil
}

// indexSaveInterval is how often the embedded vector index is saved while
// it changes; a crash loses at most this much of it, which the next start
// reconciles from the store.
const indexSaveInterval = 30 * time.Second

// openMemory opens the store selected by cfg (MongoDB when MONGODB_URI is
// set, else SQLite under the data dir), the embedder and the vector index
// (Pinecone when configured, else the embedded index under the data dir).
// An unreachable MongoDB fails here, within the driver's selection timeout.
func openMemory(ctx context.Context, cfg *config.Config, logger *slog.Logger) (_ *memory, err error) {
	m := &memory{}
	defer func() {
		if err != nil {
			m.close(context.WithoutCancel(ctx))
		}
	}()
	if cfg.MongoURI != "" {
		db, err := mongo.Open(ctx, cfg.MongoURI, cfg.MongoDatabase)
		if err != nil {
			return nil, err // names the hosts, never the credentials
		}
		m.store, m.where = db, "mongodb database "+db.Database()
		m.closers = append(m.closers, db.Close)
	} else {
		path := filepath.Join(cfg.DataDir, SQLiteFile)
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("open the embedded store: %w", err)
		}
		m.store, m.where = db, "sqlite "+db.Path()
		m.closers = append(m.closers, func(context.Context) error { return db.Close() })
	}
	sealer, err := openSealer(cfg, logger)
	if err != nil {
		return nil, err
	}
	// The quotas wrap the store itself, so that they count what is
	// stored: sealed values, redacted texts.
	taskQuota := &quota.Tasks{TaskService: m.store, Usage: m.store,
		Quota: quota.Quota{MaxCount: cfg.QuotaTasksMaxCount, MaxBytes: cfg.QuotaTasksMaxBytes}}
	insightQuota := &quota.Insights{InsightService: m.store, Usage: m.store,
		Quota: quota.Quota{MaxCount: cfg.QuotaInsightsMaxCount, MaxBytes: cfg.QuotaInsightsMaxBytes}}
	m.tasks = &secrets.Tasks{TaskService: taskQuota, Sealer: sealer}
	m.plans = &secrets.Plans{PlanService: m.store, Sealer: sealer}
	m.thoughts = &secrets.Thoughts{ThoughtService: m.store}
	m.insights = &secrets.Insights{InsightService: insightQuota}
	if sealer.Encrypts() {
		m.credentials = &secrets.Credentials{CredentialService: m.store, Sealer: sealer}
	}
	m.upstreamDefinitions = &secrets.UpstreamDefinitions{UpstreamService: m.store, Sealer: sealer, Logger: logger}

	m.embedder, m.queryEmbedder, err = newEmbedder(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if m.index, err = openIndex(ctx, cfg, m, logger); err != nil {
		return nil, err
	}
	m.syncer, err = vectorsync.New(vectorsync.Config{
		Outbox: m.store, Index: m.index, Embedder: m.embedder,
		Sources: []vectorsync.Source{vectorsync.Learnings(m.store), vectorsync.Insights(m.store), vectorsync.Patterns(m.store)},
		Logger:  logger,
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// newEmbedder builds the embedder named by cfg.Embedder, and the twin that
// embeds search queries (the same one, except for Pinecone's, which embeds
// queries and passages differently). A remote model of unknown size is
// asked once, at start, how many dimensions it has: the index needs it.
func newEmbedder(ctx context.Context, cfg *config.Config) (docs, queries agentsmcp.Embedder, err error) {
	ec := embed.Config{BaseURL: cfg.EmbeddingsBaseURL, Model: cfg.EmbeddingsModel, APIKey: cfg.EmbeddingsAPIKey}
	switch cfg.Embedder {
	case "hash":
		return embed.Hash{}, embed.Hash{}, nil
	case "", "semantic":
		return embed.Semantic{}, embed.Semantic{}, nil
	case "openai":
		ec.APIKey = cmp.Or(ec.APIKey, cfg.OpenAIAPIKey)
		docs, err = embed.NewOpenAI(ec)
		queries = docs
	case "ollama":
		docs, err = embed.NewOllama(ec)
		queries = docs
	case "pinecone":
		ec.APIKey = cmp.Or(ec.APIKey, cfg.PineconeAPIKey)
		var p *embed.Pinecone
		p, err = embed.NewPinecone(ec)
		docs, queries = p, p.ForQueries()
	default:
		return nil, nil, fmt.Errorf("unknown embedder %q", cfg.Embedder)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("embedder %s: %w", cfg.Embedder, err)
	}
	if docs.Dimensions() == 0 {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := docs.Embed(pctx, []string{"dimension probe"}); err != nil {
			return nil, nil, fmt.Errorf("embedder %s: model %q is not one whose size is known, and asking it failed: %s", cfg.Embedder, cfg.EmbeddingsModel, agentsmcp.ErrorMessage(err))
		}
	}
	return docs, queries, nil
}

// openIndex opens the vector index selected by cfg: Pinecone when
// configured, else the embedded index under the data dir.
func openIndex(ctx context.Context, cfg *config.Config, m *memory, logger *slog.Logger) (agentsmcp.VectorIndex, error) {
	if cfg.PineconeAPIKey != "" && (cfg.PineconeHost != "" || cfg.PineconeIndex != "") {
		idx, err := pinecone.Open(ctx, pinecone.Config{
			APIKey: cfg.PineconeAPIKey, Index: cfg.PineconeIndex, Host: cfg.PineconeHost, NamespacePrefix: cfg.PineconeNamespace,
			Dimensions: m.embedder.Dimensions(),
		})
		if err != nil {
			return nil, fmt.Errorf("pinecone: %w", err)
		}
		m.closers = append(m.closers, func(context.Context) error { return idx.Close() })
		logger.Info("vector index", "index", idx.String())
		return idx, nil
	}
	if cfg.PineconeAPIKey != "" {
		logger.Warn("PINECONE_API_KEY is set without PINECONE_INDEX or PINECONE_HOST; using the embedded vector index")
	}
	// The data dir must be writable now, as it must for the store; the
	// file itself is read by run, in the background.
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("vector index dir: %w", err)
	}
	id, dims := m.embedder.ID(), m.embedder.Dimensions()
	m.embedded = newEmbeddedIndex(func() (*vectors.Durable, vectors.OpenStatus, error) {
		return vectors.OpenDurable(cfg.DataDir, id, dims, vectors.HNSWOptions{})
	})
	return m.embedded, nil
}

// run starts the memory layer's background work, all of it ending with
// ctx: the outbox worker, and with the embedded index its load from the
// file (which cannot be interrupted: a shutdown during it waits for it),
// then its reconciliation with the store and its periodic saves. wg
// tracks the goroutines.
func (m *memory) run(ctx context.Context, wg *sync.WaitGroup, logger *slog.Logger) {
	wg.Go(func() { m.syncer.Run(ctx) }) // its writes to the embedded index wait for the load
	if m.embedded == nil {
		m.setReconciled(nil)
		return
	}
	wg.Go(func() {
		start := time.Now()
		d, err := m.embedded.Load(logger)
		if err != nil {
			m.setReconciled(err)
			return
		}
		reportSave := func(err error) { logger.Warn("vector index save failed", "err", err) }
		if ctx.Err() != nil {
			// Shutting down as the load ended: the outbox worker may have
			// written to the index already, so save it (Run does, at once).
			d.Run(ctx, indexSaveInterval, reportSave)
			return
		}
		wg.Go(func() { // wg counts this goroutine, so it cannot be waiting on zero
			d.Run(ctx, indexSaveInterval, reportSave)
		})
		err = m.syncer.Reconcile(ctx, false, func(p vectorsync.Progress) {
			m.reconcile.Lock()
			m.reconcile.progress = p
			m.reconcile.Unlock()
			if p.Total > 0 && (p.Done == p.Total || p.Done%(16*256) == 0) {
				logger.Info("vector index catching up with the store", "namespace", p.Namespace, "done", p.Done, "total", p.Total, "removed", p.Removed)
			}
		})
		if err != nil && ctx.Err() == nil {
			logger.Error("vector index reconciliation failed; semantic search may miss documents until the next start or `agents-mcp reindex`", "err", err)
		} else if err == nil {
			logger.Info("vector index in step with the store", "took", time.Since(start).Round(time.Millisecond).String())
		}
		m.setReconciled(err)
	})
}

// embeddedLoaded is the embedded index once loaded; nil while it loads
// and with Pinecone.
func (m *memory) embeddedLoaded() *vectors.Durable {
	if m.embedded == nil {
		return nil
	}
	return m.embedded.Loaded()
}

func (m *memory) setReconciled(err error) {
	m.reconcile.Lock()
	defer m.reconcile.Unlock()
	m.reconcile.done, m.reconcile.err = true, err
}

// storeCheck is the store's readiness check: a ping, and the outbox
// backlog, which grows while the embedder or index is failing.
func (m *memory) storeCheck(ctx context.Context) (any, error) {
	if err := m.store.Ping(ctx); err != nil {
		return map[string]any{"store": m.where}, errors.New(agentsmcp.ErrorMessage(err))
	}
	pending, oldest, err := m.store.OutboxBacklog(ctx)
	if err != nil {
		return map[string]any{"store": m.where}, errors.New(agentsmcp.ErrorMessage(err))
	}
	detail := map[string]any{"store": m.where, "vectorOutbox": pending}
	if pending > 0 {
		detail["vectorOutboxOldest"] = oldest
	}
	return detail, nil
}

// indexCheck reports the vector index; it does not fail readiness while
// the embedded index loads ("loading") or catches up with the store
// ("catching up"), because every search falls back to the store's word
// filter meanwhile.
func (m *memory) indexCheck(context.Context) (any, error) {
	m.reconcile.Lock()
	defer m.reconcile.Unlock()
	detail := map[string]any{"embedder": m.embedder.ID()}
	loading := false
	if m.embedded != nil {
		detail["index"] = "embedded"
		detail["learnings"] = m.embedded.Len(agentsmcp.NamespaceLearnings)
		detail["insights"] = m.embedded.Len(agentsmcp.NamespaceInsights)
		detail["patterns"] = m.embedded.Len(agentsmcp.NamespacePatterns)
		loading = m.embedded.Loaded() == nil
	}
	switch {
	case loading && !m.reconcile.done:
		detail["state"] = "loading"
	case !m.reconcile.done:
		detail["state"] = "catching up"
		detail["progress"] = m.reconcile.progress
	case m.reconcile.err != nil:
		detail["state"] = "reconciliation failed: " + agentsmcp.ErrorMessage(m.reconcile.err)
	default:
		detail["state"] = "ready"
	}
	return detail, nil
}

// close releases the store; the embedded index saves itself when run's
// context ends.
func (m *memory) close(ctx context.Context) error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i](ctx))
	}
	return errors.Join(errs...)
}
