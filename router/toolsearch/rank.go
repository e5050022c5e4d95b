package toolsearch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The fields of a tool document, from the most to the least telling.
const (
	fieldServer      = iota // the upstream prefix of "server__tool"
	fieldName               // the tool's own name and title
	fieldDescription        // its description
	fieldParams             // its parameters' names and descriptions
	numFields
)

var fieldNames = [numFields]string{"server", "name", "description", "parameters"}

// rankParams are the knobs of the ranking; [defaultRankParams] holds the ones
// chosen on the labelled catalog (see quality_test.go).
type rankParams struct {
	// weights multiply each field's BM25 score.
	weights [numFields]float64
	// k1 and b are BM25's term-saturation and length-normalisation.
	k1, b float64
	// synonymWeight is the weight of a query term added from the synonym
	// table, relative to 1 for a term the user wrote; 0 adds none.
	synonymWeight float64
	// vectorWeight is the share of the vector similarity in the fused score
	// (0 is lexical only, 1 vector only).
	vectorWeight float64
	// coord, if positive, scales a tool's lexical score by the share of the
	// query's words it matches (directly or by a synonym) to this power, so
	// that a tool matching "create" and "issue" beats one matching "issue"
	// twice.
	coord float64
	// minCosine is the least similarity that lets a tool with no lexical
	// match into the results.
	minCosine float64
	// alignWeight, with an [agentsmcp.AligningEmbedder], is the weight of
	// the word alignment of the query with a tool, added to the fused score
	// of the best alignCandidates tools before they are sorted again, when
	// none of them shares a word with the query (directly or by a synonym);
	// alignWeightLexical when one does: there BM25 already knows, and the
	// alignment, which favours long descriptions, would mostly add noise.
	alignWeight, alignWeightLexical float64
	alignCandidates                 int
	// cosineFloor is the similarity that counts as none in the fusion: a
	// tool's vector score is (cosine − floor) / (best cosine − floor), so
	// that a model whose unrelated texts still have a cosine of 0.3 does
	// not lift every tool alike.
	cosineFloor float64
	// 1 + shapeWeight multiplies the score of each of the best
	// shapeCandidates tools whose action (list, get, create, update,
	// delete: by its operation's method and path, or its name's verb) is
	// the one the request's words ask for, before they are sorted again:
	// it decides among the sibling operations of one resource (see
	// [reshape]).
	shapeWeight     float64
	shapeCandidates int
	// shapeSameSource limits the shape's weight to the candidates of the
	// best one's source: siblings are operations of one API.
	shapeSameSource bool
}

// defaultRankParams were chosen on the labelled catalog of real MCP servers
// in testdata/catalog (TestSearchQuality logs the comparison). Synonyms and
// coverage gave most of the gain over plain BM25; with the offline hash
// embedder a small vector share mostly breaks ties and adds trigram
// (spelling) matches, and more of it hurt top-1.
var defaultRankParams = rankParams{
	weights:       [numFields]float64{1.5, 3, 1.5, 0.5},
	k1:            1.2,
	b:             0.75,
	synonymWeight: 0.5,
	coord:         1,
	vectorWeight:  0.2,
	minCosine:     0.15,
	// Chosen on the large OpenAPI catalog's needs (TestFindRankDevVariants;
	// docs/benchmarks.md): 0.1–0.3 measured alike there; limited to the
	// best candidate's source, it lowered no set's top-1.
	shapeWeight:     0.2,
	shapeCandidates: 20,
	shapeSameSource: true,
}

// semanticRankParams are the ranking with an embedder of meaning (the
// semantic default, or a remote model), chosen on the dev set of
// testdata/paraphrase (see TestSemanticRetrieval): its vectors find the
// right tool where no word is shared, so they get a larger share. The word
// alignment's weights were chosen on the same dev sets and on the real
// catalog of TestSearchQuality, where a weight of 1 for every query lost
// 0.06 of recall@3 (docs/adr/0015-offline-semantic-model.md).
var semanticRankParams = func() rankParams {
	p := defaultRankParams
	p.vectorWeight = 0.5
	p.minCosine = 0.1
	p.alignWeight, p.alignWeightLexical = 1, 0.2
	p.alignCandidates = 20
	return p
}()

