package agents

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file is the task family: what requests that differ only in their
// entities ("weather in Paris", "weather in Lima") have in common, and the
// key under which plan reuse, plan patterns and pitfalls are learned.

// Placeholders FamilyOf adds to GoalOf's: names and codes, dates and times.
const (
	placeholderName = "<name>"
	placeholderDate = "<date>"
)

// FamilyOf is the task family of a request: GoalOf's generalisation
// (lower-cased, stop words dropped, quoted text, URLs, e-mail addresses,
// numbers and paths replaced by placeholders, and secrets, as the stored
// request's redaction finds them, by <secret>), with the entities
// abstracted too:
//
//   - capitalised words and codes (Paris, USD, Alice's), channels and
//     mentions (#ops, @ann) are <name>, a run of them ("New York", "Rio de
//     Janeiro") one <name>. The first word of a
//     sentence, and a capitalised word that only politeness precedes
//     ("Please Echo …"), carry the intent and stay. In Title Case and
//     shouting capitals say nothing, and the words stay.
//   - dates and times (2026-11-26, 26/11/2026, 10:30, 5pm, today, Monday,
//     March) are <date>; words mixing letters and digits (INC-1234, a1b2c3)
//     are <id>.
//   - the value a message-like word introduces ("the message hello",
//     "note: back at 5", "saying we are late") is <text>.
//
// So "What is the weather in Paris today?" and "What is the weather in Lima
// tomorrow?" are both "weather <name> <date>", and "Echo the message hello"
// and "Echo the message goodbye" both "echo message <text>". The key is at
// most MaxQueryTextBytes.
func FamilyOf(request string) string { return familyMemo.of(request, familyOf) }

func familyOf(request string) string {
	toks := familyTokens(request)
	titleCase := mostlyCapitalised(toks)
	var words []string
	last := "" // the last placeholder added for a capitalised run
	value := valueNone
	leading := true // only politeness so far in this sentence
	for i, t := range toks {
		if t.sentenceStart {
			leading, value = true, valueNone
		}
		if value == valueRest {
			appendPlaceholder(&words, placeholderText)
			last = ""
			continue
		}
		if value == valueRun {
			if t.placeholder == "" && !valueEnds[strings.ToLower(t.word)] {
				appendPlaceholder(&words, placeholderText)
				last = ""
				if t.endsClause {
					value = valueNone
				}
				continue
			}
			value = valueNone
		}
		if t.placeholder != "" {
			words = append(words, t.placeholder)
			last, leading = "", false
			continue
		}
		lower := strings.ToLower(t.word)
		switch {
		case familyDateWords[lower] && (isCapitalised(t.word) || !familyCapitalDates[lower]):
			appendPlaceholder(&words, placeholderDate)
			last, leading = "", false
			continue
		case strings.HasPrefix(t.word, "#") || strings.HasPrefix(t.word, "@"),
			!titleCase && isCode(t.word) && !leading && !t.sentenceStart,
			!titleCase && isCapitalised(t.word) && !leading && !t.sentenceStart && lower != "i":
			if last != placeholderName || !toks[i-1].joinsNext {
				words = append(words, placeholderName)
			}
			last, leading = placeholderName, false
			if t.colon {
				value = valueRest // "DM Priya: …"
			}
			continue
		case lower == "right" && i+1 < len(toks) && strings.EqualFold(toks[i+1].word, "now"):
			continue // "right now" is now
		case last == placeholderName && nameParticles[lower] && i+1 < len(toks) && isCapitalised(toks[i+1].word):
			toks[i].joinsNext = true // "de" in "Rio de Janeiro"
			continue
		}
		last = ""
		before := len(words)
		if !familyStopWords[lower] {
			words = appendGoalWords(words, lower)
		}
		leading = leading && politeness[lower]
		switch {
		case len(words) == before:
		case t.colon && valueWords[lower], t.colon && t.sentenceStart:
			value = valueRest // "message: …", "Note: …"
		case restWords[lower]:
			value = valueRest
		case valueWords[lower] && !t.endsClause && (i+1 == len(toks) || !goalStopWords[strings.ToLower(toks[i+1].word)]):
			// An article after it makes it a verb: "note the sum".
			value = valueRun
		}
	}
	family := strings.Join(words, " ")
	if family == "" {
		return GoalOf(request)
	}
	return storedform.TruncateUTF8(family, agentsmcp.MaxQueryTextBytes)
}

