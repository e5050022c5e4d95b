package agents

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// This file is the builtin planner's slot filling: it finds in a request
// the values of a tool's parameters that the request clearly gives. It
// never invents one: every value is a piece of the request's text (an ISO
// code may be upper-cased), and a parameter whose value the request does
// not clearly give is left for the plan's inputs, so the user is asked.
//
// Each parameter is judged from its schema (type, format, enum) and its
// words (name, title, description) to be of one kind: a number, a URL, a
// city, a person, a currency code, free text… Each kind has finders that
// propose candidates (a value, the span of the request it comes from, a
// score). Candidates are then assigned greedily, best score first, and a
// span serves one parameter only: "convert 100 USD to EUR" gives USD to
// the source currency and EUR to the target, never one code to both.
//
// An identifier (a tracking number, an order id, an invoice reference)
// takes a code of the request: after the parameter's noun ("order 12345",
// "the parcel JD0146000062"), or the request's one code (letters and
// digits mixed, INV-2024-0042) when the tool has one identifier to give
// it to. Two codes and no noun to tell them apart are asked for.

// slotKind is the kind of value a parameter takes.
type slotKind int

const (
	slotNone        slotKind = iota
	slotEnum                 // one of the schema's enum values
	slotNumber               // integer or number
	slotURL                  // http(s) URL
	slotEmail                // email address
	slotPath                 // file system path
	slotDate                 // ISO 8601 date
	slotCurrency             // ISO 4217 code
	slotCountryCode          // ISO 3166-1 alpha-2 code
	slotLanguage             // ISO 639-1 code or BCP 47 tag
	slotPlace                // a city, a country, a location by name
	slotPerson               // a person or user by name
	slotText                 // free text: a message, a query
	slotEndpoint             // a bare from/to/source/target: a code or a place
	slotIdentifier           // an id, a tracking number, a reference: a code
)

var slotKindNames = [...]string{"none", "enum", "number", "url", "email", "path", "date", "currency", "country-code", "language", "place", "person", "text", "endpoint", "identifier"}

// String names the kind for fmt (failure messages and the slot tests print
// kinds by name); the server itself never prints one.
func (k slotKind) String() string { return slotKindNames[k] }

// slotRole says which end of a movement a parameter is: from/source/base
// or to/target/destination. It decides between two values of one kind.
type slotRole int

const (
	roleNone slotRole = iota
	roleFrom
	roleTo
)

// slotParam is what slot filling knows of one parameter.
type slotParam struct {
	name     string
	prop     schemaProperty
	kind     slotKind
	role     slotRole
	required bool
	// hinted: a number parameter whose words say it counts or measures
	// (limit, count, amount…); an optional number is filled only then.
	hinted bool
	// wholeText: free text (a query, a prompt) that takes the whole
	// sub-goal when the request gives no narrower value.
	wholeText bool
	// keys are the words that name the parameter in a request ("message"
	// in "the message hello"); synonyms are other words that name it, a
	// little less surely: "text" for a message, "parcel" for a tracking
	// number.
	keys, synonyms []string
	// shape is what the parameter shows of its values (see shape.go); a
	// candidate without that shape is never proposed. Nil: none.
	shape *valueShape
}

// slotFill is a value found for a parameter, and what the plan says of it.
type slotFill struct {
	value any
	// parts are the request's words a composed value was made of (see
	// compose.go); nil for a value taken whole.
	parts []string
	// note is "name = value"; "name = the request's text" when the value
	// is the whole sub-goal, and no value for a secret.
	note string
}

// slotCandidate is a proposed value for params[param], taken from
// text[start:end] (start < 0: the whole text, which consumes no span).
// A composed value (see compose.go) takes the spans of its parts, and its
// note says where it came from.
type slotCandidate struct {
	param      int
	value      any
	start, end int
	score      int
	spans      [][2]int
	note       string
}

// Words in a parameter's name, title or description that decide its kind.
var (
	slotWordsEmail    = []string{"email", "mail"}
	slotWordsURL      = []string{"url", "uri", "link", "endpoint", "website", "href", "homepage"}
	slotWordsPath     = []string{"path", "file", "filename", "filepath", "dir", "directory", "folder", "root", "dirname"}
	slotWordsCurrency = []string{"currency", "currencies", "4217"}
	slotWordsLanguage = []string{"language", "lang", "locale", "639", "bcp", "bcp47"}
	slotWordsPlace    = []string{"city", "location", "place", "town", "country", "region", "destination", "origin", "venue", "village", "province", "area", "where", "airport"}
	slotWordsPerson   = []string{"person", "user", "username", "recipient", "assignee", "owner", "contact", "colleague", "friend", "member", "author", "attendee", "invitee", "who", "employee", "customer", "name", "handle", "addressee"}
	slotWordsText     = []string{"query", "search", "text", "message", "msg", "prompt", "content", "question", "topic", "keyword", "keywords", "input", "body", "note", "subject", "comment", "q"}
	// Free text that may be the whole sub-goal when nothing better is found.
	// A message, unlike a query, is not the request that asks to send it.
	slotWordsWholeText = []string{"query", "search", "prompt", "question", "topic", "keyword", "keywords", "input", "q"}
	// Names too vague to decide a kind over what the description says.
	slotVagueNames  = []string{"q", "input", "value", "arg", "term", "s"}
	slotWordsHint   = []string{"count", "limit", "number", "top", "max", "maximum", "size", "amount", "n", "num", "quantity", "qty", "days", "hours", "minutes", "page", "total", "price", "sum"}
	slotWordsAmount = []string{"amount", "price", "sum", "total", "value", "cost", "quantity", "qty"}
	slotWordsFrom   = []string{"from", "source", "src", "base", "origin", "sell", "departure"}
	slotWordsTo     = []string{"to", "target", "dest", "destination", "quote", "into", "buy", "arrival"}
	// A "name" of one of these is no person's name.
	slotWordsThing = []string{"file", "dir", "folder", "project", "repo", "repository", "branch", "bucket", "table", "database", "tool", "key", "product", "item", "tag", "label", "channel", "team", "org", "organization", "company", "app", "service", "host", "domain", "city", "country", "place", "location"}
	// Synonyms that name free text in a request.
	slotTextSynonyms = []string{"message", "text", "msg", "note", "content", "body"}
	// Words that make a string an identifier, anywhere in its name or
	// description; and the weaker "number" or "code" of "order number",
	// "promo code", which do unless the words say what else it is (a
	// phone number, code to run). A currency, country or language code
	// is of its own kind.
	slotWordsIdentifier     = []string{"id", "ids", "identifier", "uuid", "guid", "sku", "serial", "waybill", "tracking", "reference", "ref", "barcode", "isbn", "ean", "upc", "awb", "pnr", "invoice"}
	slotWordsIdentifierWeak = []string{"number", "code"}
	slotWordsIdentifierName = []string{"no", "nr", "num"} // "invoice_no": in a name only
	slotWordsNotIdentifier  = []string{"phone", "telephone", "mobile", "fax", "source", "snippet", "script", "program", "execute", "run", "python", "javascript", "sql", "html", "css", "language", "lang"}
	// What a shipment's identifier is the number of: "the parcel X".
	slotWordsShipment = []string{"tracking", "waybill", "awb", "shipment", "consignment", "parcel", "package"}
	slotShipmentNouns = []string{"parcel", "package", "shipment", "consignment"}
	// Words that never name a parameter in a request.
	slotKeyStop = []string{"the", "a", "an", "of", "id", "value", "to", "from", "for", "in", "at", "on", "by", "with", "and", "or", "is", "q", "n"}
)

