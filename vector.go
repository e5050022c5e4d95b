package agentsmcp

import "context"

// Embedder turns texts into vectors.
//
// ID names the model and its settings ("hash-v1-384",
// "openai:text-embedding-3-small"); vectors from different IDs are not
// comparable, so stores keep the ID beside every vector and re-embed when it
// changes. Embed returns one vector of Dimensions() values per text, in
// order, or an error for the whole batch; implementations bound their own
// timeouts and retry transient failures (HTTP 429 and 5xx).
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

// VectorIndex stores vectors in namespaces ("learnings", "tools",
// "insights") and answers nearest-neighbour queries. It is a derived index:
// the store is the source of truth and the index can be rebuilt from it, so
// implementations may be approximate and may lose recent writes on a crash.
type VectorIndex interface {
	Upsert(ctx context.Context, namespace string, vectors []Vector) error
	Delete(ctx context.Context, namespace string, ids []string) error
	Query(ctx context.Context, namespace string, q VectorQuery) ([]VectorMatch, error)
}

// LexicalEmbedder is implemented by an [Embedder] whose vectors compare the
// words of texts rather than their meaning (the offline hash embedder).
// Rankers that fuse their own word matching with vector similarity, such
// as search_tools, give such vectors a smaller share than those of a model
// of meaning.
type LexicalEmbedder interface {
	Embedder
	// Lexical reports that the vectors capture shared words only.
	Lexical() bool
}

// AligningEmbedder is implemented by an [Embedder] that can also compare a
// query with texts word by word (the offline semantic embedder): how well
// each word of the query is matched by some word of the text, in [0, 1].
// It is finer than the cosine of two vectors on short texts but costs a
// pass over each text, so rankers use it to re-rank their best candidates
// (search_tools does).
type AligningEmbedder interface {
	Embedder
	// Align returns one score in [0, 1] per text, in order.
	Align(query string, texts []string) ([]float64, error)
}
