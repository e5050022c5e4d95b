package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/agents-mcp/agents-mcp/internal/words"
)

// SemanticModelVersion names the embedded model; it is part of
// [Semantic]'s ID, so that stores re-embed when the model changes.
// TestSemanticModelVersion holds it to the embedded file's checksum.
const SemanticModelVersion = "13ec4ff56d"

// Sizes of the parts of a [Semantic] vector.
const (
	semanticMeaningDims = 100 // the model's word vectors
	semanticWordDims    = 512 // hashed words, for exact and unknown words
	// SemanticDimensions is the size of [Semantic] vectors.
	SemanticDimensions = semanticMeaningDims + semanticWordDims
)

// Semantic is the offline default embedder: it places texts by meaning,
// with a model built by this project and shipped in the binary (see
// semantic/README.md and docs/adr/0015-offline-semantic-model.md), so that
// "Is it going to rain in Oslo?" lands near "weather forecast for a city"
// with no word in common. It needs no network.
//
// A vector has two parts, each of unit length before they are weighted:
// the meaning of the text (the weighted mean of its words' vectors, a
// frequent word weighing less) and its words (feature hashing of their base
// forms, as [Hash] does, and of the words WordNet relates to them: synonyms,
// derivations, hypernyms two levels up, gloss words; and the topics and
// entity types the model learnt from emoji keywords and gazetteers:
// "sunny" → weather, "dakar" → city), which keeps exact words, names and
// words the model does not know, and lets "rain" meet "weather" through
// "precipitation". The cosine of two vectors is then 0.7 ×
// the cosine of their meanings + 0.3 × that of their words.
//
// The model is parsed on first use (see TestSemanticModelLoadCost); Embed
// fails only on a cancelled context or a corrupt model.
type Semantic struct{}

// Weights of a [Semantic] vector, chosen on the dev set (see
// router/toolsearch/semantic_test.go).
const (
	// semanticMeaningShare is the share of the meaning part in the cosine.
	semanticMeaningShare = 0.7
	// semanticSIF is a in the weight a/(a+p(w)) of a word of unigram
	// probability p(w) (Arora et al., 2017).
	semanticSIF = 1e-4
	// semanticRelatedWeight scales the hashed features of the words WordNet
	// relates to a text's words, beside the words themselves (weight 1).
	semanticRelatedWeight = 1.0
)

// ID implements agentsmcp.Embedder. It names the model version, so that
// a new model makes stores re-embed.
func (Semantic) ID() string {
	return fmt.Sprintf("semantic-v1-%s-%d", SemanticModelVersion, SemanticDimensions)
}

// Dimensions implements agentsmcp.Embedder.
func (Semantic) Dimensions() int { return SemanticDimensions }

// Embed implements agentsmcp.Embedder.
func (s Semantic) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := semanticModelLoaded()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = m.embed(t)
	}
	return out, nil
}

// embed is one text's vector (see [Semantic]).
func (m *semanticModel) embed(text string) []float32 {
	v := make([]float32, SemanticDimensions)
	meaning, lexical := v[:semanticMeaningDims], v[semanticMeaningDims:]
	for _, w := range splitWords(text) {
		if semanticStopWords[w] {
			continue
		}
		i := m.lookup(w)
		base := w
		if i >= 0 {
			p := m.prob[i]
			sif := float32(semanticSIF / (semanticSIF + float64(p)))
			m.addTo(meaning, i, sif)
			base = m.word(i)
			for _, r := range m.related[i] {
				addHashed(lexical, m.word(r.word), sif*semanticRelatedWeight*r.weight)
			}
			addHashed(lexical, base, sif)
			continue
		}
		addHashed(lexical, base, 1)
	}
	normalizeInPlace(meaning)
	normalizeInPlace(lexical)
	ws, ls := sqrt32(semanticMeaningShare), sqrt32(1-semanticMeaningShare)
	for d := range meaning {
		meaning[d] *= ws
	}
	for d := range lexical {
		lexical[d] *= ls
	}
	normalizeInPlace(v)
	return v
}

// splitWords splits text as the model's corpus was split (see
// internal/words).
var splitWords = words.Split

// addHashed adds a signed hashed feature to v.
func addHashed(v []float32, feature string, w float32) {
	f := fnv.New64a()
	_, _ = f.Write([]byte(feature))
	sum := f.Sum64()
	if sum>>63 == 1 {
		w = -w
	}
	v[sum%uint64(len(v))] += w
}

var semanticStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the of to and or in on at by for with from as is are was were be been
		it its this that these those i me my we our you your he she they them their do does did can could
		will would should shall may might must please so some any than then just also what which who whom
		whose where when how why there here into onto about s t now right today currently please want need
		like get am m ll re ve d don isn let`) {
		m[w] = true
	}
	return m
}()