// classifySlot judges a parameter's kind and role from its schema (enum,
// type, format) and its words: the name and title first; the description
// when they say nothing, when the name is as vague as "q", or when it
// makes a "country" a country code.
func classifySlot(name string, sp schemaProperty, required bool) slotParam {
	p := slotParam{name: name, prop: sp, required: required, shape: shapeOf(sp)}
	nameWords := splitWords(name + " " + sp.Title)
	descWords := splitWords(sp.Description)
	all := append(slices.Clone(nameWords), descWords...)
	has := func(ws []string, vocab []string) bool {
		for _, w := range ws {
			if slices.Contains(vocab, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has(nameWords, slotWordsFrom):
		p.role = roleFrom
	case has(nameWords, slotWordsTo):
		p.role = roleTo
	}
	for _, w := range nameWords {
		if !slices.Contains(slotKeyStop, w) && !slices.Contains(slotWordsFrom, w) && !slices.Contains(slotWordsTo, w) && !slices.Contains(p.keys, w) {
			p.keys = append(p.keys, w)
		}
	}
	if len(nameWords) > 1 {
		p.keys = append(p.keys, strings.Join(splitWords(name), " "))
	}
	switch {
	case len(sp.Enum) > 0:
		p.kind = slotEnum
		return p
	case sp.is("integer") || sp.is("number"):
		p.kind = slotNumber
		p.hinted = has(all, slotWordsHint)
		return p
	case !sp.is("string"):
		return p
	}
	switch sp.Format {
	case "email", "idn-email":
		p.kind = slotEmail
	case "uri", "url", "iri":
		p.kind = slotURL
	case "date":
		p.kind = slotDate
	}
	if p.kind != slotNone {
		return p
	}
	p.kind = stringKind(nameWords, has)
	byDescription := stringKind(all, has)
	vague := len(nameWords) == 1 && slices.Contains(slotVagueNames, nameWords[0])
	switch {
	case p.kind == slotNone, vague && byDescription != slotNone:
		p.kind = byDescription
	case p.kind == slotPlace && byDescription == slotCountryCode:
		p.kind = slotCountryCode // "country": "ISO 3166-1 alpha-2 code"
	case p.kind == slotPerson && byDescription == slotEmail:
		// "recipient": "email address of the recipient" takes an
		// address, never the person's name (see dataflow.go)
		p.kind = slotEmail
	}
	if p.kind == slotNone && (has(all, slotWordsIdentifierWeak) || has(nameWords, slotWordsIdentifierName)) && !has(all, slotWordsNotIdentifier) {
		p.kind = slotIdentifier // "order_number", "invoice_no", "promo code"
	}
	if p.kind == slotNone && p.role != roleNone {
		p.kind = slotEndpoint
	}
	switch p.kind {
	case slotText:
		if has(nameWords, slotTextSynonyms) {
			p.synonyms = slotTextSynonyms
		}
		// A message described as answering a question is still a message.
		p.wholeText = has(nameWords, slotWordsWholeText) || p.synonyms == nil && has(all, slotWordsWholeText)
	case slotIdentifier:
		if has(all, slotWordsShipment) {
			p.synonyms = slotShipmentNouns
		}
	}
	return p
}

// stringKind is the kind that the words ws say a string parameter is.
func stringKind(ws []string, has func(ws, vocab []string) bool) slotKind {
	code := has(ws, []string{"code", "iso", "alpha", "alpha2", "3166"})
	switch {
	case has(ws, slotWordsEmail):
		return slotEmail
	case has(ws, slotWordsURL):
		return slotURL
	case has(ws, []string{"date"}) && has(ws, []string{"iso", "8601", "yyyy"}):
		return slotDate
	case has(ws, slotWordsIdentifier):
		// before the kinds of the thing identified: a file_id, a city_id
		// and a user_id are codes, not a path, a place and a name
		return slotIdentifier
	case has(ws, slotWordsPath):
		return slotPath
	case has(ws, slotWordsCurrency):
		return slotCurrency
	case has(ws, []string{"country"}) && code, has(ws, []string{"3166"}):
		return slotCountryCode
	case has(ws, slotWordsLanguage):
		return slotLanguage
	case has(ws, slotWordsPlace):
		return slotPlace
	case has(ws, slotWordsPerson) && !(has(ws, []string{"name"}) && has(ws, slotWordsThing)):
		return slotPerson
	case has(ws, slotWordsText):
		return slotText
	}
	return slotNone
}

// splitWords splits a name or a sentence into lower-case words: snake,
// kebab and camel case are split, as is punctuation.
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// camelCase and HTTPServer boundaries
			if unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(cur[len(cur)-1])) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return words
}

