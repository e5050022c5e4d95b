package mongo

import (
	"slices"
	"strings"
	"unicode"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Text filters match whole words, case- and accent-insensitively, like
// memory/sqlite's FTS5 index (tokenizer unicode61).
//
// Every searchable document carries a "words" array: the distinct words of
// its searchable text (an insight's Text, a learning's Query and Goal, a
// pattern's Goal), each folded by foldWord. A filter word, the text between
// white space, requires each run of letters and digits it holds: "a*b"
// requires the words "a" and "b". The query is then one equality per word
// on the words array:
//
//   - user text is only ever a value compared for equality, never a
//     pattern nor a key, so no character of it has a meaning to the server
//     ($, *, ", .*, \ and the rest are simply not part of any word);
//   - on MongoDB the multikey indexes words_* serve it, where an
//     unanchored $regex would scan the collection;
//   - on FerretDB it avoids $regex, which FerretDB 1.24 compiles again for
//     every document it tests: a page of 20 learnings out of 4,500 took
//     1.1 s with a whole-word regex per filter word.

// maxWordBytes cuts long words, in documents and filters alike, so that an
// index entry stays small; two words that share their first maxWordBytes
// bytes match each other.
const maxWordBytes = 64

// folder does Unicode case folding ("Straße" → "strasse", "Σ" → "σ"). A
// cases.Caser is not safe for concurrent use, so each call makes its own.
func folder() cases.Caser { return cases.Fold() }

// words returns the distinct folded words of texts, sorted, as stored in a
// document's words array. It is never nil, so the field is never null.
func words(texts ...string) []string {
	f := folder()
	out := []string{}
	for _, text := range texts {
		for _, run := range strings.FieldsFunc(text, notWordRune) {
			out = append(out, foldWord(f, run))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// foldWord folds one run of word characters: accents removed (NFD, then
// nonspacing marks dropped), case folded, cut to maxWordBytes.
func foldWord(f cases.Caser, run string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(run) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return storedform.TruncateUTF8(f.String(b.String()), maxWordBytes)
}

// notWordRune reports the characters that separate words: anything but a
// letter, a digit or a mark (which belongs to the letter it modifies).
func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
}

// textClauses turns a text filter into one clause per distinct word it
// holds: {words: w}, an equality on the words array. It reports none when
// the text holds something but no letter or digit: such a filter matches
// nothing, by the root contract. A blank text filters nothing. EINVALID
// for a text longer than [agentsmcp.MaxQueryTextBytes].
func textClauses(text string) (clauses []bson.D, none bool, err error) {
	if len(text) > agentsmcp.MaxQueryTextBytes {
		return nil, false, agentsmcp.Errorf(agentsmcp.EINVALID, "text filter is %d bytes; the limit is %d", len(text), agentsmcp.MaxQueryTextBytes)
	}
	ws := words(text)
	for _, w := range ws {
		clauses = append(clauses, bson.D{{Key: "words", Value: w}})
	}
	return clauses, strings.TrimSpace(text) != "" && len(ws) == 0, nil
}
