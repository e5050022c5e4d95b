package httptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/syncloop"
)

// This file keeps the sources added at run time in the store, so that
// every replica serves the same set and it outlives restarts (ADR 0011,
// D7). They are stored as [agentsmcp.UpstreamDefinition]s of kind
// [agentsmcp.UpstreamKindHTTP], beside the MCP upstreams, because both
// prefix their tools with their name: the store keeps a name to one
// provider of either kind.

// Spec is the JSON form of a [Source]: the fields of a config-file
// http_tools entry, with the timeout as a Go duration ("30s"). The admin
// API takes it and the store keeps it. Header values are used as given
// (no ${VAR} expansion) and are secrets.
type Spec struct {
	Name             string            `json:"name"`
	BaseURL          string            `json:"base_url,omitempty"`
	Headers          map[string]string `json:"headers,omitempty"`
	Timeout          string            `json:"timeout,omitempty"`
	MaxResponseBytes int64             `json:"max_response_bytes,omitempty"`
	Endpoints        []Endpoint        `json:"endpoints,omitempty"`
	OpenAPI          string            `json:"openapi,omitempty"`
	OpenAPIDocument  string            `json:"openapi_document,omitempty"`
	Include          []string          `json:"include,omitempty"`
	Exclude          []string          `json:"exclude,omitempty"`
	AllowRemoteRefs  bool              `json:"allow_remote_refs,omitempty"`
}

// Source checks sp as a source given through the network and returns it
// with defaults. On top of [Source.Problems], openapi must be an http(s)
// URL: a path would make the server read a file of its own on the word of
// whoever calls the API. EINVALID names every problem.
func (sp Spec) Source() (Source, error) {
	src := Source{
		Name: sp.Name, BaseURL: sp.BaseURL, Headers: sp.Headers, MaxResponseBytes: sp.MaxResponseBytes,
		Endpoints: sp.Endpoints, OpenAPI: strings.TrimSpace(sp.OpenAPI), OpenAPIDocument: sp.OpenAPIDocument,
		Include: sp.Include, Exclude: sp.Exclude, AllowRemoteRefs: sp.AllowRemoteRefs,
	}
	var msgs []string
	if t := strings.TrimSpace(sp.Timeout); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			msgs = append(msgs, fmt.Sprintf("timeout: %q is not a positive duration such as 30s", storedform.TruncateUTF8(sp.Timeout, 32)))
		}
		src.Timeout = d
	}
	if sp.MaxResponseBytes < 0 {
		msgs = append(msgs, "max_response_bytes: must not be negative")
	}
	if src.OpenAPI != "" && !isURL(src.OpenAPI) {
		msgs = append(msgs, "openapi: must be an http or https URL; a file of the server cannot be named through the API (give the document inline as openapi_document)")
	}
	src = src.WithDefaults()
	for _, p := range src.Problems() {
		msgs = append(msgs, p.Error())
	}
	if len(msgs) > 0 {
		return Source{}, agentsmcp.Errorf(agentsmcp.EINVALID, "http_tools %q: %s", storedform.TruncateUTF8(src.Name, 64), strings.Join(msgs, "; "))
	}
	return src, nil
}

// SpecOf is the Spec of src.
func SpecOf(src Source) Spec {
	sp := Spec{
		Name: src.Name, BaseURL: src.BaseURL, Headers: src.Headers, MaxResponseBytes: src.MaxResponseBytes,
		Endpoints: src.Endpoints, OpenAPI: src.OpenAPI, OpenAPIDocument: src.OpenAPIDocument,
		Include: src.Include, Exclude: src.Exclude, AllowRemoteRefs: src.AllowRemoteRefs,
	}
	if src.Timeout > 0 {
		sp.Timeout = src.Timeout.String()
	}
	return sp
}

// decodeStored reads a stored definition back into a source, with the
// checks of the API: the store is trusted no more than the network.
func decodeStored(d *agentsmcp.UpstreamDefinition) (Source, error) {
	dec := json.NewDecoder(bytes.NewReader(d.Config))
	dec.DisallowUnknownFields()
	var sp Spec
	if err := dec.Decode(&sp); err != nil {
		return Source{}, agentsmcp.Errorf(agentsmcp.EINVALID, "stored http_tools %q: %v", d.Name, err)
	}
	if sp.Name != d.Name {
		return Source{}, agentsmcp.Errorf(agentsmcp.EINVALID, "stored http_tools %q: the config names %q", d.Name, storedform.TruncateUTF8(sp.Name, 64))
	}
	return sp.Source()
}

