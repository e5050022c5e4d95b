package embed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/backoff"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/view"
)

// Defaults of [Config] for every remote embedder.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxRetries = 4
)

// Retry pacing: exponential backoff from baseBackoff with equal jitter
// ([backoff.Delay]), and no single wait (nor Retry-After) longer than
// maxBackoff.
const (
	baseBackoff = 500 * time.Millisecond
	maxBackoff  = 30 * time.Second
)

// Config configures a remote embedder ([NewOpenAI], [NewOllama],
// [NewPinecone]). Zero values mean the defaults named below.
type Config struct {
	// BaseURL is the service's API root: "https://api.openai.com/v1" for
	// OpenAI (the path up to and including /v1, to which "/embeddings" is
	// added), "http://127.0.0.1:11434" for Ollama (to which "/api/embed" is
	// added), and Pinecone's API host for Pinecone (default
	// "https://api.pinecone.io").
	BaseURL string
	// Model names the embedding model; each constructor has a default.
	Model string
	// APIKey is sent as a Bearer token (OpenAI, Ollama) or Api-Key header
	// (Pinecone, where it is required). It is never quoted in errors.
	APIKey string
	// Dimensions is the size of the vectors. When set, it is sent to models
	// that can shorten their vectors (OpenAI's text-embedding-3, Ollama,
	// Pinecone's llama-text-embed-v2) and every response is checked against
	// it. When zero, the size of a few well-known models is assumed, and
	// otherwise learned from the first response; until then Dimensions()
	// is 0 and ID() ends in ":0", so set it when the ID is needed before
	// the first Embed.
	Dimensions int
	// BatchSize is the most texts sent in one request; larger inputs are
	// split, and the results concatenated in input order. The default
	// depends on the service.
	BatchSize int
	// Timeout bounds each request, retries included separately; default
	// DefaultTimeout. The caller's context bounds the whole call.
	Timeout time.Duration
	// MaxRetries is how often a request is retried after HTTP 408, 429 or
	// 5xx, a network error or a timeout; default DefaultMaxRetries, and a
	// negative value means no retry. Other 4xx are never retried.
	MaxRetries int
	// HTTPClient sends the requests; default a client of its own (with
	// http.DefaultTransport). Its Timeout, if any, applies too. Without a
	// CheckRedirect of its own it follows redirects only within the base
	// URL's origin ([egress.SameOriginRedirects]): net/http would forward
	// the Api-Key header anywhere, and Authorization to another port or a
	// subdomain.
	HTTPClient *http.Client
}

// remote is what the remote embedders share: validated settings,
// batching, retries, error mapping, and the dimension check.
type remote struct {
	provider  string // "openai", "ollama", "pinecone": the ID's first part
	model     string
	baseURL   string // without a trailing slash
	apiKey    string
	sendDims  bool // Dimensions was configured, not assumed
	batchSize int
	timeout   time.Duration
	retries   int
	client    *http.Client
	headers   func(http.Header) // authentication other than Bearer; nil for Bearer

	dims atomic.Int64 // configured, assumed or learned; 0 until known

	// Seams for tests: the first backoff step, the wait itself, and the
	// response size limit.
	backoff  time.Duration
	sleep    func(ctx context.Context, d time.Duration) error
	maxBody  int64
	maxError int64
}

// Response size limits: a batch of 2048 vectors of 3072 floats as JSON is
// about 120 MB, far above any sensible batch, so 64 MiB only stops a
// misbehaving server; error bodies are only quoted, so 64 KiB is plenty.
const (
	maxResponseBytes = 64 << 20
	maxErrorBytes    = 64 << 10
)

// knownDimensions are the default sizes of common models, so that ID()
// is right before the first request. Keys are provider:model; Ollama tags
// (":latest", ":v1.5") are ignored.
var knownDimensions = map[string]int{
	"openai:text-embedding-3-small":  1536,
	"openai:text-embedding-3-large":  3072,
	"openai:text-embedding-ada-002":  1536,
	"ollama:nomic-embed-text":        768,
	"ollama:mxbai-embed-large":       1024,
	"ollama:all-minilm":              384,
	"ollama:bge-m3":                  1024,
	"pinecone:multilingual-e5-large": 1024,
	"pinecone:llama-text-embed-v2":   1024,
}

// newRemote validates cfg and fills in defaults.
func newRemote(provider string, cfg Config, defaultURL, defaultModel string, defaultBatch int) (*remote, error) {
	name := provider + " embedder"
	base := strings.TrimRight(cmp.Or(cfg.BaseURL, defaultURL), "/")
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: base URL %q is not an http(s) URL", name, redact.URL(cfg.BaseURL))
		}
	}
	if cfg.Dimensions < 0 || cfg.BatchSize < 0 || cfg.Timeout < 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: dimensions, batch size and timeout must not be negative", name)
	}
	r := &remote{
		provider:  provider,
		model:     cmp.Or(cfg.Model, defaultModel),
		baseURL:   base,
		apiKey:    cfg.APIKey,
		sendDims:  cfg.Dimensions > 0,
		batchSize: cmp.Or(cfg.BatchSize, defaultBatch),
		timeout:   cmp.Or(cfg.Timeout, DefaultTimeout),
		retries:   cfg.MaxRetries,
		client:    cfg.HTTPClient,
		backoff:   baseBackoff,
		sleep:     sleepCtx,
		maxBody:   maxResponseBytes,
		maxError:  maxErrorBytes,
	}
	if strings.TrimSpace(r.model) == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: a model is required", name)
	}
	if cfg.MaxRetries == 0 {
		r.retries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		r.retries = 0
	}
	r.client = egress.WithSameOriginRedirects(r.client)
	dims := cfg.Dimensions
	if dims == 0 {
		model, _, _ := strings.Cut(r.model, ":")
		if provider != "ollama" {
			model = r.model
		}
		dims = knownDimensions[provider+":"+model]
	}
	r.dims.Store(int64(dims))
	return r, nil
}

