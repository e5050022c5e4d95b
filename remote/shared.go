package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/syncloop"
)

// This file keeps the upstreams added at run time in the store, so that
// every replica serves the same set and it outlives restarts.

// DefaultSyncInterval is how often [SharedUpstreams.Run] reads the store:
// an upstream added or removed on one replica reaches the others within
// about this long.
const DefaultSyncInterval = 10 * time.Second

// syncTimeout bounds one store read and the first connect attempts of the
// upstreams it adds, so that a slow store or upstream cannot stall the
// loop; upstreams keep connecting in the background afterwards.
const syncTimeout = 10 * time.Second

// SharedUpstreams is the set of upstreams added at run time (through the
// admin API) over a [Pool]: [SharedUpstreams.Add] and
// [SharedUpstreams.Remove] change the store and this replica's pool, and
// [SharedUpstreams.Sync] makes the pool follow the store, picking up what
// other replicas (or this one before a restart) stored.
//
// Upstreams of the config file are started from the file by each replica.
// Removing one through Remove stores a tombstone under its name, so that
// every replica stops it and it stays stopped across restarts, until an
// upstream of that name is added through Add (which replaces the
// tombstone). A stored definition whose name a config-file upstream holds
// is left aside (and logged) on that replica.
//
// Only streamable and sse upstreams are ever stored or started from the
// store: whoever can write to the database must not be able to make a
// replica run a command. Header values are stored as given, because every
// replica needs them to connect: protect the database as a holder of those
// credentials.
//
// A SharedUpstreams is safe for concurrent use.
type SharedUpstreams struct {
	pool   *Pool
	store  agentsmcp.UpstreamService
	logger *slog.Logger

	mu sync.Mutex
	// applied holds, per name, the stored revision this replica follows:
	// an upstream its pool runs, or a tombstone whose config-file
	// upstream it stopped.
	applied map[string]appliedRevision
	// busy holds names that an Add or Remove is changing outside mu (while
	// the pool connects or closes); Sync leaves them alone.
	busy map[string]bool
	// reported remembers, per name, the revision last logged as not
	// startable, so that each problem is logged once and not every Sync.
	reported map[string]string
}

type appliedRevision struct {
	revision  string
	tombstone bool
}

// NewSharedUpstreams returns the run-time upstreams over pool, stored in
// store. Nothing is read from the store until [SharedUpstreams.Sync].
func NewSharedUpstreams(pool *Pool, store agentsmcp.UpstreamService, logger *slog.Logger) *SharedUpstreams {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SharedUpstreams{
		pool: pool, store: store, logger: logger,
		applied: map[string]appliedRevision{}, busy: map[string]bool{}, reported: map[string]string{},
	}
}

// Add stores cfg and starts it in this replica's pool; the other replicas
// start it at their next Sync. It returns once the first connect attempt
// ended or ctx is done, as [Pool.Add]. Errors: EINVALID for a bad or stdio
// config or for a URL the pool's egress policy refuses (nothing stored),
// ECONFLICT for a name in use here or in the store, and the store's errors.
func (s *SharedUpstreams) Add(ctx context.Context, cfg agentsmcp.UpstreamConfig) error {
	cfg = cfg.WithDefaults()
	raw, err := encodeStoredConfig(cfg)
	if err != nil {
		return err
	}
	// Refused before it is stored, so that no replica ever tries it.
	if err := s.pool.checkEgress(ctx, cfg); err != nil {
		return err
	}
	s.mu.Lock()
	if _, inPool := s.pool.Status(cfg.Name); inPool || s.busy[cfg.Name] {
		s.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream %q already exists", cfg.Name)
	}
	def := &agentsmcp.UpstreamDefinition{Name: cfg.Name, Kind: agentsmcp.UpstreamKindMCP, Config: raw, CreatedBy: agentsmcp.PrincipalIDFrom(ctx)}
	err = s.store.CreateUpstreamDefinition(ctx, def)
	if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT && s.isTombstone(ctx, cfg.Name) {
		// A config-file upstream removed earlier: the new definition
		// takes its name over.
		if err = s.store.DeleteUpstreamDefinition(ctx, agentsmcp.UpstreamKindMCP, cfg.Name); err == nil || agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
			err = s.store.CreateUpstreamDefinition(ctx, def)
		}
	}
	if err != nil {
		s.mu.Unlock()
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT {
			// Stored by another replica and not synced here yet.
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream %q already exists", cfg.Name)
		}
		return fmt.Errorf("store upstream %q: %w", cfg.Name, err)
	}
	s.busy[cfg.Name] = true
	s.mu.Unlock()

	err = s.pool.Add(ctx, cfg)

	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, cfg.Name)
	if err != nil {
		// Not started here, so not kept: the definition must not appear
		// on the other replicas either.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
		defer cancel()
		if derr := s.store.DeleteUpstreamDefinition(dctx, agentsmcp.UpstreamKindMCP, cfg.Name); derr != nil && agentsmcp.ErrorCode(derr) != agentsmcp.ENOTFOUND {
			s.logger.Error("an upstream that could not be started stays stored; remove it through the admin API",
				"upstream", cfg.Name, "error", derr)
		}
		return err
	}
	s.applied[cfg.Name] = appliedRevision{revision: def.Revision}
	return nil
}