// rankParamsFor returns the ranking for an embedder: [defaultRankParams]
// without one or with a lexical one ([agentsmcp.LexicalEmbedder]),
// [semanticRankParams] with a model of meaning.
func rankParamsFor(emb agentsmcp.Embedder) rankParams {
	if emb == nil {
		return defaultRankParams
	}
	if l, ok := emb.(agentsmcp.LexicalEmbedder); ok && l.Lexical() {
		return defaultRankParams
	}
	return semanticRankParams
}

// searchDoc is one tool, tokenised for ranking.
type searchDoc struct {
	match     Match
	fields    [numFields][]string
	tf        map[string][numFields]int // term → its frequency in each field
	embedText string                    // what the embedder is given for this tool
	vecKey    string                    // the cache key of its vector (see Index)
	action    actionKind                // what the tool does, if known (see [toolAction])
}

// newSearchDoc tokenises a tool. schema is its input schema as JSON.
func newSearchDoc(name, title, description, source string, schema []byte) searchDoc {
	server, short := "", name
	if i := strings.Index(name, "__"); i > 0 {
		server, short = name[:i], name[i+2:]
	}
	d := searchDoc{
		match: Match{Name: name, Source: source, Description: description},
		fields: [numFields][]string{
			serverTerms(server),
			tokenize(short + " " + title),
			tokenize(description),
			tokenize(schemaText(schema)),
		},
		embedText: embedText(server, short, title, description),
	}
	d.tf = map[string][numFields]int{}
	for f, toks := range d.fields {
		for _, t := range toks {
			c := d.tf[t]
			c[f]++
			d.tf[t] = c
		}
	}
	return d
}

// serverTerms are the terms of a tool's server (source) name: its words,
// and for each word the leading parts of at least minServerPrefix letters,
// because sources are often named by a product and a qualifier run
// together ("slackapi", "githubv3", "stripeprod"): a need that names the
// product ("… in slack") then matches the source's tools.
func serverTerms(server string) []string {
	toks := tokenize(server)
	out := toks
	for _, t := range toks {
		if !strings.ContainsFunc(t, unicode.IsLetter) {
			continue
		}
		r := []rune(t)
		for n := minServerPrefix; n < len(r); n++ {
			out = append(out, string(r[:n]))
		}
	}
	return out
}

// minServerPrefix is the shortest leading part of a server name's word
// that is a term of its own (see [serverTerms]).
const minServerPrefix = 4

// embedText is the text a tool is embedded as: its words, not its
// identifiers, so that "list_directory" and "list the directory" meet.
func embedText(server, short, title, description string) string {
	var sb strings.Builder
	for _, s := range []string{server, short, title} {
		sb.WriteString(splitIdentifier(s))
		sb.WriteByte(' ')
	}
	sb.WriteString(description)
	return sb.String()
}

// splitIdentifier turns "get_fileInfo-v2" into "get file info v2".
func splitIdentifier(s string) string {
	var sb strings.Builder
	var prev rune
	for _, c := range s {
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/':
			c = ' '
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			sb.WriteByte(' ')
		}
		sb.WriteRune(unicode.ToLower(c))
		prev = c
	}
	return sb.String()
}

// lexicalIndex holds the corpus statistics BM25 needs, and for each term
// the documents that have it (its postings), so that a search touches only
// the documents that share a term with the query.
type lexicalIndex struct {
	docs     []searchDoc
	df       map[string]int
	avgLen   [numFields]float64
	postings map[string][]posting
}

// posting is a term's frequency in each field of one document (by index).
type posting struct {
	doc    int
	counts [numFields]int
}

