package sqlite

import (
	"strings"
	"unicode"
)

// ftsQuery turns a text filter into an FTS5 query that matches rows holding
// every word of text. Each white-space separated word becomes an FTS5
// string ("…", with '"' doubled), so that nothing in it is syntax:
// operators (AND, OR, NOT, NEAR), '*', '^', ':', '-', parentheses and
// quotes are all literal. FTS5 tokenizes the string like the indexed text,
// so "a*b" finds the adjacent words a and b, as in "a*b" itself.
//
// ok is false when text has no letter or digit: such a filter can match no
// word, so it matches nothing (and an FTS5 string without a token would be
// an error).
func ftsQuery(text string) (query string, ok bool) {
	var terms []string
	for _, word := range strings.Fields(text) {
		if !strings.ContainsFunc(word, isTokenRune) {
			continue // punctuation alone: no token to look for
		}
		terms = append(terms, `"`+strings.ReplaceAll(word, `"`, `""`)+`"`)
	}
	return strings.Join(terms, " AND "), len(terms) > 0
}

// isTokenRune reports whether r is part of a word for the unicode61
// tokenizer: letters, numbers and private-use characters.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}