// isTombstone reports whether the stored definition named name is the
// tombstone of a removed config-file upstream.
func (s *SharedUpstreams) isTombstone(ctx context.Context, name string) bool {
	defs, err := s.store.ListUpstreamDefinitions(ctx, agentsmcp.UpstreamKindMCP)
	if err != nil {
		return false
	}
	for _, d := range defs {
		if d.Name == name {
			_, tomb, err := decodeStoredConfig(d)
			return err == nil && tomb
		}
	}
	return false
}

// Remove stops an upstream here, and everywhere through the store: a
// stored upstream's definition is deleted, and a config-file upstream gets
// a tombstone. The other replicas stop it at their next Sync. ENOTFOUND
// if there is no such upstream.
func (s *SharedUpstreams) Remove(ctx context.Context, name string) error {
	s.mu.Lock()
	if s.busy[name] {
		s.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream %q is being added or removed; try again", name)
	}
	st, inPool := s.pool.Status(name)
	if inPool && st.Origin == OriginConfig {
		tomb, err := s.storeTombstone(ctx, name)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		s.applied[name] = appliedRevision{revision: tomb.Revision, tombstone: true}
		s.logger.Info("upstream of the config file removed through the admin API; it stays removed on every replica until added again through the API",
			"upstream", name, "principal", tomb.CreatedBy)
	} else {
		if !inPool && s.isTombstone(ctx, name) {
			// Already removed: deleting the tombstone would bring the
			// config-file upstream back at the next restart.
			s.mu.Unlock()
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream %q does not exist", name)
		}
		err := s.store.DeleteUpstreamDefinition(ctx, agentsmcp.UpstreamKindMCP, name)
		switch {
		case agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND && !inPool:
			s.mu.Unlock()
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream %q does not exist", name)
		case err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND:
			s.mu.Unlock()
			return fmt.Errorf("remove stored upstream %q: %w", name, err)
		}
		delete(s.applied, name)
	}
	if !inPool {
		s.mu.Unlock()
		return nil // stored but not running here (a bad definition)
	}
	s.busy[name] = true
	s.mu.Unlock()

	err := s.pool.Remove(ctx, name)

	s.mu.Lock()
	delete(s.busy, name)
	s.mu.Unlock()
	if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
		return nil
	}
	return err
}

// storeTombstone replaces whatever is stored under name (a definition this
// replica leaves aside for its config-file upstream) with a tombstone.
func (s *SharedUpstreams) storeTombstone(ctx context.Context, name string) (*agentsmcp.UpstreamDefinition, error) {
	if err := s.store.DeleteUpstreamDefinition(ctx, agentsmcp.UpstreamKindMCP, name); err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		return nil, fmt.Errorf("remove stored upstream %q: %w", name, err)
	}
	tomb := &agentsmcp.UpstreamDefinition{Name: name, Kind: agentsmcp.UpstreamKindMCP, Config: json.RawMessage(tombstoneConfig), CreatedBy: agentsmcp.PrincipalIDFrom(ctx)}
	if err := s.store.CreateUpstreamDefinition(ctx, tomb); err != nil {
		return nil, fmt.Errorf("store the removal of upstream %q: %w", name, err)
	}
	return tomb, nil
}