func newLexicalIndex(docs []searchDoc) *lexicalIndex {
	ix := &lexicalIndex{docs: docs, df: map[string]int{}, postings: map[string][]posting{}}
	for i, d := range docs {
		for f, toks := range d.fields {
			ix.avgLen[f] += float64(len(toks))
		}
		// The document's terms in a fixed order, so that postings (and so
		// the order of float additions) do not depend on map iteration.
		terms := make([]string, 0, len(d.tf))
		for t := range d.tf {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		for _, t := range terms {
			ix.df[t]++
			ix.postings[t] = append(ix.postings[t], posting{doc: i, counts: d.tf[t]})
		}
	}
	for f := range ix.avgLen {
		ix.avgLen[f] = max(ix.avgLen[f]/float64(max(len(docs), 1)), 1)
	}
	return ix
}

// queryTerm is one stem of a query. word is how it is shown: the word the
// user wrote, or for a synonym the table's word, with from the user's word
// it was added for.
type queryTerm struct {
	term   string
	weight float64
	word   string
	from   string
}

// parseQuery tokenises a query and, if synonymWeight > 0, rewrites its
// intent phrases into plain words (see [intentPhrases]) and adds the
// synonyms of its words at that weight.
func parseQuery(q string, synonymWeight float64) []queryTerm {
	var out []queryTerm
	have := map[string]bool{}
	if synonymWeight > 0 {
		q = plainIntent(q)
	}
	for _, t := range tokenWords(q) {
		if !have[t.stem] {
			have[t.stem] = true
			out = append(out, queryTerm{term: t.stem, weight: 1, word: t.word})
		}
	}
	if synonymWeight <= 0 {
		return out
	}
	for _, qt := range slices.Clone(out) {
		for _, s := range synonymsOf(qt.term) {
			if !have[s] {
				have[s] = true
				out = append(out, queryTerm{term: s, weight: synonymWeight, word: synonymWord[s], from: qt.word})
			}
		}
	}
	return out
}

// fieldHit records that a query term matched in a field.
type fieldHit struct {
	term  queryTerm
	field int
}

// idfs returns the BM25 inverse document frequency of each query term (0
// for a term no tool has).
func (ix *lexicalIndex) idfs(terms []queryTerm) []float64 {
	n := float64(len(ix.docs))
	out := make([]float64, len(terms))
	for i, qt := range terms {
		if df := float64(ix.df[qt.term]); df > 0 {
			out[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
		}
	}
	return out
}

// scoreDoc is the weighted BM25 score of doc for the terms (with idf their
// [lexicalIndex.idfs]), with the hits that made it.
func (ix *lexicalIndex) scoreDoc(d *searchDoc, terms []queryTerm, idf []float64, p rankParams) (float64, []fieldHit) {
	score := 0.0
	var hits []fieldHit
	for i, qt := range terms {
		if idf[i] == 0 {
			continue
		}
		counts, ok := d.tf[qt.term]
		if !ok {
			continue
		}
		for f, c := range counts {
			tf := float64(c)
			if tf == 0 || p.weights[f] == 0 {
				continue
			}
			norm := tf * (p.k1 + 1) / (tf + p.k1*(1-p.b+p.b*float64(len(d.fields[f]))/ix.avgLen[f]))
			score += qt.weight * p.weights[f] * idf[i] * norm
			hits = append(hits, fieldHit{qt, f})
		}
	}
	if p.coord > 0 && score > 0 {
		words, matched := 0, 0
		for _, qt := range terms {
			if qt.from != "" {
				continue
			}
			words++
			if slices.ContainsFunc(hits, func(h fieldHit) bool { return h.term.term == qt.term || h.term.from == qt.word }) {
				matched++
			}
		}
		score *= math.Pow(float64(matched)/float64(words), p.coord)
	}
	return score, hits
}

// ranked is one scored document.
type ranked struct {
	doc     *searchDoc
	lexical float64
	cosine  float64
	// alignment is the word alignment with the query, if it was measured
	// (see [realign]).
	alignment float64
	// shaped: its action is the request's, and its score got the
	// shape's weight (see [reshape]).
	shaped bool
	score  float64
	hits   []fieldHit
}

// rank scores every document for the query. docVecs, if not nil, holds the
// embedding of each document (by index) and queryVec the query's, all of unit
// length (see [normalize]); then the lexical and the cosine scores are fused,
// each divided by its best value.
// Results are sorted best first, ties by name, and only those with a
// lexical match or a cosine of at least p.minCosine are kept.
func (ix *lexicalIndex) rank(terms []queryTerm, p rankParams, queryVec []float32, docVecs [][]float32) []ranked {
	lexical := ix.lexicalScores(terms, p)
	out := make([]ranked, 0, len(ix.docs))
	maxLex, maxCos := 0.0, 0.0
	hybrid := queryVec != nil && docVecs != nil && p.vectorWeight > 0
	for i := range ix.docs {
		r := ranked{doc: &ix.docs[i], lexical: lexical[i]}
		if hybrid && docVecs[i] != nil {
			r.cosine = dot(queryVec, docVecs[i])
		}
		if r.lexical <= 0 && (!hybrid || r.cosine < p.minCosine) {
			continue
		}
		maxLex = max(maxLex, r.lexical)
		maxCos = max(maxCos, r.cosine)
		out = append(out, r)
	}
	for i := range out {
		r := &out[i]
		if !hybrid {
			r.score = r.lexical
			continue
		}
		lex, vec := 0.0, 0.0
		if maxLex > 0 {
			lex = r.lexical / maxLex
		}
		if maxCos > p.cosineFloor {
			vec = max(r.cosine-p.cosineFloor, 0) / (maxCos - p.cosineFloor)
		}
		r.score = (1-p.vectorWeight)*lex + p.vectorWeight*vec
	}
	slices.SortFunc(out, byScore)
	return out
}

// lexicalScores is [lexicalIndex.scoreDoc]'s score of every document (by
// index), computed from the postings of the query's terms: the same sums
// in the same order, without visiting the documents that share no term
// with the query. The hits (for why) are left to scoreDoc, for the few
// documents shown.
func (ix *lexicalIndex) lexicalScores(terms []queryTerm, p rankParams) []float64 {
	scores := make([]float64, len(ix.docs))
	idf := ix.idfs(terms)
	// Each word the user wrote is a bit; a synonym sets its word's bit.
	bit := make([]uint64, len(terms))
	words := 0
	for i, qt := range terms {
		if qt.from == "" {
			words++
		}
		if qt.from == "" && words <= 64 {
			bit[i] = 1 << (words - 1)
		}
	}
	if words > 64 {
		// Too many words for the bits: score the documents one by one.
		for i := range ix.docs {
			scores[i], _ = ix.scoreDoc(&ix.docs[i], terms, idf, p)
		}
		return scores
	}
	for i, qt := range terms {
		if qt.from == "" {
			continue
		}
		for j, w := range terms {
			if w.from == "" && w.word == qt.from {
				bit[i] = bit[j]
				break
			}
		}
	}
	var matched []uint64
	if p.coord > 0 {
		matched = make([]uint64, len(ix.docs))
	}
	for i, qt := range terms {
		if idf[i] == 0 {
			continue
		}
		for _, ps := range ix.postings[qt.term] {
			d := &ix.docs[ps.doc]
			hit := false
			for f, c := range ps.counts {
				tf := float64(c)
				if tf == 0 || p.weights[f] == 0 {
					continue
				}
				norm := tf * (p.k1 + 1) / (tf + p.k1*(1-p.b+p.b*float64(len(d.fields[f]))/ix.avgLen[f]))
				scores[ps.doc] += qt.weight * p.weights[f] * idf[i] * norm
				hit = true
			}
			if hit && matched != nil {
				matched[ps.doc] |= bit[i]
			}
		}
	}
	if matched != nil && words > 0 {
		for i, s := range scores {
			if s > 0 {
				scores[i] = s * math.Pow(float64(bits.OnesCount64(matched[i]))/float64(words), p.coord)
			}
		}
	}
	return scores
}

// byScore orders ranked documents best first, ties by name (names are
// unique: a total order).
func byScore(a, b ranked) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.doc.match.Name, b.doc.match.Name)
}

