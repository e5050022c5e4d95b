// Package pinecone implements [agentsmcp.VectorIndex] on a Pinecone
// serverless (or pod) index with the cosine metric, for deployments whose
// vectors outgrow the embedded indexes of memory/vectors or are shared by
// many replicas.
//
// It behaves like vectors.Flat wherever Pinecone allows, so the two are
// interchangeable behind the interface:
//   - a namespace of the interface ("learnings", "tools", "insights") is the
//     Pinecone namespace [Config].NamespacePrefix + name;
//   - metadata is stored as strings; a filter matches vectors whose metadata
//     has every key/value pair, and an empty value matches vectors without
//     the key (empty values are not stored, so they also come back absent);
//   - results are sorted by score, best first, ties by id;
//   - deleting unknown ids, or in a namespace that does not exist, is not an
//     error, and querying such a namespace returns no matches.
//
// Where it differs: Pinecone is eventually consistent, so a write becomes
// visible to queries after a short delay; Query returns at most 1000
// matches; vector ids must be printable ASCII of at most 512 bytes; the zero
// vector is refused (a cosine index cannot rank it); and an upsert or delete
// larger than one request is sent in several, so a failure can leave an
// earlier part applied. All three operations are idempotent, which is what
// makes retrying the whole call the right response to any error.
//
// Errors carry application codes: EINVALID for input Pinecone would refuse
// (checked before anything is sent), EUNAVAILABLE for failures worth
// retrying later (rate limits, overload, timeouts, network), EUNAUTHORIZED
// for a refused API key. The API key never appears in an error.
package pinecone

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/backoff"
	"github.com/agents-mcp/agents-mcp/internal/view"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
)

// DefaultTimeout bounds every remote call when [Config].Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says which Pinecone index to use and how.
type Config struct {
	// APIKey authenticates every call. Required; it is never logged nor
	// quoted in errors.
	APIKey string
	// Index is the index name. With it, Open asks Pinecone for the index's
	// host, dimension and metric and checks them. Index or Host is required.
	Index string
	// Host is the index's data-plane host ("name-xxxx.svc.….pinecone.io").
	// It may be empty when Index is set. Given alone, Open cannot check the
	// dimension and metric, and a mismatch shows on the first upsert.
	Host string
	// NamespacePrefix is put before every namespace name, so several
	// deployments (or tests) can share one index.
	NamespacePrefix string
	// Dimensions is the size of every vector, the embedder's Dimensions().
	// Required.
	Dimensions int
	// Timeout bounds each remote call; zero means DefaultTimeout.
	Timeout time.Duration
}

// Index is a Pinecone index seen as an [agentsmcp.VectorIndex]. It is safe
// for concurrent use; create it once with [Open] and Close it at shutdown.
type Index struct {
	dims    int
	prefix  string
	timeout time.Duration
	apiKey  string // only to keep it out of errors
	host    string

	// base owns the gRPC connection that every namespace shares; nil in
	// tests, which replace dial.
	base *pc.IndexConnection
	dial func(namespace string) dataPlane

	mu     sync.Mutex
	conns  map[string]dataPlane
	closed bool

	// A transient failure is retried a few times within one call; longer
	// outages are for the caller (the outbox) to ride out.
	attempts int
	backoff  time.Duration
}

// dataPlane is the part of *pc.IndexConnection the index uses; tests
// substitute a fake.
type dataPlane interface {
	UpsertVectors(ctx context.Context, in []*pc.Vector) (uint32, error)
	DeleteVectorsById(ctx context.Context, ids []string) error
	QueryByVectorValues(ctx context.Context, in *pc.QueryByVectorValuesRequest) (*pc.QueryVectorsResponse, error)
}

var _ agentsmcp.VectorIndex = (*Index)(nil)

