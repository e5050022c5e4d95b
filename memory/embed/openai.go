package embed

import (
	"context"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Defaults of [NewOpenAI].
const (
	OpenAIBaseURL   = "https://api.openai.com/v1"
	OpenAIModel     = "text-embedding-3-small"
	openAIBatchSize = 64
)

// OpenAI embeds through an OpenAI-compatible /embeddings endpoint: OpenAI
// itself, and the same API served by vLLM, LM Studio, llama.cpp or Ollama
// (its /v1 root). It is safe for concurrent use.
type OpenAI struct{ r *remote }

var _ agentsmcp.Embedder = (*OpenAI)(nil)

// NewOpenAI returns an embedder for cfg. BaseURL is the API root including
// "/v1" (default [OpenAIBaseURL]); Model defaults to [OpenAIModel];
// BatchSize to 64; APIKey may be empty for local servers. Dimensions is
// sent as the "dimensions" parameter only when set, since only some models
// accept it. A malformed config is EINVALID; nothing is sent.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	r, err := newRemote("openai", cfg, OpenAIBaseURL, OpenAIModel, openAIBatchSize)
	if err != nil {
		return nil, err
	}
	return &OpenAI{r}, nil
}

// ID implements agentsmcp.Embedder: "openai:MODEL:DIMENSIONS".
func (o *OpenAI) ID() string { return o.r.id() }

// Dimensions implements agentsmcp.Embedder; see [Config].Dimensions for
// when it is 0.
func (o *OpenAI) Dimensions() int { return int(o.r.dims.Load()) }

// Embed implements agentsmcp.Embedder. Vectors are returned as the service
// sends them (OpenAI's are unit length). Errors: EUNAVAILABLE after the
// retries, EUNAUTHORIZED for a refused key, EINVALID for another refusal
// (the server's message quoted), EINTERNAL for an answer of the wrong
// shape; the caller's cancellation is returned as such.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.r.embed(ctx, texts, o.call)
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (o *OpenAI) call(ctx context.Context, batch []string) ([][]float32, error) {
	req := openAIRequest{Model: o.r.model, Input: batch, EncodingFormat: "float"}
	if o.r.sendDims {
		req.Dimensions = o.Dimensions()
	}
	var res openAIResponse
	if err := o.r.postJSON(ctx, "/embeddings", req, &res); err != nil {
		return nil, err
	}
	// The API says data[i].index is the input's position, not that data is
	// in order; place each vector by its index.
	if len(res.Data) != len(batch) {
		return make([][]float32, len(res.Data)), nil // check reports the count
	}
	out := make([][]float32, len(batch))
	for _, d := range res.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, fmt.Errorf("the service returned index %d twice or out of range for %d texts", d.Index, len(batch))
		}
		out[d.Index] = d.Embedding
		if out[d.Index] == nil {
			out[d.Index] = []float32{}
		}
	}
	return out, nil
}