// Origins of a source, as [Status.Origin] shows them.
const (
	OriginConfig = "config"
	OriginAPI    = "api"
)

// syncTimeout bounds one Sync: the store read and the loading of the
// sources it adds (an OpenAPI document given by URL is fetched then).
const syncTimeout = 30 * time.Second

// SharedSources is the set of sources added at run time (through the admin
// API) over a [Sources]: [SharedSources.Add] and [SharedSources.Remove]
// change the store and this replica's sources, and [SharedSources.Sync]
// makes the sources follow the store, picking up what other replicas (or
// this one before a restart) stored. A definition stored again (removed
// and added, maybe with another document) has a new revision, which Sync
// loads anew.
//
// Sources of the config file are loaded from the file by each replica;
// they cannot be removed through the API (ECONFLICT), and a stored
// definition whose name one of them (or an upstream, or the local tools)
// holds on a replica is left aside and logged there.
//
// Header values are stored as given, as the upstreams' are (see
// remote.SharedUpstreams): every replica needs them to call the API, so
// protect the database as a holder of those secrets, or keep the secret in
// the credential store, which seals it, and leave it out of headers (ADR
// 0012).
//
// Add and Sync load sources (which may fetch a document and build many
// schemas, within the [Budget]) outside the lock that orders their changes,
// so that a Remove, a listing or another source's change never waits for
// a load: a load is bounded by its context and the budget, and a Remove of
// a stored source that a Sync is loading cancels that load and drops its
// result. A name being added cannot be added again until the first Add
// returns. A SharedSources is safe for concurrent use.
type SharedSources struct {
	sources *Sources
	store   agentsmcp.UpstreamService
	logger  *slog.Logger

	mu sync.Mutex
	// applied holds, per name, the stored revision this replica serves.
	// It is written under mu and appliedMu, and read by Statuses under
	// appliedMu alone, so that a status never waits for a load.
	applied   map[string]string
	appliedMu sync.Mutex
	// reported remembers, per name, the revision last logged as not
	// loadable, so that each problem is logged once and not every Sync.
	reported map[string]string
	// unusable holds, per name, the revision loaded here whose document
	// could not be used (a URL that did not answer, say): it is loaded
	// again at each Sync until it serves tools, and logged once. A
	// document over its [Budget] is not: loading it again would cost the
	// same and fail the same, so it stays failed until its revision
	// changes.
	unusable map[string]string
	// loading holds, per name, the load in progress outside mu: an Add
	// (which no other Add of the name may overlap) or a Sync loading a
	// stored revision (which Remove cancels).
	loading map[string]*pendingLoad
}

// pendingLoad is a source being loaded outside [SharedSources.mu].
type pendingLoad struct {
	stored bool // a stored definition (Sync), not an Add
	cancel context.CancelFunc
	// dropped is set, under mu, by a Remove of the source during the load:
	// its result must not be served.
	dropped bool
}

// NewSharedSources returns the run-time sources over sources, stored in
// store. Nothing is read from the store until [SharedSources.Sync].
func NewSharedSources(sources *Sources, store agentsmcp.UpstreamService, logger *slog.Logger) *SharedSources {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SharedSources{sources: sources, store: store, logger: logger, applied: map[string]string{}, reported: map[string]string{},
		unusable: map[string]string{}, loading: map[string]*pendingLoad{}}
}