// Sync makes this replica's pool follow the store: it starts the stored
// upstreams it does not run, restarts those stored again under a new
// revision, stops those no longer stored, and stops the config-file
// upstreams that have a tombstone. A definition that cannot be started is
// logged and skipped; the store's error, if it cannot be read, is returned
// with the pool unchanged.
func (s *SharedUpstreams) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defs, err := s.store.ListUpstreamDefinitions(ctx, agentsmcp.UpstreamKindMCP)
	if err != nil {
		return fmt.Errorf("list stored upstreams: %w", err)
	}
	stored := make(map[string]*agentsmcp.UpstreamDefinition, len(defs))
	for _, d := range defs {
		stored[d.Name] = d
	}
	for name, ap := range s.applied {
		if d, ok := stored[name]; ok && d.Revision == ap.revision {
			continue
		}
		delete(s.applied, name)
		if ap.tombstone {
			// The upstream of the config file comes back at the next
			// start, unless the name is now stored for another one.
			continue
		}
		if err := s.pool.Remove(ctx, name); err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			s.logger.Warn("stopping an upstream removed from the store", "upstream", name, "error", err)
		}
		s.logger.Info("upstream removed from the store by another replica", "upstream", name)
	}
	var toAdd []agentsmcp.UpstreamConfig
	var revisions []string
	for _, d := range defs {
		if _, ok := s.applied[d.Name]; ok || s.busy[d.Name] {
			continue
		}
		cfg, tomb, err := decodeStoredConfig(d)
		if err != nil {
			s.reportOnce(d, "a stored upstream cannot be started on this replica", err)
			continue
		}
		st, inPool := s.pool.Status(d.Name)
		switch {
		case tomb && inPool && st.Origin == OriginConfig:
			if err := s.pool.Remove(ctx, d.Name); err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
				s.logger.Warn("stopping a config-file upstream removed through the admin API", "upstream", d.Name, "error", err)
				continue
			}
			s.logger.Info("upstream of the config file stays removed: it was removed through the admin API",
				"upstream", d.Name, "removedBy", d.CreatedBy, "removedAt", d.CreatedAt)
			s.applied[d.Name] = appliedRevision{revision: d.Revision, tombstone: true}
		case tomb:
			s.applied[d.Name] = appliedRevision{revision: d.Revision, tombstone: true}
		case inPool:
			s.reportOnce(d, "a stored upstream has the name of a config-file upstream; the config file's is kept on this replica", nil)
		default:
			toAdd, revisions = append(toAdd, cfg), append(revisions, d.Revision)
		}
	}
	for name := range s.reported {
		if _, ok := stored[name]; !ok {
			delete(s.reported, name)
		}
	}

	// Upstreams start concurrently, so that one slow to connect does not
	// delay the others.
	errs := make([]error, len(toAdd))
	var wg sync.WaitGroup
	for i, cfg := range toAdd {
		wg.Go(func() { errs[i] = s.pool.Add(ctx, cfg) })
	}
	wg.Wait()
	for i, cfg := range toAdd {
		if errs[i] != nil {
			s.reportOnce(stored[cfg.Name], "a stored upstream cannot be started on this replica", errs[i])
			continue
		}
		s.applied[cfg.Name] = appliedRevision{revision: revisions[i]}
		delete(s.reported, cfg.Name)
		s.logger.Info("upstream started from the store", "upstream", cfg.Name, "revision", revisions[i])
	}
	return nil
}

func (s *SharedUpstreams) reportOnce(d *agentsmcp.UpstreamDefinition, msg string, err error) {
	if s.reported[d.Name] == d.Revision {
		return
	}
	s.reported[d.Name] = d.Revision
	s.logger.Warn(msg, "upstream", d.Name, "revision", d.Revision, "error", err)
}

// Run calls Sync every interval (at least [syncloop.MinInterval]) until
// ctx is done, logging a failure when it starts and when it ends rather
// than at every attempt.
func (s *SharedUpstreams) Run(ctx context.Context, interval time.Duration) {
	syncloop.Loop{Sync: s.Sync, Timeout: syncTimeout, Logger: s.logger,
		Failing:   "cannot read the stored upstreams; this replica keeps its current ones",
		Recovered: "the stored upstreams are readable again"}.Run(ctx, interval)
}

// Refresh is [Pool.Refresh].
func (s *SharedUpstreams) Refresh(ctx context.Context, name string) (Status, error) {
	return s.pool.Refresh(ctx, name)
}

// Status is [Pool.Status].
func (s *SharedUpstreams) Status(name string) (Status, bool) { return s.pool.Status(name) }

// Statuses is [Pool.Statuses].
func (s *SharedUpstreams) Statuses() []Status { return s.pool.Statuses() }

// History is [Pool.History]: this replica's view.
func (s *SharedUpstreams) History(name string) ([]agentsmcp.UpstreamTransition, bool) {
	return s.pool.History(name)
}

