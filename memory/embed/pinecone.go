package embed

import (
	"context"
	"net/http"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Defaults of [NewPinecone].
const (
	PineconeBaseURL   = "https://api.pinecone.io"
	PineconeModel     = "multilingual-e5-large"
	pineconeBatchSize = 96 // the inference API's limit for its dense models
)

// Pinecone embeds through Pinecone's hosted inference API
// (multilingual-e5-large, llama-text-embed-v2, …). Those models are
// asymmetric: a text is embedded either as a "passage" (what is stored) or
// as a "query" (what is searched with), and retrieval is best when each
// side uses its own. The embedder from [NewPinecone] embeds passages;
// [Pinecone.ForQueries] returns its twin for queries. Both have the same
// ID, because their vectors live in one space and are compared with each
// other. A caller that has a single Embedder for both sides uses the
// passage one, which still works, only a little less well. Texts longer
// than the model accepts are truncated at the end rather than refused.
// It is safe for concurrent use.
type Pinecone struct {
	r         *remote
	inputType string
}

var _ agentsmcp.Embedder = (*Pinecone)(nil)

// NewPinecone returns a passage embedder for cfg. APIKey is required;
// Model defaults to [PineconeModel]; BatchSize to 96; BaseURL to
// [PineconeBaseURL]. Dimensions is sent as the model's "dimension"
// parameter when set (llama-text-embed-v2 accepts 384 to 2048). A
// malformed config is EINVALID; nothing is sent.
func NewPinecone(cfg Config) (*Pinecone, error) {
	if cfg.APIKey == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pinecone embedder: an API key is required")
	}
	r, err := newRemote("pinecone", cfg, PineconeBaseURL, PineconeModel, pineconeBatchSize)
	if err != nil {
		return nil, err
	}
	r.headers = pineconeHeaders(cfg.APIKey)
	return &Pinecone{r: r, inputType: "passage"}, nil
}

// ForQueries returns an embedder of the same model, settings and ID that
// embeds its texts as search queries.
func (p *Pinecone) ForQueries() *Pinecone {
	return &Pinecone{r: p.r, inputType: "query"}
}

// ID implements agentsmcp.Embedder: "pinecone:MODEL:DIMENSIONS", whatever
// the input type.
func (p *Pinecone) ID() string { return p.r.id() }

// Dimensions implements agentsmcp.Embedder; see [Config].Dimensions for
// when it is 0.
func (p *Pinecone) Dimensions() int { return int(p.r.dims.Load()) }

// Embed implements agentsmcp.Embedder, with the errors of [OpenAI.Embed].
// A model that produces sparse vectors is EINVALID.
func (p *Pinecone) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return p.r.embed(ctx, texts, p.call)
}

// pineconeAPIVersion is the inference API version requested, the one
// go-pinecone v5.2.0 (used by memory/pinecone) speaks.
const pineconeAPIVersion = "2025-10"

type pineconeRequest struct {
	Model      string          `json:"model"`
	Inputs     []pineconeInput `json:"inputs"`
	Parameters map[string]any  `json:"parameters"`
}

type pineconeInput struct {
	Text string `json:"text"`
}

type pineconeResponse struct {
	VectorType string `json:"vector_type"`
	Data       []struct {
		VectorType string    `json:"vector_type"`
		Values     []float32 `json:"values"`
	} `json:"data"`
}

// call posts to the inference API's /embed itself rather than through
// go-pinecone's Inference.Embed: in v5.2.0 that method takes the address
// of its range variable under Go 1.21 loop semantics (the module's go
// line), so every text of a batch is sent as the last one. The fake in
// TestPineconeEmbed catches that. Doing it here also gives Retry-After and
// the response size limit of the other embedders.
func (p *Pinecone) call(ctx context.Context, batch []string) ([][]float32, error) {
	req := pineconeRequest{
		Model:      p.r.model,
		Inputs:     make([]pineconeInput, len(batch)),
		Parameters: map[string]any{"input_type": p.inputType, "truncate": "END"},
	}
	for i, text := range batch {
		req.Inputs[i].Text = text
	}
	if p.r.sendDims {
		req.Parameters["dimension"] = p.Dimensions()
	}
	var res pineconeResponse
	if err := p.r.postJSON(ctx, "/embed", req, &res); err != nil {
		return nil, err
	}
	if res.VectorType == "sparse" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the model returns sparse vectors; a dense model is needed", p.r.name())
	}
	out := make([][]float32, len(res.Data))
	for i, d := range res.Data {
		out[i] = d.Values
	}
	return out, nil
}

// pineconeHeaders authenticates with Pinecone's Api-Key header.
func pineconeHeaders(apiKey string) func(http.Header) {
	return func(h http.Header) {
		h.Set("Api-Key", apiKey)
		h.Set("X-Pinecone-Api-Version", pineconeAPIVersion)
	}
}
