package httptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// This file bounds the work of loading one OpenAPI document, so that a
// document written to be expensive costs a bounded, known amount and is
// refused with a reason: a chain of $refs that fans out expands to more
// schema nodes than any tool needs, and each node costs time to convert
// and to compile.

// Defaults of a [Budget].
const (
	// DefaultMaxSchemaNodes holds the real documents we know of with
	// room to spare: the largest of @readme/oas-examples (star-trek.json,
	// 8,151 nodes) twelve times over; most need fewer than 1,000. At the
	// roughly 50 µs of CPU per node that building and compiling took on
	// that document, a document at the bound costs about 5 s; a document
	// over it is refused once its schemas are built, before any compiles.
	// Very large APIs (thousands of operations with big answers) need
	// include/exclude or a higher bound.
	DefaultMaxSchemaNodes = 100_000
	// DefaultLoadTimeout bounds one document's load, from its fetch to its
	// last tool's schema; it is below the 30 s that an admin request and
	// a store sync are each given.
	DefaultLoadTimeout = 20 * time.Second
)

// MaxRemoteRefBytes bounds the bodies of a document's remote $refs
// ([Source.AllowRemoteRefs]), all of them together: the bound of a
// document fetched by URL.
const MaxRemoteRefBytes = maxDocumentBytes

// Budget bounds the loading of each OpenAPI document. Exceeding it makes
// the source unusable, with a reason that names the document and the
// bound ([Status].Reason; an EINVALID from [SharedSources.Add]), so the
// admin API refuses such a source with 400.
type Budget struct {
	// MaxSchemaNodes bounds the JSON Schema nodes the document's tools
	// are made of, input and output schemas of every selected operation
	// together, where a $ref counts again each time it is expanded
	// (default [DefaultMaxSchemaNodes]). It is checked while the schemas
	// are built, before any is compiled.
	MaxSchemaNodes int
	// Timeout bounds one load, fetch included (default
	// [DefaultLoadTimeout]).
	Timeout time.Duration
}

func (b Budget) withDefaults() Budget {
	if b.MaxSchemaNodes <= 0 {
		b.MaxSchemaNodes = DefaultMaxSchemaNodes
	}
	if b.Timeout <= 0 {
		b.Timeout = DefaultLoadTimeout
	}
	return b
}

// errLoadTimeout is the cause of a load stopped by [Budget.Timeout].
var errLoadTimeout = errors.New("the OpenAPI load budget's time is up")

// loadBudget is what one document's load has used of its [Budget].
type loadBudget struct {
	limits Budget
	// nodes counts the schema nodes built so far; over is set once they
	// pass the bound, and every further node is cut.
	nodes int
	over  bool
	// refBytes counts the bytes of remote $ref bodies read so far, by
	// every fetch of the document (libopenapi may fetch concurrently);
	// refsOver is set once they pass [MaxRemoteRefBytes].
	refBytes atomic.Int64
	refsOver atomic.Bool
}

// takeNode counts one schema node, and reports false once the document
// has used up its nodes.
func (b *loadBudget) takeNode() bool {
	if b == nil {
		return true
	}
	b.nodes++
	if b.nodes > b.limits.MaxSchemaNodes {
		b.over = true
	}
	return !b.over
}

// errRefsTooLarge is the error of a remote $ref body read past
// [MaxRemoteRefBytes].
var errRefsTooLarge = fmt.Errorf("the remote $ref documents are larger than %d bytes in all", MaxRemoteRefBytes)

// boundRemoteRef makes resp's body stop with errRefsTooLarge once the
// document's remote $refs have given more than [MaxRemoteRefBytes], and
// refuses at once a body that announces more than is left.
func (b *loadBudget) boundRemoteRef(resp *http.Response) (*http.Response, error) {
	if resp.ContentLength > MaxRemoteRefBytes-b.refBytes.Load() {
		_ = resp.Body.Close()
		b.refsOver.Store(true)
		return nil, errRefsTooLarge
	}
	resp.Body = &boundedBody{rc: resp.Body, budget: b}
	return resp, nil
}

// boundedBody is a remote $ref's body that counts what is read against the
// document's budget.
type boundedBody struct {
	rc     io.ReadCloser
	budget *loadBudget
}

func (r *boundedBody) Read(p []byte) (int, error) {
	left := MaxRemoteRefBytes - r.budget.refBytes.Load()
	if left < 0 {
		r.budget.refsOver.Store(true)
		return 0, errRefsTooLarge
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := r.rc.Read(p)
	if r.budget.refBytes.Add(int64(n)) > MaxRemoteRefBytes {
		r.budget.refsOver.Store(true)
		return 0, errRefsTooLarge
	}
	return n, err
}

func (r *boundedBody) Close() error { return r.rc.Close() }

// documentName names the source's document in a reason: its URL (without
// credentials), its file, or "(inline)".
func (p *Provider) documentName() string {
	switch {
	case p.src.OpenAPIDocument != "":
		return fmt.Sprintf("of http_tools %q (given inline)", p.src.Name)
	case isURL(p.src.OpenAPI):
		return fmt.Sprintf("%s of http_tools %q", redact.URL(p.src.OpenAPI), p.src.Name)
	}
	return fmt.Sprintf("%s of http_tools %q", p.src.OpenAPI, p.src.Name)
}

// stopped reports whether the load must stop because ctx is done, and
// then says why in p.failed: the budget's time (overBudget), or the
// caller's cancellation.
func (p *Provider) stopped(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	if errors.Is(context.Cause(ctx), errLoadTimeout) {
		p.overBudget = true
		p.failed = fmt.Sprintf("the OpenAPI document %s is over the load budget: loading it took longer than %s (openapi.load_timeout)",
			p.documentName(), p.opts.Budget.Timeout)
	} else {
		p.failed = fmt.Sprintf("loading the OpenAPI document %s was cancelled: %v", p.documentName(), ctx.Err())
	}
	return true
}

// overNodes reports whether the document has used up its schema nodes,
// and then says so in p.failed.
func (p *Provider) overNodes(b *loadBudget) bool {
	if !b.over {
		return false
	}
	p.overBudget = true
	p.failed = fmt.Sprintf("the OpenAPI document %s is over the load budget: its tools would need more than %d schema nodes (openapi.max_schema_nodes; each $ref counts again where it is expanded)",
		p.documentName(), b.limits.MaxSchemaNodes)
	return true
}
