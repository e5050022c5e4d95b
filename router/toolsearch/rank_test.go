package toolsearch

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"get_file_info", []string{"get", "file", "info"}},
		{"listDirectoryWithSizes", []string{"list", "directory", "size"}},
		{"API-retrieve-a-page", []string{"api", "retriev", "page"}},
		{"what's in the projects folder?", []string{"project", "folder"}},
		{"Resize the browser window to 1280x720", []string{"resiz", "browser", "window", "1280x720"}},
	} {
		if got := tokenize(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Related forms of a word meet at one stem, and unrelated ones do not.
func TestStem(t *testing.T) {
	for _, same := range [][]string{
		{"file", "files"},
		{"size", "sizes"},
		{"image", "images"},
		{"box", "boxes"},
		{"create", "created", "creates", "creating"},
		{"entry", "entries"},
		{"run", "running"},
		{"match", "matches"},
		{"copy", "copied"},
		{"forward", "forwarding"},
	} {
		for _, w := range same[1:] {
			if stem(w) != stem(same[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q; want equal", w, stem(w), same[0], stem(same[0]))
			}
		}
	}
	for _, w := range []string{"status", "access", "analysis", "k8s", "api"} {
		if stem(w) != w && stem(w)+"e" != w {
			t.Errorf("stem(%q) = %q, want it kept", w, stem(w))
		}
	}
}

func TestParseQuerySynonyms(t *testing.T) {
	terms := parseQuery("grab the folder", 0.5)
	var got []string
	for _, qt := range terms {
		if qt.from != "" {
			got = append(got, qt.from+"→"+qt.word)
		}
	}
	for _, want := range []string{"grab→get", "grab→fetch", "folder→directory"} {
		if !slices.Contains(got, want) {
			t.Errorf("synonyms of %q: %v lack %s", "grab the folder", got, want)
		}
	}
	if terms[0].weight != 1 || terms[len(terms)-1].weight != 0.5 {
		t.Errorf("weights %v", terms)
	}
}