// What follows a word that introduces a value.
const (
	valueNone = iota
	valueRun  // the words up to punctuation, a preposition or a conjunction: "the message hello world to Bob"
	valueRest // the rest of the sentence: "saying we are late"
)

// familyToken is one word of a request, case kept, or the placeholder it
// stands for.
type familyToken struct {
	word          string // trimmed of surrounding punctuation; "" for a placeholder
	placeholder   string
	sentenceStart bool // first word of the request or of a sentence
	endsClause    bool // punctuation follows it
	colon         bool // a colon follows it
	joinsNext     bool // adjacent to the next word, nothing between (for runs of names)
}

// familyTokens splits a request into words and placeholders: quoted text,
// URLs, e-mail addresses, dates and times, ids, numbers and paths become
// placeholders; the rest keeps its case for FamilyOf to read.
func familyTokens(request string) []familyToken {
	s := replaceQuoted(withoutSecrets(strings.ToValidUTF8(request, "\uFFFD")), " "+placeholderText+". ")
	var out []familyToken
	start := true
	for _, tok := range strings.Fields(s) {
		t := familyToken{sentenceStart: start, joinsNext: true}
		start = false
		if tok == placeholderText+"." {
			// A quoted value ends what a message-like word introduced, but
			// not the sentence.
			t.placeholder, t.endsClause, t.joinsNext = placeholderText, true, false
			out = append(out, t)
			continue
		}
		if tail, ok := secretToken(tok); ok {
			t.placeholder, t.joinsNext = placeholderSecret, tail == ""
			t.endsClause, t.colon = strings.ContainsAny(tail, ".,;:!?)]}"), strings.Contains(tail, ":")
			start = strings.ContainsAny(tail, ".!?")
			out = append(out, t)
			continue
		}
		trimmed := strings.TrimRight(strings.TrimLeft(tok, goalTrimLeft), goalTrim)
		tail := tok[len(strings.TrimRight(tok, goalTrim)):]
		if tail != "" || strings.ContainsAny(tok[:len(tok)-len(strings.TrimLeft(tok, goalTrimLeft))], "([{") {
			t.joinsNext = false
			t.endsClause = strings.ContainsAny(tail, ".,;:!?)]}")
			t.colon = strings.Contains(tail, ":")
			start = strings.ContainsAny(tail, ".!?") && !isAbbreviation(trimmed)
		}
		if trimmed == "" {
			continue
		}
		// Possessives and contractions belong to the word: "Alice's" is a
		// name.
		trimmed = strings.TrimSuffix(strings.TrimSuffix(trimmed, "'s"), "’s")
		lower := strings.ToLower(trimmed)
		switch {
		case goalURL.MatchString(lower):
			t.placeholder = placeholderURL
		case goalEmail.MatchString(lower):
			t.placeholder = placeholderEmail
		case familyDate.MatchString(lower), familyTime.MatchString(lower):
			t.placeholder = placeholderDate
		case familyAmount.MatchString(lower), goalNum.MatchString(lower):
			t.placeholder = placeholderNum
		case isGoalPath(trimmed):
			t.placeholder = placeholderPath
		case familyID.MatchString(trimmed) && countDigits(trimmed) > 0:
			t.placeholder = placeholderID
		default:
			t.word = trimmed
		}
		out = append(out, t)
	}
	return out
}

var (
	familyDate   = regexp.MustCompile(`^(?:\d{4}-\d{1,2}-\d{1,2}(?:t[\d:.]+(?:z|[+-][\d:]+)?)?|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{1,2}(?:st|nd|rd|th))$`)
	familyTime   = regexp.MustCompile(`^(?:\d{1,2}(?::\d{2}){1,2}(?:am|pm)?|\d{1,2}(?:am|pm))$`)
	familyAmount = regexp.MustCompile(`^[-+]?[$€£¥₹]\d[\d,.]*[kmb]?$`)
	// familyID is a word mixing letters and digits, maybe with - or _:
	// INC-1234, a1b2c3, v2; FamilyOf checks it has a digit.
	familyID = regexp.MustCompile(`^#?[\p{L}\d]+(?:[-_][\p{L}\d]+)*$`)
)