// Add loads src, stores it and registers its tools here; the other
// replicas load it at their next Sync. Nothing is stored when it fails.
// Errors: EINVALID for a source [Spec.Source] refuses, a base URL the
// egress policy refuses, or a document that yields no tool (its reason:
// unreadable, unparsable, over its [Budget], no usable operation);
// ECONFLICT for a name in use by a source, an upstream (here or in the
// store) or the local tools, or being added; EUNAVAILABLE when ctx ended
// during the load; and the store's errors.
func (s *SharedSources) Add(ctx context.Context, src Source) error {
	if _, err := SpecOf(src).Source(); err != nil {
		return err
	}
	raw, err := json.Marshal(SpecOf(src))
	if err != nil {
		return fmt.Errorf("encode http_tools %q: %w", src.Name, err)
	}
	s.mu.Lock()
	if s.sources.has(src.Name) {
		s.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q already exists", src.Name)
	}
	if _, busy := s.loading[src.Name]; busy {
		s.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q is being loaded", src.Name)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := &pendingLoad{cancel: cancel}
	s.loading[src.Name] = pending
	s.mu.Unlock()
	// Loaded before it is stored, so that a source no replica could use
	// is never stored; outside the lock, so that nothing waits for it.
	p, err := Load(ctx, src, s.sources.opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.loading, src.Name)
	if err != nil {
		return err
	}
	if p.failed != "" {
		if ctx.Err() != nil && !p.overBudget {
			return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "http_tools %q: %s", src.Name, p.failed)
		}
		return agentsmcp.Errorf(agentsmcp.EINVALID, "http_tools %q serves no tool: %s", src.Name, p.failed)
	}
	if s.sources.has(src.Name) {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q already exists", src.Name)
	}
	def := &agentsmcp.UpstreamDefinition{Name: src.Name, Kind: agentsmcp.UpstreamKindHTTP, Config: raw, CreatedBy: agentsmcp.PrincipalIDFrom(ctx)}
	if err := s.store.CreateUpstreamDefinition(ctx, def); err != nil {
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT {
			// Stored by another replica (as a source or an upstream) and
			// not synced here yet.
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q: the name is taken by another source or upstream", src.Name)
		}
		return fmt.Errorf("store http_tools %q: %w", src.Name, err)
	}
	if err := s.sources.add(ctx, p); err != nil {
		// Not served here, so not kept: no replica must serve it either.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
		defer cancel()
		if derr := s.store.DeleteUpstreamDefinition(dctx, agentsmcp.UpstreamKindHTTP, src.Name); derr != nil && agentsmcp.ErrorCode(derr) != agentsmcp.ENOTFOUND {
			s.logger.Error("an http_tools source that could not be added stays stored; remove it through the admin API", "source", src.Name, "error", derr)
		}
		return err
	}
	s.setApplied(src.Name, def.Revision)
	return nil
}

// Remove removes a source added through the API, here and (through the
// store) on every replica. ENOTFOUND if there is no such source; ECONFLICT
// for a source of the config file, which only the file can remove.
func (s *SharedSources) Remove(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pending, ok := s.loading[name]; ok && pending.stored {
		// A Sync is loading the stored definition: it must not serve it.
		pending.dropped = true
		pending.cancel()
	}
	_, fromStore := s.applied[name]
	if s.sources.has(name) && !fromStore {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q is defined in the config file; remove it there", name)
	}
	err := s.store.DeleteUpstreamDefinition(ctx, agentsmcp.UpstreamKindHTTP, name)
	switch {
	case agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND && !fromStore:
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "http_tools %q does not exist", name)
	case err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND:
		return fmt.Errorf("remove stored http_tools %q: %w", name, err)
	}
	delete(s.reported, name)
	delete(s.unusable, name)
	if !fromStore {
		return nil // stored but not served here (left aside, or not loadable)
	}
	s.setApplied(name, "")
	if err := s.sources.Remove(name); err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		return err
	}
	return nil
}

// Sync makes this replica's sources follow the store: it loads the stored
// sources it does not serve, loads again those stored under a new
// revision and those whose document could not be used here (its URL did
// not answer, say), and removes those no longer stored. A definition
// that cannot be loaded here (refused, or its name taken on this replica)
// is logged once per revision and skipped, and so is one whose document is
// over its [Budget] (it is served without tools, its status saying why);
// the store's error, if it cannot be read, is returned with the sources
// unchanged. The loads run outside the lock (see [SharedSources]), one
// after the other, each bounded by ctx and the budget.
func (s *SharedSources) Sync(ctx context.Context) error {
	toLoad, err := s.planSync(ctx)
	if err != nil {
		return err
	}
	for _, d := range toLoad {
		s.loadStored(ctx, d)
	}
	return nil
}

