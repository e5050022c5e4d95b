package embed

import (
	"math"
	"testing"
)

// Word alignment finds the tool a reworded request means where the words
// differ: each request word meets its best match (warm → temperature,
// rain → precipitation), which a mean vector averages away.
func TestSemanticAlign(t *testing.T) {
	tools := []string{
		"weather get current weather Current weather conditions for a city: temperature, humidity, wind and sky.",
		"files read file Read the contents of a file as text.",
		"weather get forecast Weather forecast for a location for the coming days, with precipitation probability.",
		"music play track Start playing a song, album or artist on the active speaker.",
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{"How warm is it in Lima?", 0},
		{"Is it going to rain in Oslo tomorrow?", 2},
		{"Put on some jazz tunes", 3},
		{"print what the document contains", 1},
	} {
		scores, err := Semantic{}.Align(c.query, tools)
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		for i, s := range scores {
			if s < 0 || s > 1 || math.IsNaN(s) {
				t.Fatalf("%q: score %v of %q out of [0, 1]", c.query, s, tools[i])
			}
			if s > scores[best] {
				best = i
			}
		}
		if best != c.want {
			t.Errorf("%q: best aligned %q (%.3f), want %q (%.3f); all %v", c.query, tools[best], scores[best], tools[c.want], scores[c.want], scores)
		}
	}
}

// The edges: the same words align fully, stop words alone align to
// nothing, and words the model lacks match only themselves.
func TestSemanticAlignEdges(t *testing.T) {
	for _, c := range []struct {
		query, text string
		want        float64
	}{
		{"convert currency", "Convert an amount of money from one currency to another", 1},
		{"what is it", "Convert an amount of money", 0},
		{"", "anything", 0},
		{"zqxwv", "zqxwv tool", 1},
		{"zqxwv", "another tool", 0},
	} {
		got, err := Semantic{}.Align(c.query, []string{c.text})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-c.want) > 1e-6 {
			t.Errorf("Align(%q, %q) = %.3f, want %.0f", c.query, c.text, got[0], c.want)
		}
	}
	if got, _ := (Semantic{}).Align("rain", nil); len(got) != 0 {
		t.Errorf("Align over no texts = %v, want none", got)
	}
}

// A query word that every candidate matches alike (a generic verb: "make"
// ~ create, "check") tells the candidates nothing, so it weighs little: a
// candidate matching only that word aligns near zero, and the one matching
// the telling word ("tune" ~ song, "temperature" ~ heat) leads. Without the
// damping the generic word gave every candidate a share of up to 0.19.
func TestSemanticAlignDampsWordsEveryTextMatches(t *testing.T) {
	for _, c := range []struct {
		query string
		texts []string
		want  int
	}{
		{"make me a tune", []string{"Create a new text document", "Create a calendar event", "Play a song on the speaker", "Create an invoice"}, 2},
		{"check the temperature", []string{"Check a website's certificate", "Check spelling of a text", "Current weather with heat and humidity", "Check the status of a job"}, 2},
	} {
		scores, err := Semantic{}.Align(c.query, c.texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range scores {
			if i == c.want {
				continue
			}
			if s > 0.1 {
				t.Errorf("%q: %q, which matches only the word every text matches, aligns %.3f, want ≤ 0.1 (all %v)", c.query, c.texts[i], s, scores)
			}
			if s >= scores[c.want] {
				t.Errorf("%q: %q aligns %.3f, not below %q's %.3f", c.query, c.texts[i], s, c.texts[c.want], scores[c.want])
			}
		}
	}
}
