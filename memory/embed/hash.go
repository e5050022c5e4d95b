// Package embed holds the [agentsmcp.Embedder] implementations: the offline
// feature-hashing default, and clients of OpenAI-compatible, Ollama and
// Pinecone embedding endpoints.
package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// HashDimensions is the size of [Hash] vectors.
const HashDimensions = 384

// Hash is the offline default embedder: signed feature hashing of words,
// word bigrams and character trigrams, L2-normalised. It needs no model and
// no network, is deterministic across processes and versions of Go (FNV-1a),
// and captures lexical overlap, which is what it is good for; semantic
// similarity comes from real embedders. Its ID changes whenever the
// features change, which makes stores re-embed.
type Hash struct{}

// ID implements agentsmcp.Embedder.
func (Hash) ID() string { return fmt.Sprintf("hash-v1-%d", HashDimensions) }

// Dimensions implements agentsmcp.Embedder.
func (Hash) Dimensions() int { return HashDimensions }

// Embed implements agentsmcp.Embedder. It never fails except on a cancelled
// context.
func (h Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.embed(t)
	}
	return out, nil
}

// Feature weights: whole words carry most meaning, bigrams keep a little
// word order, trigrams make "files" and "file" and typos still overlap.
const (
	wordWeight    = 1.0
	bigramWeight  = 0.5
	trigramWeight = 0.35
)

func (Hash) embed(text string) []float32 {
	v := make([]float32, HashDimensions)
	add := func(feature string, w float64) {
		f := fnv.New64a()
		_, _ = f.Write([]byte(feature))
		sum := f.Sum64()
		idx := sum % HashDimensions
		// One bit of the hash picks the sign, so unrelated features cancel
		// out on average instead of piling up.
		if sum>>63 == 1 {
			w = -w
		}
		v[idx] += float32(w)
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range words {
		add("w:"+w, wordWeight)
		if i > 0 {
			add("b:"+words[i-1]+" "+w, bigramWeight)
		}
		padded := []rune(" " + w + " ")
		for j := 0; j+3 <= len(padded); j++ {
			add("t:"+string(padded[j:j+3]), trigramWeight)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// Lexical implements agentsmcp.LexicalEmbedder: hashed features capture
// shared words and spellings, not meaning.
func (Hash) Lexical() bool { return true }