// slotWord is a word of the request: its text without the punctuation
// around it, and where that text is.
type slotWord struct {
	text       string
	lower      string
	start, end int
}

var slotTokenPattern = regexp.MustCompile(`\S+`)

const (
	slotTrimLeft  = "\"'“‘«([{<"
	slotTrimRight = "\"'”’».,;:!?)]}>"
)

func slotWords(text string) []slotWord {
	var words []slotWord
	for _, loc := range slotTokenPattern.FindAllStringIndex(text, -1) {
		raw := text[loc[0]:loc[1]]
		core := strings.TrimLeft(raw, slotTrimLeft)
		start := loc[0] + len(raw) - len(core)
		core = strings.TrimRight(core, slotTrimRight)
		if core != "" {
			words = append(words, slotWord{text: core, lower: strings.ToLower(core), start: start, end: start + len(core)})
		}
	}
	return words
}

// What requests hold, beyond urlPattern, pathPattern and quotedPattern.
var (
	emailPattern   = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+`)
	isoDatePattern = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	// Spans whose digits are dates or times, not quantities.
	slotDatePatterns = []*regexp.Regexp{
		regexp.MustCompile(`\b\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?`),
		regexp.MustCompile(`\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b`),
		regexp.MustCompile(`(?i)\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\b\.?)?`),
		regexp.MustCompile(`(?i)\b\d{1,2}\s*[ap]\.?m\b\.?`),
		regexp.MustCompile(`(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+\d{4}\b)?`),
		regexp.MustCompile(`(?i)\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b(?:,?\s+\d{4}\b)?`),
		regexp.MustCompile(`(?i)\b(?:in|since|from|by|before|after|during|until|till|of|year)\s+(?:19|20)\d{2}\b`),
		regexp.MustCompile(`(?i)\b(?:19|20)\d{2}\s*(?:-|to|–)\s*(?:19|20)\d{2}\b`),
		regexp.MustCompile(`(?i)\b(?:Q[1-4]|H[12]|FY)\s*(?:19|20)?\d{2}\b|\b(?:19|20)\d{2}\s*(?:Q[1-4]|H[12])\b`),
	}
	// A number as JSON writes it: 007 is an id, not a quantity.
	// quotedPattern at the start of a text.
	slotQuotedPrefix = regexp.MustCompile(`^(?:` + quotedPattern.String() + `)`)
	slotThen         = regexp.MustCompile(`(?i)\s(?:and then|then)\s`)
	slotNumberCore   = regexp.MustCompile(`^[-+]?(?:0|[1-9]\d*)(?:\.\d+)?$`)
	slotLangTag      = regexp.MustCompile(`^([a-z]{2})[-_]([A-Za-z]{2,4})$`)
	// A capitalised word: Paris, São, O'Brien, Saint-Étienne.
	slotCapitalised = regexp.MustCompile(`^\p{Lu}[\p{Ll}'’-]*\p{Ll}[\p{L}'’-]*$`)
	slotAllCaps     = regexp.MustCompile(`^\p{Lu}{2,5}$`)
)

// Vocabularies of the finders.
var (
	isoCurrencies = strings.Fields(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
		CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF
		IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU
		MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP
		SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XAG XAU XCD XOF XPF
		YER ZAR ZMW ZWL`)
	isoCountries = strings.Fields(`AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV
		BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD
		GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR
		KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL
		NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV
		SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`)
	isoLanguages = strings.Fields(`aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de
		dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv
		ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr
		nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl
		tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu`)
	// Language codes that are also English words: a bare one is a code
	// only right after a word that introduces a language.
	slotLanguageWords = []string{"an", "am", "as", "be", "he", "hi", "id", "is", "it", "my", "no", "or", "so", "to", "me", "we", "us", "do", "go", "la"}
	// Capitalised words that are no place or person.
	slotNotNames = strings.Fields(`monday tuesday wednesday thursday friday saturday sunday january february march april may june july
		august september october november december today tomorrow tonight yesterday morning afternoon evening noon midnight i me you
		he she it we they us him her them everyone everybody someone all please thanks english french german spanish italian portuguese
		japanese chinese russian arabic dutch korean hindi swedish norwegian polish turkish greek christmas easter new-year the a an my
		our your his their this that these those`)
	// Lower-case words between the capitalised words of one name: Rio de
	// Janeiro, Frankfurt am Main.
	slotNameJoiners = []string{"de", "da", "do", "dos", "das", "del", "della", "di", "du", "la", "le", "les", "los", "las", "van", "von", "der", "den", "am", "upon", "y", "el"}
	// Words after which a capitalised word is a place, or a person.
	slotPlaceTriggers  = []string{"in", "at", "near", "for", "from", "to", "around", "into", "towards", "via"}
	slotPersonTriggers = []string{"to", "for", "from", "with", "tell", "ask", "notify", "ping", "let", "remind", "message", "email", "call", "thank", "invite", "cc", "greet", "congratulate", "meet", "dm", "text", "by", "assign", "welcome", "named", "called",
		"send", "mail", "e-mail", "drop", "shoot", "contact", "inform"} // "Send Ann an email", "Drop Bo a line"
	// The best of the triggers (+5).
	slotPlaceStrong  = []string{"in", "at", "near", "around"}
	slotPersonStrong = []string{"to", "tell", "ask", "notify", "ping", "let", "remind", "greet", "dm", "thank", "invite", "congratulate", "welcome", "named", "called"}
	// Words that introduce a language code.
	slotLanguageTriggers = []string{"to", "into", "from", "in"}
	// Words that cannot start a value that follows a parameter's name
	// without ":" or "=": "send a message to Bob" names no message.
	slotValueStop = strings.Fields(`to for in at on of from with about that this these those is are was be and or by as into
		the a an it its my your his her their our which who what when where how saying says`)
	// What comes before the free text of a message: "reply saying
	// thanks", "let Bob know the build is green", "tell the team that…".
	slotSayPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)(?:^|\s)(?:saying|says|reading|that reads|that says|with the text|with text)\s+`),
		regexp.MustCompile(`(?:^|\s)[Ll]et\s+\S+(?:\s+\S+)?\s+know\s+(?:that\s+)?`),
		regexp.MustCompile(`(?:^|\s)(?:[Tt]ell|[Ii]nform|[Rr]emind)\s+\S+(?:\s+\S+)?\s+that\s+`),
	}
)

// Scores of the finders, best first.
const (
	scoreNamed     = 100 // after the parameter's name: "the message hello", "city: Paris"
	scoreSynonym   = 95  // after a synonym: "the text hello" for a message
	scoreSaying    = 92  // "saying hello"
	scoreQuoted    = 90  // quoted text
	scoreAmount    = 85  // a number next to a currency
	scoreExact     = 80  // a URL, an email, a code, a date, an enum value
	scoreName      = 70  // a capitalised name after in/to/for…
	scoreNumber    = 50  // some number, for a number parameter that needs one
	scoreWholeGoal = 10  // the whole sub-goal, for a free-text parameter
	roleBonus      = 20  // the value sits after from (to) for a from (to) parameter
)

// fillSlots returns the values that text gives for the parameters, by
// name. Parameters the text does not clearly give are absent. A value taken
// from within a secret of the text (what redact.Text removes: the
// abc123 of "api key abc123") goes to a parameter whose name says it is
// secret, never to another ("id"), which would send it where it does not
// belong and keep it unsealed.
func fillSlots(text string, params []slotParam) map[string]slotFill {
	words := slotWords(text)
	secrets := secretSpans(text)
	inSecret := func(c slotCandidate) bool {
		return c.start >= 0 && slices.ContainsFunc(secrets, func(s [2]int) bool { return s[0] <= c.start && c.end <= s[1] })
	}
	f := &slotFinder{text: text, words: words, params: params}
	f.reserved = f.reservedSpans()
	for i := range params {
		f.find(i)
	}
	slices.SortStableFunc(f.cands, func(a, b slotCandidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.start, b.start), cmp.Compare(a.param, b.param))
	})
	out := map[string]slotFill{}
	var used [][2]int
	for _, c := range f.cands {
		p := params[c.param]
		if _, done := out[p.name]; done {
			continue
		}
		if !redact.IsSecretName(p.name) && inSecret(c) {
			continue
		}
		spans := c.spans
		if spans == nil && c.start >= 0 {
			spans = [][2]int{{c.start, c.end}}
		}
		if slices.ContainsFunc(spans, func(s [2]int) bool {
			return slices.ContainsFunc(used, func(u [2]int) bool { return s[0] < u[1] && u[0] < s[1] })
		}) {
			continue
		}
		used = append(used, spans...)
		note := fmt.Sprintf("%s = %v", p.name, c.value)
		switch {
		case redact.IsSecretName(p.name) || redact.HasSecret(fmt.Sprint(c.value)):
			// The argument is sealed at rest; its note must not repeat it.
			note = p.name + " = a secret, not shown"
		case c.start < 0:
			note = p.name + " = the request's text"
		case c.note != "":
			note = c.note
		}
		fill := slotFill{value: c.value, note: note}
		if len(c.spans) > 1 {
			for _, sp := range c.spans {
				fill.parts = append(fill.parts, text[sp[0]:sp[1]])
			}
		}
		out[p.name] = fill
	}
	return out
}

// secretSpans are the spans of text that redact.Text replaces by
// its marker, found by aligning the redacted text with text; nil when the
// two cannot be aligned (a URL's password is replaced by another marker),
// and then no candidate is refused for being in a secret.
func secretSpans(text string) [][2]int {
	redacted := redact.Text(text, 2*len(text)+64)
	pieces := strings.Split(redacted, redact.Marker)
	if len(pieces) < 2 || !strings.HasPrefix(text, pieces[0]) {
		return nil
	}
	var spans [][2]int
	pos := len(pieces[0])
	for i, piece := range pieces[1:] {
		var n int // the secret's length: up to where the next piece starts
		if i == len(pieces)-2 {
			if !strings.HasSuffix(text[pos:], piece) {
				return nil
			}
			n = len(text) - pos - len(piece)
		} else if n = strings.Index(text[pos:], piece); n < 0 {
			return nil
		}
		spans = append(spans, [2]int{pos, pos + n})
		pos += n + len(piece)
	}
	return spans
}

// slotFinder holds the request being searched and the candidates found.
type slotFinder struct {
	text   string
	words  []slotWord
	params []slotParam
	// reserved spans are URLs, emails, paths and dates: their digits and
	// words are theirs alone.
	reserved [][2]int
	cands    []slotCandidate
}

func (f *slotFinder) reservedSpans() [][2]int {
	var spans [][2]int
	for _, re := range append([]*regexp.Regexp{urlPattern, emailPattern}, slotDatePatterns...) {
		for _, loc := range re.FindAllStringIndex(f.text, -1) {
			spans = append(spans, [2]int{loc[0], loc[1]})
		}
	}
	for _, m := range pathPattern.FindAllStringSubmatchIndex(f.text, -1) {
		spans = append(spans, [2]int{m[2], m[3]})
	}
	return spans
}

func (f *slotFinder) isReserved(start, end int) bool {
	return slices.ContainsFunc(f.reserved, func(r [2]int) bool { return start < r[1] && r[0] < end })
}

// add proposes value for params[i], adjusted for the parameter's role:
// after "from" suits a from parameter, after "to" (or "into", "in") a to
// parameter. When the tool has both ends, a value after neither word takes
// an end only if the request marks the other one: "100 USD to EUR" makes
// USD the source, but "the rate for JPY" says nothing of which end JPY is.
func (f *slotFinder) add(i int, value any, start, end, score int) {
	f.addWithNote(i, value, start, end, score, nil, "")
}

// addWithNote is add for a value that may be composed of parts (spans,
// nil for one) and say where it came from (note, "" for "name = value").
// A value without the parameter's shape is not proposed.
func (f *slotFinder) addWithNote(i int, value any, start, end, score int, spans [][2]int, note string) {
	if f.params[i].shape.problem(value) != "" {
		return
	}
	if start >= 0 && f.params[i].role != roleNone {
		prev := f.wordBefore(start)
		toWord := func(w string) bool { return w == "to" || w == "into" || w == "in" }
		role := f.params[i].role
		switch {
		case role == roleFrom && prev == "from", role == roleTo && toWord(prev):
			score += roleBonus
		case role == roleFrom && toWord(prev), role == roleTo && prev == "from":
			score -= roleBonus
		case f.hasRole(oppositeRole(role)):
			otherEnd := func(w slotWord) bool {
				return role == roleFrom && toWord(w.lower) || role == roleTo && w.lower == "from"
			}
			if !slices.ContainsFunc(f.words, otherEnd) {
				return
			}
		}
	}
	f.cands = append(f.cands, slotCandidate{param: i, value: value, start: start, end: end, score: score, spans: spans, note: note})
}

func oppositeRole(r slotRole) slotRole { return roleFrom + roleTo - r }

func (f *slotFinder) hasRole(r slotRole) bool {
	return slices.ContainsFunc(f.params, func(p slotParam) bool { return p.role == r })
}

// wordBefore is the lower-case word that ends before offset, "" if none.
func (f *slotFinder) wordBefore(offset int) string {
	j := f.wordIndexAt(offset)
	if j <= 0 {
		return ""
	}
	return f.words[j-1].lower
}

// wordIndexAt is the index of the word that starts at or contains offset.
func (f *slotFinder) wordIndexAt(offset int) int {
	j, _ := slices.BinarySearchFunc(f.words, offset, func(w slotWord, offset int) int { return cmp.Compare(w.end, offset+1) })
	return j
}

func (f *slotFinder) find(i int) {
	p := f.params[i]
	f.findNamed(i)
	f.findComposed(i)
	switch p.kind {
	case slotEnum:
		f.findEnum(i)
	case slotNumber:
		f.findNumbers(i)
	case slotURL:
		f.findPattern(i, urlPattern)
	case slotEmail:
		f.findPattern(i, emailPattern)
	case slotPath:
		for _, m := range pathPattern.FindAllStringSubmatchIndex(f.text, -1) {
			v := strings.TrimRight(f.text[m[2]:m[3]], ".,;:!?)")
			if len(v) > 1 && !f.overlapsURL(m[2]) {
				f.add(i, v, m[2], m[2]+len(v), scoreExact)
			}
		}
	case slotDate:
		f.findPattern(i, isoDatePattern)
	case slotCurrency:
		f.findCodes(i, f.currencyAt)
	case slotCountryCode:
		f.findCodes(i, f.countryAt)
	case slotLanguage:
		f.findCodes(i, f.languageAt)
	case slotPlace:
		f.findNames(i, slotPlaceTriggers, slotPlaceStrong, true)
	case slotPerson:
		f.findNames(i, slotPersonTriggers, slotPersonStrong, false)
		for j, w := range f.words {
			if strings.HasPrefix(w.text, "@") && len(w.text) > 1 && !f.isReserved(w.start, w.end) {
				f.add(i, w.text[1:], w.start+1, w.end, scoreExact-j)
			}
		}
	case slotEndpoint:
		f.findCodes(i, f.currencyAt)
		f.findNames(i, slotPlaceTriggers, slotPlaceStrong, true)
	case slotText:
		f.findText(i)
	case slotIdentifier:
		f.findCode(i)
	}
	f.findFromWording(i) // free text, file names, named things, filters (freetext.go)
}

func (f *slotFinder) overlapsURL(offset int) bool {
	for _, loc := range urlPattern.FindAllStringIndex(f.text, -1) {
		if loc[0] <= offset && offset < loc[1] {
			return true
		}
	}
	return false
}

func (f *slotFinder) findPattern(i int, re *regexp.Regexp) {
	for n, loc := range re.FindAllStringIndex(f.text, -1) {
		v := strings.TrimRight(f.text[loc[0]:loc[1]], ".,;:!?)")
		f.add(i, v, loc[0], loc[0]+len(v), scoreExact-n)
	}
}

// findNamed finds the value right after the parameter's name: "the
// message hello", "city: Paris", "limit=5", "the city of Paris", and for
// numbers before it too: "5 days".
func (f *slotFinder) findNamed(i int) {
	p := f.params[i]
	try := func(keys []string, score int) {
		for _, key := range keys {
			re := mustCompileCached(`(?i)(?:^|[^\p{L}\p{N}_])` + regexp.QuoteMeta(key) + `(\s*[:=]\s*|\s+(?:(?:of|named|called|is|was)\s+)?)`)
			for _, m := range re.FindAllStringSubmatchIndex(f.text, -1) {
				sep := strings.ToLower(f.text[m[2]:m[3]])
				explicit := strings.ContainsAny(sep, ":=") || strings.Contains(sep, "named") || strings.Contains(sep, "called")
				if v, start, end, ok := f.valueAt(i, m[1], explicit); ok {
					// "order id 42" names order_id better than "order" does
					f.add(i, v, start, end, score+strings.Count(key, " "))
				}
			}
			if p.kind == slotNumber {
				// "5 days", "3 results"
				re := mustCompileCached(`(?i)(?:^|\s)([-+]?\d+(?:\.\d+)?)\s+` + regexp.QuoteMeta(key) + `\b`)
				for _, m := range re.FindAllStringSubmatchIndex(f.text, -1) {
					if v, ok := f.numberValue(p, f.text[m[2]:m[3]]); ok && !f.isReserved(m[2], m[3]) {
						f.add(i, v, m[2], m[3], score)
					}
				}
			}
		}
	}
	try(p.keys, scoreNamed)
	try(p.synonyms, scoreSynonym)
}

// valueAt reads the value of params[i] that starts at offset, right after
// its name. Without ":" or "=" (explicit) a value must look like one: not
// a word such as "to" or "the", capitalised for a name.
func (f *slotFinder) valueAt(i, offset int, explicit bool) (any, int, int, bool) {
	p := f.params[i]
	rest := f.text[offset:]
	if rest == "" {
		return nil, 0, 0, false
	}
	if q := slotQuotedPrefix.FindStringSubmatchIndex(rest); q != nil {
		for g := 2; g+1 < len(q); g += 2 {
			if q[g] >= 0 {
				v := rest[q[g]:q[g+1]]
				if p.kind == slotText || p.kind == slotPlace || p.kind == slotPerson || p.kind == slotNone || p.kind == slotEndpoint || p.kind == slotIdentifier {
					return v, offset + q[g], offset + q[g+1], true
				}
				return f.typedValue(i, v, offset+q[g], offset+q[g+1])
			}
		}
	}
	j := f.wordIndexAt(offset)
	if j >= len(f.words) {
		return nil, 0, 0, false
	}
	w := f.words[j]
	if w.start < offset {
		// "text=hi" is one word of the request; its value starts inside.
		w.text = f.text[offset:w.end]
		w.lower, w.start = strings.ToLower(w.text), offset
	}
	if !explicit && slices.Contains(slotValueStop, w.lower) {
		return nil, 0, 0, false
	}
	switch p.kind {
	case slotText:
		end := f.clauseEnd(offset)
		v := strings.TrimRight(f.text[offset:end], " \t.!?,;:")
		if v == "" {
			return nil, 0, 0, false
		}
		return v, offset, offset + len(v), true
	case slotPlace, slotPerson, slotEndpoint:
		if k, end := f.nameAt(j); k > 0 {
			return f.text[w.start:end], w.start, end, true
		}
		if explicit && !slices.Contains(slotValueStop, w.lower) {
			return w.text, w.start, w.end, true
		}
		if p.kind == slotEndpoint {
			if c, ok := f.currencyAt(j); ok {
				return c, w.start, w.end, true
			}
		}
		return nil, 0, 0, false
	case slotNone:
		// A string of no known kind: after "sku:" any word; after "sku"
		// one that looks like an identifier (ABC-12, v2, main.go), not
		// a plain word of the sentence.
		if !p.prop.is("string") || !explicit && !strings.ContainsFunc(w.text, func(r rune) bool {
			return unicode.IsDigit(r) || unicode.IsUpper(r) || strings.ContainsRune("-_./", r)
		}) {
			return nil, 0, 0, false
		}
		return w.text, w.start, w.end, true
	case slotIdentifier:
		// After "order:" any word; after "order" or "the parcel" a code
		// with a digit (12345, JD0146000062) or in capitals (ABC-X), not
		// a word of the sentence ("the order status") nor a currency.
		v, start := strings.TrimPrefix(w.text, "#"), w.start+len(w.text)-len(strings.TrimPrefix(w.text, "#"))
		caps := !strings.ContainsFunc(v, unicode.IsLower) && len(v) > 1 && strings.ContainsFunc(v, unicode.IsLetter)
		if v == "" || !explicit && !strings.ContainsFunc(v, unicode.IsDigit) && (!caps || slices.Contains(isoCurrencies, v)) {
			return nil, 0, 0, false
		}
		return v, start, w.end, true
	}
	return f.typedValue(i, w.text, w.start, w.end)
}

// typedValue checks that v, at [start, end), is a value of params[i]'s
// kind, and returns it in its JSON form.
func (f *slotFinder) typedValue(i int, v string, start, end int) (any, int, int, bool) {
	p := f.params[i]
	ok := false
	var out any = v
	switch p.kind {
	case slotNumber:
		out, ok = f.numberValue(p, v)
	case slotEnum:
		out, ok = enumValue(p.prop.Enum, v)
	case slotURL:
		ok = urlPattern.MatchString(v)
	case slotEmail:
		ok = emailPattern.MatchString(v)
	case slotPath:
		ok = strings.ContainsAny(v, "/\\")
	case slotDate:
		ok = isoDatePattern.MatchString(v)
	case slotCurrency:
		u := strings.ToUpper(v)
		out, ok = u, slices.Contains(isoCurrencies, u)
	case slotCountryCode:
		u := strings.ToUpper(v)
		out, ok = u, slices.Contains(isoCountries, u)
	case slotLanguage:
		ok = slotLangTag.MatchString(v) || slices.Contains(isoLanguages, strings.ToLower(v))
	}
	return out, start, end, ok
}

func (f *slotFinder) numberValue(p slotParam, v string) (any, bool) {
	v = strings.TrimPrefix(v, "#") // issue #42
	if !slotNumberCore.MatchString(v) {
		return nil, false
	}
	if p.prop.is("integer") && !p.prop.is("number") && strings.Contains(v, ".") {
		return nil, false
	}
	if len(p.prop.Enum) > 0 {
		return enumValue(p.prop.Enum, v)
	}
	return json.Number(strings.TrimPrefix(v, "+")), true
}

// enumValue is the enum value that v spells (case aside), if any.
func enumValue(enum []any, v string) (any, bool) {
	for _, e := range enum {
		switch e := e.(type) {
		case string:
			if strings.EqualFold(e, v) {
				return e, true
			}
		case float64:
			if n, ok := json.Number(v).Float64(); ok == nil && n == e {
				return e, true
			}
		}
	}
	return nil, false
}

// clauseEnd is where the free text that starts at offset ends: at the end
// of its clause, or before a "to Bob"/"in Paris" that another parameter of
// the tool takes.
func (f *slotFinder) clauseEnd(offset int) int {
	end := len(f.text)
	if k := strings.IndexAny(f.text[offset:], ",;\n"); k >= 0 {
		end = offset + k
	}
	if k := slotThen.FindStringIndex(f.text[offset:end]); k != nil {
		end = offset + k[0]
	}
	takesNames := slices.ContainsFunc(f.params, func(p slotParam) bool {
		return p.kind == slotPlace || p.kind == slotPerson || p.kind == slotEndpoint
	})
	if takesNames {
		for j := f.wordIndexAt(offset) + 1; j+1 < len(f.words) && f.words[j].start < end; j++ {
			trigger := slices.Contains(slotPlaceTriggers, f.words[j].lower) || slices.Contains(slotPersonTriggers[:4], f.words[j].lower)
			if trigger && slotIsName(f.words[j+1]) {
				return f.words[j].start
			}
		}
	}
	return end
}

func (f *slotFinder) findEnum(i int) {
	p := f.params[i]
	var found []slotCandidate
	for _, e := range p.prop.Enum {
		var s string
		switch e := e.(type) {
		case string:
			s = e
		case float64:
			s = json.Number(fmt.Sprint(e)).String()
		default:
			continue
		}
		if s == "" {
			continue
		}
		re := regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(` + regexp.QuoteMeta(s) + `)(?:$|[^\p{L}\p{N}_])`)
		for _, m := range re.FindAllStringSubmatchIndex(f.text, -1) {
			if !f.isReserved(m[2], m[3]) {
				found = append(found, slotCandidate{param: i, value: e, start: m[2], end: m[3], score: scoreExact})
			}
		}
	}
	// Two different values named: the request does not say which.
	if len(found) > 0 && !slices.ContainsFunc(found, func(c slotCandidate) bool { return c.value != found[0].value }) {
		for _, c := range found {
			f.add(i, c.value, c.start, c.end, c.score)
		}
	}
}