// familyDateWords are the words that name a day or a month. The months and
// days are dates only capitalised (familyCapitalDates): "may" and "march"
// are verbs too.
var familyDateWords = map[string]bool{}

// familyCapitalDates are the date words that are dates only when
// capitalised.
var familyCapitalDates = map[string]bool{}

// politeness is what may come before the verb of a request without being
// its subject: "Please Echo …", "Can you Send …".
var politeness = map[string]bool{}

// nameParticles join the parts of a name: "Rio de Janeiro", "Ludwig van
// Beethoven".
var nameParticles = map[string]bool{}

// familyStopWords are stop words of families that GoalOf keeps (adding
// them there would change the goal keys of stored patterns).
var familyStopWords = map[string]bool{}

// valueEnds end the value a message-like word introduced: "the message
// hello to Bob".
var valueEnds = map[string]bool{}

// valueWords introduce a value that is the user's data, not the intent:
// "the message hello", "a note saying …". restWords introduce the rest of
// the sentence.
var valueWords, restWords = map[string]bool{}, map[string]bool{}

func init() {
	for _, w := range strings.Fields(`today tomorrow yesterday tonight now currently
		weekend weekday morning afternoon evening midnight noon`) {
		familyDateWords[w] = true
	}
	for _, w := range strings.Fields(`monday tuesday wednesday thursday friday saturday sunday
		january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun`) {
		familyDateWords[w], familyCapitalDates[w] = true, true
	}
	for _, w := range strings.Fields(`please kindly pls plz can could would will you u hey hi hello ok okay now just quickly also then`) {
		politeness[w] = true
	}
	for _, w := range strings.Fields(`de da del della di du des van von der den la le al bin dos das y`) {
		nameParticles[w] = true
	}
	for _, w := range strings.Fields(`message text note phrase string word words sentence titled called named subject caption label tag keyword term reply`) {
		valueWords[w] = true
	}
	for _, w := range strings.Fields(`his her him hers`) {
		familyStopWords[w] = true
	}
	for _, w := range strings.Fields(`to in on at for from by with into onto and or but then via as of`) {
		valueEnds[w] = true
	}
	for _, w := range strings.Fields(`saying says said stating`) {
		restWords[w] = true
	}
}

