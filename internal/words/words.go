// Package words splits identifiers and text into lower-case words the way
// the offline semantic model's corpus was split, so that what the embedder
// reads and what HTTP tools derive from their paths break words alike.
package words

import "unicode"

// Split lower-cases text and splits it into words of letters and digits,
// breaking camelCase, snake_case and kebab-case: "chat.scheduleMessage" →
// chat, schedule, message; "add-to-queue" → add, to, queue.
func Split(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, c := range text {
		switch {
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			flush()
			cur = append(cur, unicode.ToLower(c))
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			cur = append(cur, unicode.ToLower(c))
		default:
			flush()
		}
		prev = c
	}
	flush()
	return out
}