// Open connects to the index described by cfg. When cfg.Index is set it
// looks the index up, takes its host when cfg.Host is empty, and fails with
// EINVALID unless the index is dense with dimension cfg.Dimensions and
// metric cosine; a missing index is ENOTFOUND, an unreachable Pinecone
// EUNAVAILABLE. The data-plane connection is made lazily, so Open with
// only a Host makes no request.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	if cfg.APIKey == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone: an API key is required")
	}
	if cfg.Index == "" && cfg.Host == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone: an index name or host is required")
	}
	if cfg.Dimensions <= 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone: dimensions must be positive, got %d", cfg.Dimensions)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	client, err := pc.NewClient(pc.NewClientParams{ApiKey: cfg.APIKey})
	if err != nil {
		return nil, view.Error(fmt.Errorf("pinecone: new client: %w", err), cfg.APIKey)
	}
	host := cfg.Host
	if cfg.Index != "" {
		dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		desc, err := client.DescribeIndex(dctx, cfg.Index)
		cancel()
		if err != nil {
			return nil, wrapRemote(err, cfg.APIKey, "describe index %q", cfg.Index)
		}
		if err := checkIndex(desc, cfg.Dimensions); err != nil {
			return nil, err
		}
		if host == "" {
			host = desc.Host
		}
	}
	if err := checkHost(host); err != nil {
		return nil, err
	}
	base, err := client.Index(pc.NewIndexConnParams{Host: host})
	if err != nil {
		return nil, view.Error(fmt.Errorf("pinecone: connect to %s: %w", host, err), cfg.APIKey)
	}
	x := newIndex(cfg, func(ns string) dataPlane { return base.WithNamespace(ns) })
	x.base = base
	x.host = host
	return x, nil
}

func newIndex(cfg Config, dial func(string) dataPlane) *Index {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Index{
		dims:     cfg.Dimensions,
		prefix:   cfg.NamespacePrefix,
		timeout:  cfg.Timeout,
		apiKey:   cfg.APIKey,
		dial:     dial,
		conns:    map[string]dataPlane{},
		attempts: 3,
		backoff:  200 * time.Millisecond,
	}
}

// checkIndex compares what Pinecone says about the index with what the
// embedder produces; a mismatch would otherwise fail every upsert, or,
// worse for a metric other than cosine, rank results differently from
// vectors.Flat without any error.
func checkIndex(desc *pc.Index, dims int) error {
	if desc.Dimension == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone index %q has no dimension (a sparse index?); agents-mcp needs a dense index of dimension %d", desc.Name, dims)
	}
	if int(*desc.Dimension) != dims {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone index %q has dimension %d, but the embedder produces %d", desc.Name, *desc.Dimension, dims)
	}
	if desc.Metric != pc.Cosine {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone index %q has metric %q, but agents-mcp needs %q", desc.Name, desc.Metric, pc.Cosine)
	}
	return nil
}

// checkHost rejects hosts the client cannot dial. It matters because the
// client exits the process (log.Fatal) when its gRPC target is invalid.
func checkHost(host string) error {
	if host == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone: the index has no host")
	}
	h := host
	if !strings.Contains(h, "://") {
		h = "https://" + h
	}
	u, err := url.Parse(h)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || (u.Path != "" && u.Path != "/") {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone: host %q is not a host name", host)
	}
	return nil
}

// Close closes the connection shared by all namespaces. Calls after Close
// fail.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	x.conns = nil
	if x.base != nil {
		return x.base.Close()
	}
	return nil
}

func (x *Index) String() string {
	return fmt.Sprintf("pinecone.Index(%s, %d dims, prefix %q)", x.host, x.dims, x.prefix)
}

// conn returns the cached connection of a namespace. All share one gRPC
// connection, so caching only saves allocations; it also makes Close final.
func (x *Index) conn(namespace string) (dataPlane, string, error) {
	ns := x.prefix + namespace
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ns, errors.New("pinecone: the index is closed")
	}
	c := x.conns[ns]
	if c == nil {
		c = x.dial(ns)
		x.conns[ns] = c
	}
	return c, ns, nil
}

// Upsert implements agentsmcp.VectorIndex. The whole batch is validated
// first: a bad id or a vector of the wrong size is EINVALID and nothing is
// sent. Then it is sent in requests within Pinecone's limits, in order.
func (x *Index) Upsert(ctx context.Context, namespace string, vectors []agentsmcp.Vector) error {
	vs, err := toVectors(vectors, x.dims)
	if err != nil || len(vs) == 0 {
		return err
	}
	c, ns, err := x.conn(namespace)
	if err != nil {
		return err
	}
	for _, batch := range upsertBatches(vs, upsertBatchCount, upsertBatchBytes) {
		err := x.call(ctx, func(ctx context.Context) error {
			_, err := c.UpsertVectors(ctx, batch)
			return err
		})
		if err != nil {
			return x.wrap(ctx, err, "upsert %d vectors into namespace %q", len(batch), ns)
		}
	}
	return nil
}