// isCapitalised reports whether w starts with an upper-case letter.
func isCapitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// isCode reports whether w is an upper-case code of two letters or more:
// USD, EUR, NYC.
func isCode(w string) bool {
	if utf8.RuneCountInString(w) < 2 {
		return false
	}
	for _, r := range w {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// isAbbreviation reports whether a word followed by a dot is an
// abbreviation that does not end the sentence: "Mr.", "St.", "e.g.".
func isAbbreviation(w string) bool {
	switch strings.ToLower(w) {
	case "mr", "mrs", "ms", "dr", "st", "mt", "e.g", "i.e", "vs", "etc", "no":
		return true
	}
	return false
}

// mostlyCapitalised reports whether capitals carry no information in the
// request: Title Case (two words or more past the first of a sentence that
// are neither stop words nor codes, all capitalised) or shouting (three
// words or more, all upper-case).
func mostlyCapitalised(toks []familyToken) bool {
	words, capital, letters, upper := 0, 0, 0, 0
	for _, t := range toks {
		if t.word == "" || strings.IndexFunc(t.word, unicode.IsLetter) < 0 {
			continue
		}
		letters++
		if isCode(t.word) {
			upper++
			continue
		}
		if t.sentenceStart || goalStopWords[strings.ToLower(t.word)] {
			continue
		}
		words++
		if isCapitalised(t.word) {
			capital++
		}
	}
	return words >= 2 && capital == words || letters >= 3 && upper == letters
}

// appendPlaceholder appends p unless the last word is p already: a value
// of several words is one placeholder.
func appendPlaceholder(words *[]string, p string) {
	if n := len(*words); n > 0 && (*words)[n-1] == p {
		return
	}
	*words = append(*words, p)
}

// FamilyTag is the AppliesTo entry that ties an insight to a task family:
// "family:" and the family, cut to MaxGoalTagBytes. The learner tags every
// insight it derives with the family of its task; insights tagged by
// GoalTag before families existed apply to their exact goal only.
func FamilyTag(family string) string {
	return "family:" + storedform.TruncateUTF8(family, MaxGoalTagBytes)
}

// DefaultFamilySimilarity is the similarity of two family keys, embedded
// by the offline hash embedder (memory/embed), above which a request joins
// the family of a past one. It was tuned on testdata/families.json (see
// TestFamilyLabelledSet): below it, "Convert 100 USD to EUR" joins "Send
// 100 USD to Alice" and "Remind me to call Mom tomorrow" joins "Call Mom
// tomorrow".
const DefaultFamilySimilarity = 0.9

// SemanticFamilySimilarity is the threshold of [DefaultFamilySimilarity]
// for the offline semantic embedder (memory/embed's Semantic, the default),
// tuned on the same labelled set: its vectors rate requests of one topic
// alike ("Convert 100 USD to EUR", "Send 100 USD to Alice"), so it joins
// only above a higher similarity.
const SemanticFamilySimilarity = 0.9

// Families matches a request whose family key is new to the family of a
// past request: one entity apart ("weather paris <date>", a lower-case
// city, joins "weather <name> <date>"), or the nearest by the embedding
// similarity of the keys.
type Families struct {
	Embedder agentsmcp.Embedder
	// MinSimilarity is the cosine similarity above which a request joins a
	// past family; default DefaultFamilySimilarity, which suits the hash
	// embedder. Model embedders rate unrelated texts higher and need their
	// own threshold.
	MinSimilarity float64

	familyCache
}

// familyEmbedTimeout bounds embedding the keys: past it, a request keeps
// its own key rather than hold up planning.
const familyEmbedTimeout = 5 * time.Second

// FamilyMatch is the family a request was given, and how.
type FamilyMatch struct {
	Family string
	// Joined is the past request whose family this one joined, one entity
	// apart (Similarity 1) or by the embedding similarity of the keys; ""
	// when the key is the request's own.
	Joined     string
	Similarity float64
	// Tool is set when the request joined the family because the tool
	// that served it is the request's best match (see servedBy).
	Tool string
}

// Resolve returns the family of request among the families of past
// learnings: its own key when a past learning has it; else the first past
// family one entity apart (see entityOf); else the past family whose key
// is the most similar, by the embedder, above MinSimilarity; else its own
// key. A nil Families, or one without an embedder, does all but the
// embedding; a failing embedder leaves the request its own key.
//
// A past request that asks for another effect (see requestEffect: "store
// …" and "query …") is never joined, whatever its words.
func (fs *Families) Resolve(ctx context.Context, request string, past []*agentsmcp.Learning) FamilyMatch {
	return fs.resolve(ctx, request, past, "")
}

// resolve is Resolve, and, when none of its rules joins a family, joins
// the family that the request's best tool served (see servedBy).
func (fs *Families) resolve(ctx context.Context, request string, past []*agentsmcp.Learning, bestTool string) FamilyMatch {
	own := FamilyMatch{Family: FamilyOf(request)}
	want := requestEffect(request)
	var keys []string
	var from []*agentsmcp.Learning
	for _, l := range past {
		f := LearningFamily(l)
		if f == own.Family {
			return own
		}
		if !servesIntent(want, requestEffect(l.Query)) || slices.Contains(keys, f) {
			continue // another intent, or a family already weighed
		}
		keys, from = append(keys, f), append(from, l)
	}
	// One entity apart is one family, whatever the embedder says.
	for i, key := range keys {
		if entityOf(own.Family, key) {
			return FamilyMatch{Family: key, Joined: from[i].Query, Similarity: 1}
		}
	}
	if fs == nil || fs.Embedder == nil || len(keys) == 0 {
		return servedBy(own, want, past, bestTool, nil)
	}
	vs := fs.embedKeys(ctx, append([]string{own.Family}, keys...))
	if vs == nil {
		return servedBy(own, want, past, bestTool, nil)
	}
	min := fs.MinSimilarity
	if min <= 0 {
		min = DefaultFamilySimilarity
	}
	best := own
	sims := map[string]float64{}
	for i, key := range keys {
		sim := cosine(vs[0], vs[i+1])
		sims[key] = sim
		if sim >= min && sim > best.Similarity {
			best = FamilyMatch{Family: key, Joined: from[i].Query, Similarity: sim}
		}
	}
	if best.Joined != "" {
		return best
	}
	return servedBy(own, want, past, bestTool, sims)
}

// entityOf reports whether two family keys differ by one entity only: a
// placeholder in one where the other has a word ("weather paris <date>",
// whose lower-case city FamilyOf cannot tell from a word of the intent, and
// "weather <name> <date>"; keys of three words or more), or a placeholder
// more ("weather <name>" and
// "weather <name> <date>"). Embedders see no likeness between "paris" and
// "<name>".
func entityOf(a, b string) bool {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) > len(wb) {
		wa, wb = wb, wa
	}
	switch {
	case len(wa) < 2 || len(wb)-len(wa) > 1:
		return false
	case len(wa) < len(wb):
		for i := range wb {
			if isPlaceholder(wb[i]) && slices.Equal(wa, slices.Concat(wb[:i], wb[i+1:])) {
				return true
			}
		}
		return false
	}
	if len(wa) < 3 {
		return false // "close <id>" and "close all": too little intent left to compare
	}
	diff := 0
	for i := range wa {
		if wa[i] == wb[i] {
			continue
		}
		if diff++; diff > 1 || !isPlaceholder(wa[i]) && !isPlaceholder(wb[i]) {
			return false
		}
	}
	return diff == 1
}

func isPlaceholder(w string) bool { return strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">") }