// why explains a ranked result in a line: per field, the query words that
// matched there, a word matched through a synonym as "word→synonym" (the
// first such synonym only), the vector similarity in hybrid ranking and the
// word alignment if it was measured.
func (r *ranked) why(hybrid, aligned bool) string {
	var parts []string
	for f := range numFields {
		var words []string
		seen := map[string]bool{}
		for _, h := range r.hits {
			if h.field != f {
				continue
			}
			w, by := h.term.word, h.term.word
			if h.term.from != "" {
				w, by = h.term.from+"→"+h.term.word, h.term.from
			}
			if !seen[by] {
				seen[by] = true
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			parts = append(parts, fieldNames[f]+": "+strings.Join(words, ", "))
		}
	}
	if hybrid {
		parts = append(parts, fmt.Sprintf("vector similarity %.2f", r.cosine))
	}
	if aligned {
		parts = append(parts, fmt.Sprintf("word alignment %.2f", r.alignment))
	}
	if r.shaped {
		parts = append(parts, "action: "+actionNames[r.doc.action])
	}
	if len(parts) == 0 {
		return "no match"
	}
	return strings.Join(parts, "; ")
}

// dot is the cosine similarity of unit vectors (0 if their sizes differ).
func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	b = b[:len(a)]
	// Four sums, so that the additions do not wait on each other: the
	// cosine over every tool is most of a search's arithmetic.
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i] * b[i])
		s1 += float64(a[i+1] * b[i+1])
		s2 += float64(a[i+2] * b[i+2])
		s3 += float64(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// normalize returns v scaled to unit length (a zero vector as it is).
func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := 1 / math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// tokenize splits text into lower-case word stems, breaking snake_case,
// kebab-case and camelCase so that "get_file_info" matches "file", and drops
// stop words.
func tokenize(s string) []string {
	toks := tokenWords(s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.stem
	}
	return out
}

// token is a stem and the lower-case word it came from.
type token struct{ stem, word string }

// tokenWords is [tokenize] keeping each stem's word.
func tokenWords(s string) []token {
	var toks []token
	var cur []rune
	flush := func() {
		if len(cur) > 1 || (len(cur) == 1 && unicode.IsDigit(cur[0])) {
			w := string(cur)
			if st := stem(w); !stopWords[st] {
				toks = append(toks, token{st, w})
			}
		}
		cur = cur[:0]
	}
	var prev rune
	for _, c := range s {
		switch {
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			flush()
			cur = append(cur, unicode.ToLower(c))
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			cur = append(cur, unicode.ToLower(c))
		case c == '\'' && unicode.IsLetter(prev):
			// "what's", "page's": drop the clitic with the apostrophe.
			flush()
			prev = ' '
			continue
		default:
			flush()
		}
		prev = c
	}
	flush()
	return toks
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the a an of to and or in for is are was were on with by it its be
		this that these those from as at me my mine we our us you your he she they them their
		do doe did can could would should will shall may might must please so some any than then
		just also what which who whom whose where when how why there here into onto about
		ve ll re don isn`) {
		m[w] = true
	}
	return m
}()

// stem strips the commonest English suffixes and a final "e", so that
// "files"/"file", "created"/"create", "entries"/"entry" and
// "running"/"run" meet. It is deliberately crude: it only has to map
// related words of a query and a tool to the same stem.
func stem(w string) string {
	if len(w) <= 3 || !isAlpha(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		// "access", "status", "analysis" are not plurals.
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = undouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops one of a doubled final consonant: "runn" → "run".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// schemaText collects property names and descriptions from a JSON schema.
func schemaText(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var sb strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				keys := make([]string, 0, len(props))
				for name := range props {
					keys = append(keys, name)
				}
				slices.Sort(keys)
				for _, name := range keys {
					sb.WriteString(name)
					sb.WriteByte(' ')
				}
			}
			if d, ok := x["description"].(string); ok {
				sb.WriteString(d)
				sb.WriteByte(' ')
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, child := range x {
				walk(child)
			}
		}
	}
	walk(v)
	return sb.String()
}