// Delete implements agentsmcp.VectorIndex. Unknown ids, ids Pinecone could
// not hold, and a namespace that does not exist are not errors.
func (x *Index) Delete(ctx context.Context, namespace string, ids []string) error {
	batches := deleteIDs(ids, maxDeleteBatch)
	if len(batches) == 0 {
		return nil
	}
	c, ns, err := x.conn(namespace)
	if err != nil {
		return err
	}
	for _, batch := range batches {
		err := x.call(ctx, func(ctx context.Context) error { return c.DeleteVectorsById(ctx, batch) })
		if err != nil && classify(err) != agentsmcp.ENOTFOUND {
			return x.wrap(ctx, err, "delete %d vectors from namespace %q", len(batch), ns)
		}
	}
	return nil
}

// Query implements agentsmcp.VectorIndex. A query of the wrong size, or
// the zero vector, is EINVALID; TopK above 1000 is treated as 1000.
func (x *Index) Query(ctx context.Context, namespace string, q agentsmcp.VectorQuery) ([]agentsmcp.VectorMatch, error) {
	if err := validateValues("query", q.Values, x.dims); err != nil {
		return nil, err
	}
	if q.TopK <= 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "topK must be positive, got %d", q.TopK)
	}
	c, ns, err := x.conn(namespace)
	if err != nil {
		return nil, err
	}
	req := &pc.QueryByVectorValuesRequest{
		Vector:          q.Values,
		TopK:            uint32(min(q.TopK, maxTopK)),
		MetadataFilter:  filterToStruct(q.Filter),
		IncludeMetadata: true,
	}
	var res *pc.QueryVectorsResponse
	err = x.call(ctx, func(ctx context.Context) error {
		var err error
		res, err = c.QueryByVectorValues(ctx, req)
		return err
	})
	if err != nil {
		if classify(err) == agentsmcp.ENOTFOUND {
			return []agentsmcp.VectorMatch{}, nil
		}
		return nil, x.wrap(ctx, err, "query namespace %q", ns)
	}
	return toMatches(res), nil
}

// call runs f with the per-call timeout, retrying transient failures a few
// times with jittered backoff while ctx allows.
func (x *Index) call(ctx context.Context, f func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, x.timeout)
		err := f(cctx)
		cancel()
		if err == nil || ctx.Err() != nil || attempt >= x.attempts || classify(err) != agentsmcp.EUNAVAILABLE {
			return err
		}
		// No cap: attempts are few (3 by default).
		t := time.NewTimer(backoff.Delay(x.backoff, 0, attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// wrap gives err its application code and context. The caller's own
// cancellation is returned as such (it is not Pinecone's failure).
func (x *Index) wrap(ctx context.Context, err error, format string, args ...any) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("pinecone: %s: %w", fmt.Sprintf(format, args...), ctxErr)
	}
	return wrapRemote(err, x.apiKey, format, args...)
}

// wrapRemote turns an error of the Pinecone client into an application
// error whose message is safe to show and whose chain keeps the cause.
func wrapRemote(err error, apiKey string, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	var app *agentsmcp.Error
	switch code := classify(err); code {
	case agentsmcp.EUNAVAILABLE:
		app = agentsmcp.Errorf(code, "pinecone is unavailable: %s failed; try again later", what)
	case agentsmcp.EUNAUTHORIZED:
		app = agentsmcp.Errorf(code, "pinecone refused the API key: %s", what)
	case agentsmcp.EINTERNAL:
		return view.Error(fmt.Errorf("pinecone: %s: %w", what, err), apiKey)
	default:
		app = agentsmcp.Errorf(code, "pinecone: %s: %s", what, serverMessage(err, apiKey))
	}
	return view.Error(fmt.Errorf("%w: %w", app, err), apiKey)
}