// Tools is [Pool.Tools].
func (s *SharedUpstreams) Tools(ctx context.Context, name string) ([]*mcp.Tool, error) {
	return s.pool.Tools(ctx, name)
}

// storedConfig is the stored form of a run-time upstream's [agentsmcp.UpstreamConfig]. It has
// no stdio fields, and decoding refuses unknown ones, so a stored
// definition can never name a command.
type storedConfig struct {
	// Removed marks the tombstone of a config-file upstream removed
	// through the API; nothing else is set then.
	Removed         bool              `json:"removed,omitempty"`
	Transport       string            `json:"transport,omitempty"`
	URL             string            `json:"url"`
	Headers         map[string]string `json:"headers,omitempty"`
	Auth            string            `json:"auth,omitempty"`
	Allow           []string          `json:"allow,omitempty"`
	Deny            []string          `json:"deny,omitempty"`
	Timeout         string            `json:"timeout,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	MaxConcurrency  int               `json:"maxConcurrency,omitempty"`
	MaxBackoff      string            `json:"maxBackoff,omitempty"`
}

// tombstoneConfig is the stored config of a tombstone.
const tombstoneConfig = `{"removed":true}`

// encodeStoredConfig checks cfg as [Pool.Add] would and encodes it.
func encodeStoredConfig(cfg agentsmcp.UpstreamConfig) (json.RawMessage, error) {
	if cfg.Transport != TransportStreamable && cfg.Transport != TransportSSE {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID,
			"upstream %q: only streamable and sse upstreams can be added at run time; stdio upstreams belong in the config file", cfg.Name)
	}
	if err := configError(cfg); err != nil {
		return nil, err
	}
	sc := storedConfig{
		Transport: cfg.Transport, URL: cfg.URL, Headers: cfg.Headers, Auth: cfg.Auth,
		Allow: cfg.Tools.Allow, Deny: cfg.Tools.Deny,
		ProtocolVersion: cfg.ProtocolVersion, MaxConcurrency: cfg.MaxConcurrency,
	}
	if cfg.Timeout > 0 {
		sc.Timeout = cfg.Timeout.String()
	}
	if cfg.MaxBackoff > 0 {
		sc.MaxBackoff = cfg.MaxBackoff.String()
	}
	return json.Marshal(sc)
}

// decodeStoredConfig is the inverse of encodeStoredConfig, with the same
// checks (the store is trusted no more than the API), or reports a
// tombstone.
func decodeStoredConfig(d *agentsmcp.UpstreamDefinition) (cfg agentsmcp.UpstreamConfig, tombstone bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(d.Config))
	dec.DisallowUnknownFields()
	var sc storedConfig
	if err := dec.Decode(&sc); err != nil {
		return agentsmcp.UpstreamConfig{}, false, agentsmcp.Errorf(agentsmcp.EINVALID, "stored upstream %q: %v", d.Name, err)
	}
	if sc.Removed {
		return agentsmcp.UpstreamConfig{}, true, nil
	}
	cfg = agentsmcp.UpstreamConfig{
		Name: d.Name, Transport: sc.Transport, URL: sc.URL, Headers: sc.Headers, Auth: sc.Auth,
		Tools:           agentsmcp.UpstreamToolFilter{Allow: sc.Allow, Deny: sc.Deny},
		ProtocolVersion: sc.ProtocolVersion, MaxConcurrency: sc.MaxConcurrency,
	}
	for _, f := range []struct {
		name, value string
		into        *time.Duration
	}{{"timeout", sc.Timeout, &cfg.Timeout}, {"maxBackoff", sc.MaxBackoff, &cfg.MaxBackoff}} {
		if f.value == "" {
			continue
		}
		v, err := time.ParseDuration(f.value)
		if err != nil {
			return agentsmcp.UpstreamConfig{}, false, agentsmcp.Errorf(agentsmcp.EINVALID, "stored upstream %q: %s: %v", d.Name, f.name, err)
		}
		*f.into = v
	}
	if cfg.Transport != TransportStreamable && cfg.Transport != TransportSSE {
		return agentsmcp.UpstreamConfig{}, false, agentsmcp.Errorf(agentsmcp.EINVALID, "stored upstream %q: transport %q cannot be started from the store", d.Name, cfg.Transport)
	}
	cfg = cfg.WithDefaults()
	return cfg, false, configError(cfg)
}