// id is provider:model:dimensions.
func (r *remote) id() string { return fmt.Sprintf("%s:%s:%d", r.provider, r.model, r.dims.Load()) }

// embed splits texts into batches, has call embed each with retries, and
// checks and concatenates the results.
func (r *remote) embed(ctx context.Context, texts []string, call func(ctx context.Context, batch []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += r.batchSize {
		batch := texts[start:min(start+r.batchSize, len(texts))]
		var vs [][]float32
		err := r.retry(ctx, func(ctx context.Context) error {
			var err error
			vs, err = call(ctx, batch)
			return err
		})
		if err != nil {
			return nil, err
		}
		if err := r.check(vs, len(batch)); err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// check verifies one batch's answer: one vector per text, each of the
// expected size, which the first answer fixes when nothing else did.
func (r *remote) check(vs [][]float32, n int) error {
	if len(vs) != n {
		return agentsmcp.Errorf(agentsmcp.EINTERNAL, "%s: the service returned %d vectors for %d texts", r.name(), len(vs), n)
	}
	if n == 0 {
		return nil
	}
	if len(vs[0]) > 0 {
		r.dims.CompareAndSwap(0, int64(len(vs[0])))
	}
	want := int(r.dims.Load())
	for i, v := range vs {
		if len(v) != want || want == 0 {
			return agentsmcp.Errorf(agentsmcp.EINTERNAL, "%s: the service returned a vector of %d dimensions for text %d; expected %d", r.name(), len(v), i, want)
		}
	}
	return nil
}

func (r *remote) name() string { return r.provider + " embedder (" + r.model + ")" }

// statusError is an HTTP error answer.
type statusError struct {
	status     int
	retryAfter time.Duration // 0 when absent
	message    string        // the server's, trimmed and redacted
}

func (e *statusError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.message)
}

// transientError marks a failure of the transport (connection refused or
// reset, timeout, a body cut short): the request may not have arrived.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// retryable reports whether err is worth another attempt, and how long the
// server asked to wait (0: no preference).
func retryable(err error) (bool, time.Duration) {
	var se *statusError
	if errors.As(err, &se) {
		s := se.status
		return s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500, se.retryAfter
	}
	var te *transientError
	return errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded), 0
}

// retry runs f with a per-attempt timeout until it succeeds, fails for
// good, the retries are used up, or ctx ends. Waits grow exponentially
// with equal jitter, or follow Retry-After, capped at maxBackoff; when ctx
// would end before the next attempt could start, it gives up at once.
func (r *remote) retry(ctx context.Context, f func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, r.timeout)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return r.redact(fmt.Errorf("%s: %w", r.name(), context.Cause(ctx)))
		}
		again, wait := retryable(err)
		if !again {
			return r.permanent(err)
		}
		if attempt >= r.retries {
			return r.unavailable(err, attempt+1)
		}
		if wait <= 0 {
			wait = backoff.Delay(r.backoff, maxBackoff, attempt+1)
		}
		wait = min(wait, maxBackoff)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return r.unavailable(err, attempt+1)
		}
		if err := r.sleep(ctx, wait); err != nil {
			return r.redact(fmt.Errorf("%s: %w", r.name(), err))
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// unavailable is the error after the last attempt failed transiently.
func (r *remote) unavailable(err error, attempts int) error {
	app := agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: the embedding service is unavailable (%s after %d attempts); try again later", r.name(), short(err), attempts)
	return r.redact(fmt.Errorf("%w: %w", app, err))
}

// permanent maps an error that retrying cannot fix: a refused key is
// EUNAUTHORIZED, another 4xx EINVALID with the server's message, anything
// else (an unreadable answer) EINTERNAL.
func (r *remote) permanent(err error) error {
	var se *statusError
	if errors.As(err, &se) {
		var app *agentsmcp.Error
		switch se.status {
		case http.StatusUnauthorized, http.StatusForbidden:
			// The server's text may echo part of the key; it is not quoted.
			app = agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "%s: the service refused the API key (HTTP %d)", r.name(), se.status)
			return fmt.Errorf("%w: HTTP %d", app, se.status)
		default:
			app = agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the service refused the request: %s", r.name(), r.redactString(se.Error()))
		}
		return r.redact(fmt.Errorf("%w: %w", app, err))
	}
	if agentsmcp.ErrorCode(err) != agentsmcp.EINTERNAL {
		return r.redact(err) // already an application error
	}
	app := agentsmcp.Errorf(agentsmcp.EINTERNAL, "%s: the embedding service's answer is unusable", r.name())
	return r.redact(fmt.Errorf("%w: %w", app, err))
}

// short names an error for a message: the HTTP status, or "timeout" or
// "network error".
func short(err error) string {
	var se *statusError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("HTTP %d", se.status)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "network error"
}

// redactString removes the API key and URL credentials from text quoted
// from elsewhere.
func (r *remote) redactString(s string) string { return redact.Message(s, r.apiKey) }

// redact keeps err's chain unless its text holds the API key or URL
// credentials, and flattens it, keeping the application code, if it does.
func (r *remote) redact(err error) error { return view.Error(err, r.apiKey) }