// findNumbers proposes the request's numbers for a number parameter: those
// next to a currency for an amount, any other for a parameter that needs
// a number or whose name says it counts. Numbers of dates, times, URLs,
// paths and codes are never proposed.
func (f *slotFinder) findNumbers(i int) {
	p := f.params[i]
	words := splitWords(p.name + " " + p.prop.Title + " " + p.prop.Description)
	amount := slices.ContainsFunc(words, func(w string) bool { return slices.Contains(slotWordsAmount, w) })
	if !p.required && !p.hinted {
		return
	}
	for j, w := range f.words {
		core := strings.TrimLeft(w.text, "$€£¥")
		symbol := core != w.text
		v, ok := f.numberValue(p, core)
		if !ok || f.isReserved(w.start, w.end) {
			continue
		}
		start := w.end - len(core)
		score := scoreNumber - j
		nextCode := j+1 < len(f.words) && slices.Contains(isoCurrencies, strings.ToUpper(f.words[j+1].text))
		prevCode := j > 0 && slices.Contains(isoCurrencies, f.words[j-1].text)
		if amount && (symbol || nextCode || prevCode) {
			score = scoreAmount - j
		}
		f.add(i, v, start, w.end, score)
	}
}

// findCode proposes the request's code for an identifier when the request
// has exactly one ("Track the parcel JD0146000062") and the tool one
// identifier to give it to: its one required identifier, or its one
// identifier if none is required, so that requestFit, which sees only the
// required parameters, agrees with the plan. Two codes, or two
// identifiers, are told apart by their nouns only (see findNamed).
func (f *slotFinder) findCode(i int) {
	identifiers := func(requiredOnly bool) int {
		n := 0
		for _, p := range f.params {
			if p.kind == slotIdentifier && (p.required || !requiredOnly) {
				n++
			}
		}
		return n
	}
	switch required := identifiers(true); {
	case required > 1, required == 1 && !f.params[i].required, required == 0 && identifiers(false) > 1:
		return
	}
	var code slotWord
	for j, w := range f.words {
		if !f.codeAt(j) {
			continue
		}
		v := strings.TrimPrefix(w.text, "#")
		if code.text != "" && code.text != v {
			return // two codes: which one?
		}
		if code.text == "" {
			code = slotWord{text: v, start: w.end - len(v), end: w.end}
		}
	}
	if code.text != "" {
		f.add(i, code.text, code.start, code.end, scoreExact)
	}
}