// planSync reads the store and, under the lock, removes what is no longer
// stored (or stored anew), and returns the definitions to load, each
// marked as loading.
func (s *SharedSources) planSync(ctx context.Context) ([]*agentsmcp.UpstreamDefinition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defs, err := s.store.ListUpstreamDefinitions(ctx, agentsmcp.UpstreamKindHTTP)
	if err != nil {
		return nil, fmt.Errorf("list stored http_tools: %w", err)
	}
	stored := make(map[string]*agentsmcp.UpstreamDefinition, len(defs))
	for _, d := range defs {
		stored[d.Name] = d
	}
	for name, rev := range s.applied {
		if d, ok := stored[name]; ok && d.Revision == rev {
			continue
		}
		s.setApplied(name, "")
		if err := s.sources.Remove(name); err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			s.logger.Warn("removing an http_tools source removed from the store", "source", name, "error", err)
		}
		s.logger.Info("http_tools source removed or replaced in the store by another replica", "source", name)
	}
	for name, rev := range s.unusable {
		if s.applied[name] == rev {
			s.setApplied(name, "")
			if err := s.sources.Remove(name); err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
				s.logger.Warn("removing an http_tools source to load it again", "source", name, "error", err)
			}
		}
	}
	for name := range s.reported {
		if _, ok := stored[name]; !ok {
			delete(s.reported, name)
		}
	}
	for name := range s.unusable {
		if _, ok := stored[name]; !ok {
			delete(s.unusable, name)
		}
	}
	var toLoad []*agentsmcp.UpstreamDefinition
	for _, d := range defs {
		if _, ok := s.applied[d.Name]; ok || s.reported[d.Name] == d.Revision {
			continue
		}
		if _, busy := s.loading[d.Name]; busy {
			continue // an Add, or another Sync, is at it
		}
		s.loading[d.Name] = &pendingLoad{stored: true, cancel: func() {}}
		toLoad = append(toLoad, d)
	}
	return toLoad, nil
}

// loadStored loads one stored definition that planSync marked as loading,
// outside the lock, and serves it unless a Remove dropped it meanwhile.
func (s *SharedSources) loadStored(ctx context.Context, d *agentsmcp.UpstreamDefinition) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	pending := s.loading[d.Name]
	pending.cancel = cancel
	dropped := pending.dropped
	s.mu.Unlock()
	var p *Provider
	src, err := decodeStored(d)
	if err == nil && !dropped {
		p, err = Load(ctx, src, s.sources.opts)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.loading, d.Name)
	if pending.dropped {
		s.logger.Info("a stored http_tools source was removed while it was being loaded", "source", d.Name, "revision", d.Revision)
		return
	}
	if err == nil {
		err = s.sources.add(ctx, p)
	}
	if err != nil {
		s.reported[d.Name] = d.Revision
		s.logger.Warn("a stored http_tools source cannot be served on this replica", "source", d.Name, "revision", d.Revision, "error", err)
		return
	}
	s.setApplied(d.Name, d.Revision)
	switch {
	case p.failed == "":
		delete(s.unusable, d.Name)
		s.logger.Info("http_tools source loaded from the store", "source", d.Name, "revision", d.Revision)
	case p.overBudget:
		delete(s.unusable, d.Name)
		s.logger.Warn("a stored http_tools source is over the OpenAPI load budget on this replica; it serves no tool until its definition changes",
			"source", d.Name, "revision", d.Revision, "reason", p.failed)
	default:
		if s.unusable[d.Name] != d.Revision {
			s.logger.Warn("a stored http_tools source serves no tool on this replica; it is loaded again at each sync",
				"source", d.Name, "revision", d.Revision, "reason", p.failed)
		}
		s.unusable[d.Name] = d.Revision
	}
}

// Run calls Sync every interval (at least [syncloop.MinInterval]) until
// ctx is done, logging a failure when it starts and when it ends rather
// than at every attempt.
func (s *SharedSources) Run(ctx context.Context, interval time.Duration) {
	syncloop.Loop{Sync: s.Sync, Timeout: syncTimeout, Logger: s.logger,
		Failing:   "cannot read the stored http_tools sources; this replica keeps its current ones",
		Recovered: "the stored http_tools sources are readable again"}.Run(ctx, interval)
}

// setApplied records the revision served for name; "" forgets name. The
// caller holds mu.
func (s *SharedSources) setApplied(name, revision string) {
	s.appliedMu.Lock()
	defer s.appliedMu.Unlock()
	if revision == "" {
		delete(s.applied, name)
	} else {
		s.applied[name] = revision
	}
}

// Statuses is [Sources.Statuses], with each source's Origin.
func (s *SharedSources) Statuses() []Status {
	s.appliedMu.Lock()
	defer s.appliedMu.Unlock()
	out := s.sources.Statuses()
	for i := range out {
		out[i].Origin = OriginConfig
		if _, ok := s.applied[out[i].Name]; ok {
			out[i].Origin = OriginAPI
		}
	}
	return out
}
