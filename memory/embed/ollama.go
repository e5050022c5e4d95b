package embed

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Defaults of [NewOllama].
const (
	OllamaBaseURL   = "http://127.0.0.1:11434"
	OllamaModel     = "nomic-embed-text"
	ollamaBatchSize = 32
)

// Ollama embeds through Ollama's native /api/embed endpoint. (Ollama also
// serves the OpenAI API under /v1, which [OpenAI] speaks.) It is safe for
// concurrent use.
type Ollama struct{ r *remote }

var _ agentsmcp.Embedder = (*Ollama)(nil)

// NewOllama returns an embedder for cfg. BaseURL is the server root
// (default [OllamaBaseURL]); Model defaults to [OllamaModel]; BatchSize to
// 32, since a local model is slow and a batch must finish within Timeout.
// APIKey, for a server behind an authenticating proxy, is sent as a Bearer
// token. A malformed config is EINVALID; nothing is sent.
func NewOllama(cfg Config) (*Ollama, error) {
	r, err := newRemote("ollama", cfg, OllamaBaseURL, OllamaModel, ollamaBatchSize)
	if err != nil {
		return nil, err
	}
	return &Ollama{r}, nil
}

// ID implements agentsmcp.Embedder: "ollama:MODEL:DIMENSIONS".
func (o *Ollama) ID() string { return o.r.id() }

// Dimensions implements agentsmcp.Embedder; see [Config].Dimensions for
// when it is 0.
func (o *Ollama) Dimensions() int { return int(o.r.dims.Load()) }

// Embed implements agentsmcp.Embedder, with the errors of [OpenAI.Embed].
// A model that is not pulled is EINVALID with Ollama's message.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.r.embed(ctx, texts, o.call)
}

type ollamaRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type ollamaResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
}

func (o *Ollama) call(ctx context.Context, batch []string) ([][]float32, error) {
	req := ollamaRequest{Model: o.r.model, Input: batch}
	if o.r.sendDims {
		req.Dimensions = o.Dimensions()
	}
	var res ollamaResponse
	if err := o.r.postJSON(ctx, "/api/embed", req, &res); err != nil {
		return nil, err
	}
	return res.Embeddings, nil
}