// Words of a code: letters, digits, "-" and "_"; a number with a unit or
// an ordinal (20GB, 1080p, 3rd) is none.
var (
	slotCodeChars    = regexp.MustCompile(`^[\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)*$`)
	slotQuantityUnit = regexp.MustCompile(`^\d+\p{L}{1,3}$`)
)

// codeAt reports whether word j is a code that the request gives without
// naming it: letters and digits mixed with at least three digits
// (JD0146000062, INV-2024-0042, A-1001), or twelve digits and more (a
// parcel's 00340434161094042557), not an amount of a currency. Shorter
// digits, dashed or not, may as well be a quantity, a range or a phone
// number (555-1234): only their noun makes them a code ("order 12345").
// A word of a URL, email, path or date is none, but a code may hold what
// looks like a date (INV-2019-2024).
func (f *slotFinder) codeAt(j int) bool {
	w := f.words[j]
	v := strings.TrimPrefix(w.text, "#")
	if !slotCodeChars.MatchString(v) || slotQuantityUnit.MatchString(v) {
		return false
	}
	start := w.end - len(v)
	for _, r := range f.reserved {
		inside := start <= r[0] && r[1] <= w.end && r != [2]int{start, w.end}
		if start < r[1] && r[0] < w.end && !inside {
			return false
		}
	}
	digits := 0
	for _, r := range v {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	switch {
	case strings.ContainsFunc(v, unicode.IsLetter):
		return digits >= 3
	case strings.ContainsAny(v, "-_"):
		return false
	}
	nextTo := func(k int) bool {
		return k >= 0 && k < len(f.words) && slices.Contains(isoCurrencies, strings.ToUpper(f.words[k].text))
	}
	return digits >= 12 && !nextTo(j-1) && !nextTo(j+1)
}

// findCodes proposes the words that code says are codes of the kind.
func (f *slotFinder) findCodes(i int, code func(j int) (string, bool)) {
	for j, w := range f.words {
		if f.isReserved(w.start, w.end) {
			continue
		}
		if c, ok := code(j); ok {
			f.add(i, c, w.start, w.end, scoreExact-j)
		}
	}
}

// currencyAt: an ISO 4217 code as written in upper case, or in lower case
// right after a number ("100 usd").
func (f *slotFinder) currencyAt(j int) (string, bool) {
	w := f.words[j]
	u := strings.ToUpper(w.text)
	if !slices.Contains(isoCurrencies, u) {
		return "", false
	}
	if w.text == u || j > 0 && slotNumberCore.MatchString(strings.TrimLeft(f.words[j-1].text, "$€£¥")) {
		return u, true
	}
	return "", false
}

// countryAt: an ISO 3166-1 alpha-2 code as written in upper case.
func (f *slotFinder) countryAt(j int) (string, bool) {
	w := f.words[j]
	return w.text, slices.Contains(isoCountries, w.text)
}

// languageAt: a BCP 47 tag such as pt-BR, or an ISO 639-1 code; a code
// that is also an English word ("it", "no") only after "to", "into",
// "from" or "in".
func (f *slotFinder) languageAt(j int) (string, bool) {
	w := f.words[j]
	if m := slotLangTag.FindStringSubmatch(w.text); m != nil && slices.Contains(isoLanguages, m[1]) {
		return w.text, true
	}
	if !slices.Contains(isoLanguages, w.lower) || (w.text != w.lower && w.text != strings.ToUpper(w.text)) {
		return "", false
	}
	if slices.Contains(slotLanguageWords, w.lower) || w.text == w.lower {
		if j == 0 || !slices.Contains(slotLanguageTriggers, f.words[j-1].lower) {
			return "", false
		}
	}
	return w.text, true
}

// findNames proposes the capitalised names that follow a trigger word:
// "in Paris", "to Alice", "let Bob know". A sentence's first word is
// never one, since nothing precedes it.
func (f *slotFinder) findNames(i int, triggers, strong []string, place bool) {
	for j := 0; j+1 < len(f.words); j++ {
		t := f.words[j].lower
		if !slices.Contains(triggers, t) {
			continue
		}
		k, end := f.nameAt(j + 1)
		if k == 0 {
			if !place {
				continue
			}
			// NYC, LA: all capitals, but no currency
			w := f.words[j+1]
			if !slotAllCaps.MatchString(w.text) || slices.Contains(isoCurrencies, w.text) || f.isReserved(w.start, w.end) {
				continue
			}
			k, end = 1, w.end
		}
		score := scoreName
		if slices.Contains(strong, t) {
			score += 5
		}
		start := f.words[j+1].start
		f.add(i, f.text[start:end], start, end, score-j/4)
	}
}

// nameAt reads a capitalised name that starts at word j: "Paris", "New
// York", "Rio de Janeiro". It returns how many words it spans (0: none)
// and where it ends.
func (f *slotFinder) nameAt(j int) (int, int) {
	if j >= len(f.words) || !slotIsName(f.words[j]) || f.isReserved(f.words[j].start, f.words[j].end) {
		return 0, 0
	}
	n, end := 1, f.words[j].end
	for k := j + 1; k < len(f.words); k++ {
		// A name stops at punctuation.
		if strings.TrimSpace(f.text[f.words[k-1].end:f.words[k].start]) != "" {
			break
		}
		w := f.words[k]
		if slotIsName(w) {
			n, end = k-j+1, w.end
			continue
		}
		if slices.Contains(slotNameJoiners, w.text) && k+1 < len(f.words) && slotIsName(f.words[k+1]) {
			continue
		}
		break
	}
	return n, end
}

func slotIsName(w slotWord) bool {
	return slotCapitalised.MatchString(w.text) && !slices.Contains(slotNotNames, w.lower)
}

// findText proposes free text: quoted text; for a message, the words
// after "saying" or "let Bob know"; and for a query, else the whole
// sub-goal, which is the user's own words.
func (f *slotFinder) findText(i int) {
	p := f.params[i]
	for n, q := range quotedPattern.FindAllStringSubmatchIndex(f.text, -1) {
		for g := 2; g+1 < len(q); g += 2 {
			if q[g] >= 0 {
				f.add(i, f.text[q[g]:q[g+1]], q[g], q[g+1], scoreQuoted-n)
				break
			}
		}
	}
	if p.synonyms != nil {
		for _, re := range slotSayPatterns {
			for _, m := range re.FindAllStringIndex(f.text, -1) {
				if v, start, end, ok := f.valueAt(i, m[1], true); ok {
					f.add(i, v, start, end, scoreSaying)
				}
			}
		}
	}
	if p.wholeText {
		f.add(i, f.text, -1, -1, scoreWholeGoal)
	}
}

// requestFit is how well text can fill the required parameters of a tool
// with input schema: (1 + filled) / (1 + required), so 1 when the request
// gives every required value (or none is required) and less the more the
// user would have to be asked. A tool whose required values the request
// names is the one it is about: "the weather in Oslo" fills a location,
// not an amount, a source and a target currency.
func requestFit(schema json.RawMessage, text string) float64 {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &doc) != nil || len(doc.Required) == 0 {
		return 1
	}
	params := make([]slotParam, 0, len(doc.Required))
	for _, name := range doc.Required {
		var sp schemaProperty
		_ = json.Unmarshal(doc.Properties[name], &sp)
		params = append(params, classifySlot(name, sp, true))
	}
	filled := len(fillSlots(text, params))
	return float64(1+filled) / float64(1+len(params))
}
