package agentsmcp

import "context"

// Embedder turns texts into vectors, one per text, in order. Vectors of
// different IDs are not comparable; implementations retry 429/5xx.
type Embedder interface {
	ID() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Vector is one entry of a vector index.
type Vector struct {
	ID       string            `json:"id"`
	Values   []float32         `json:"values"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// VectorQuery asks for the TopK nearest vectors by cosine similarity whose
// metadata has every key/value pair of Filter.
type VectorQuery struct {
	Values []float32
	TopK   int
	Filter map[string]string
}

// VectorMatch is one query result; higher Score is more similar.
type VectorMatch struct {
	ID       string            `json:"id"`
	Score    float32           `json:"score"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// VectorIndex stores vectors in namespaces and answers nearest-neighbour
// queries. It is derived from the store: it may be approximate and may lose
// recent writes on a crash.
type VectorIndex interface {
	Upsert(ctx context.Context, namespace string, vectors []Vector) error
	Delete(ctx context.Context, namespace string, ids []string) error
	Query(ctx context.Context, namespace string, q VectorQuery) ([]VectorMatch, error)
}

// LexicalEmbedder is an [Embedder] whose vectors compare words, not meaning;
// rankers give them a smaller share.
type LexicalEmbedder interface {
	Embedder
	// Lexical reports that the vectors capture shared words only.
	Lexical() bool
}

// AligningEmbedder is an [Embedder] that also scores, word by word, how
// well a query is matched by each text; rankers re-rank with it.
type AligningEmbedder interface {
	Embedder
	// Align returns one score in [0, 1] per text, in order.
	Align(query string, texts []string) ([]float64, error)
}