// LearningFamily is the family of a past task: the goal it was learned
// under when that is a family (a joined family differs from the request's
// own key), else the family of its request. A learning stored before
// families existed has the GoalOf of its request as its goal, and gets the
// family of its request.
func LearningFamily(l *agentsmcp.Learning) string {
	if l.Goal != "" && l.Goal != GoalOf(l.Query) {
		return l.Goal
	}
	return FamilyOf(l.Query)
}

// PlanFamily is the family a plan was made for: its goal, unless it is the
// GoalOf of its request (a plan stored before families existed), then the
// family of its request.
func PlanFamily(p *agentsmcp.Plan) string {
	if p.Goal != "" && p.Goal != GoalOf(p.Request) {
		return p.Goal
	}
	return FamilyOf(p.Request)
}

// inFamily reports whether a pattern or an insight's goal key belongs to
// the family of k: the family itself, or the exact goal of the request as
// it was keyed before families existed.
func (k *Knowledge) inFamily(goal string) bool {
	return goal != "" && (goal == k.Family.Family || goal == GoalOf(k.Request))
}

// familyInsight reports whether in was learned on a request of k's family.
func (k *Knowledge) familyInsight(in *agentsmcp.Insight) bool {
	for _, tag := range in.AppliesTo {
		if f, ok := strings.CutPrefix(tag, "family:"); ok && f == storedform.TruncateUTF8(k.Family.Family, MaxGoalTagBytes) {
			return true
		}
		if tag == GoalTag(GoalOf(k.Request)) {
			return true
		}
	}
	return false
}

// Describe says which family a request is in, for a thought's reasoning.
func (m FamilyMatch) Describe() string {
	if m.Tool != "" {
		return fmt.Sprintf("Task family %q (joined from %q: %s, which served it, is this request's best match).", m.Family, storedform.TruncateUTF8(m.Joined, 120), m.Tool)
	}
	if m.Joined != "" {
		return fmt.Sprintf("Task family %q (joined from %q, similarity %.2f).", m.Family, storedform.TruncateUTF8(m.Joined, 120), m.Similarity)
	}
	return fmt.Sprintf("Task family %q.", m.Family)
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
