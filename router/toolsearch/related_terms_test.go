package toolsearch

import (
	"slices"
	"testing"
)

// fixedRelations is a relatingEmbedder with a fixed table.
type fixedRelations map[string][]string

func (f fixedRelations) RelatedWords(word string) ([]string, []float64) {
	ws := make([]float64, len(f[word]))
	for i := range ws {
		ws[i] = 0.5
	}
	return f[word], ws
}

// TestRelatedTermsExpandOnlyWordsNoToolHas checks that a query word no
// tool contains brings its related words in as weak terms (those some tool
// contains), and that a word some tool contains brings none.
func TestRelatedTermsExpandOnlyWordsNoToolHas(t *testing.T) {
	ix := newLexicalIndex([]searchDoc{
		newSearchDoc("weather__get_forecast", "", "Weather forecast for a location.", "weather", nil),
		newSearchDoc("files__read_file", "", "Read a file.", "files", nil),
	})
	rel := fixedRelations{"rain": {"precipitation", "weather"}, "file": {"document"}}
	terms := withRelatedTerms(ix, parseQuery("rain file", 0), rel)
	var added []string
	for _, qt := range terms {
		if qt.from != "" {
			added = append(added, qt.word)
			if want := relatedTermWeight * 0.5; qt.weight != want {
				t.Errorf("%s: weight %v, want %v", qt.word, qt.weight, want)
			}
			if qt.from != "rain" {
				t.Errorf("%s expanded from %q, a word a tool contains", qt.word, qt.from)
			}
		}
	}
	if !slices.Equal(added, []string{"weather"}) {
		t.Errorf("added %v, want [weather] (no tool has precipitation)", added)
	}
}
