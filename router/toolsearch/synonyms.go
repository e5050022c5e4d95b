package toolsearch

import (
	"regexp"
	"slices"
	"strings"
)

// synonymGroups are words that a request and a tool description use for the
// same thing. Each line is one group; every word expands to the others (as
// stems, at [rankParams.synonymWeight]). The table is general English and
// general software vocabulary: the verbs of CRUD and of search, and the
// nouns that tools and people name differently (folder/directory,
// ticket/issue, picture/image). It names no product, so it does not bend
// the ranking towards any one server.
var synonymGroups = []string{
	// verbs
	"get fetch grab retrieve read obtain load view show display see print dump",
	"list enumerate show browse all",
	"create make new add start spin build generate init initialize setup",
	"delete remove drop erase destroy kill discard purge clear forget uninstall rid tear",
	"update change edit modify alter tweak patch set replace bump adjust rewrite",
	"search find look lookup locate query seek discover google hunt",
	"send post tell notify message say announce publish inform dm",
	"run execute exec invoke launch call evaluate trigger perform",
	"move rename relocate shift transfer",
	"copy fork clone duplicate",
	"compress zip gzip shrink pack",
	"merge land combine",
	"close shut terminate quit exit",
	"stop halt cancel end",
	"wait pause hold until",
	"reply answer respond",
	"save store write persist record keep remember",
	"remind reminder schedule alarm",
	"upload attach",
	"click tap press push",
	"type enter input fill",
	"select choose pick option dropdown",
	"hover mouse",
	"capture screenshot snapshot",
	"approve review",
	"deploy apply install release",
	"restart rollout redeploy",
	"explain describe mean meaning documentation",
	"think reason reasoning",
	// nouns
	"directory folder dir",
	"file document",
	"image picture photo illustration drawing pic graphic",
	"repository repo",
	"issue ticket bug",
	"pr pull",
	"message msg chat chatter note memo dm",
	"channel room",
	"user member person people account",
	"comment remark note discussion feedback",
	"web internet online website",
	"page webpage tab",
	"address location place",
	"coordinates coordinate latitude longitude lat gps geographic",
	"route directions way navigate",
	"database db sql",
	"kubernetes k8s kube",
	"memory knowledge",
	"sum add plus total",
	"environment env",
	"docs documentation manual reference",
	"example sample snippet",
	"size big large space bytes",
	"tree hierarchy nested structure recursive",
	"link url",
	"dialog alert popup modal",
	"connect reconnect connection",
	"alive ping health responsive",
	"status check ci passing green",
	"workspace team organization org",
	"near nearby around local",
	"restaurant shop store business cafe",
	"distance far travel drive",
	"elevation altitude height",
	"emoji reaction",
	"thread replies conversation",
	"template preset",
	"column property field attribute",
	"table database",
	"markdown md",
	"forward expose tunnel",
	"command shell",
}

// intentPhrases are everyday phrasings whose intent no single word of them
// carries, each with the plain words a tool description would use for it:
// "let Priya know …" is sending someone a message, "drop a note in #ops"
// is posting one, "find out" is getting. The plain words replace the
// phrase before the query is tokenised (and get their synonyms then); the
// rest of the query (the person, the content) is kept. Like the synonym
// table, they name no product.
var intentPhrases = []struct {
	pattern *regexp.Regexp
	plain   string
}{
	{regexp.MustCompile(`(?i)\blet\s+(.{1,60}?)\s+know\b`), "send $1 a message"},
	{regexp.MustCompile(`(?i)\bkeep\s+(.{1,60}?)\s+(?:posted|informed|in the loop)\b`), "send $1 a message"},
	{regexp.MustCompile(`(?i)\bgive\s+(.{1,60}?)\s+a\s+(?:heads[- ]?up|shout|shout-out|nudge)\b`), "send $1 a message"},
	{regexp.MustCompile(`(?i)\b(?:drop|shoot|leave|write)\s+(?:\S+\s+)?(?:a\s+)?(?:quick\s+)?(?:line|note|message|msg|dm|word)\b`), "send a message"},
	{regexp.MustCompile(`(?i)\bping\s+(\S+(?:\s+\S+)?)\s+(?:about|that|to say|saying|with)\b`), "send $1 a message"},
	{regexp.MustCompile(`(?i)\bfind\s+out\b`), "find get"},
}

// plainIntent rewrites the intent phrases of q into their plain words.
func plainIntent(q string) string {
	for _, p := range intentPhrases {
		q = p.pattern.ReplaceAllString(q, p.plain)
	}
	return q
}

// synonyms maps a stem to the stems of its synonyms, and synonymWord a
// synonym stem to the table's word for it.
var synonyms, synonymWord = func() (map[string][]string, map[string]string) {
	m, words := map[string][]string{}, map[string]string{}
	for _, g := range synonymGroups {
		var stems []string
		for _, w := range strings.Fields(g) {
			for _, s := range tokenize(w) {
				if _, ok := words[s]; !ok {
					words[s] = w
				}
				if !slices.Contains(stems, s) {
					stems = append(stems, s)
				}
			}
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !slices.Contains(m[s], o) {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	return m, words
}()

// synonymsOf returns the synonym stems of a stem.
func synonymsOf(stem string) []string { return synonyms[stem] }
