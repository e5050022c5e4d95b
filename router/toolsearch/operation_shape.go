package toolsearch

import (
	"net/http"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file decides among sibling tools, the operations of one resource
// (list the cards, get a card, update a card, delete a card), by the shape
// of the request: which action its words ask for and whether they name one
// thing or many. Words alone rank such siblings alike, since they share
// the resource's nouns.

// actionKind is what an operation does to its resource, or what a request
// asks to be done.
type actionKind uint8

const (
	actionUnknown actionKind = iota
	actionList               // read many
	actionGet                // read one
	actionCreate             // add one
	actionUpdate             // change one
	actionDelete             // remove one
)

// actionNames are the actions as why shows them.
var actionNames = [...]string{actionUnknown: "", actionList: "list", actionGet: "get", actionCreate: "create", actionUpdate: "update", actionDelete: "delete"}

// metaOperation is the _meta key under which an HTTP tool lists its
// operation, {"method", "path"} (httptools.MetaOperation, part of the
// external interface; the tool search does not import httptools).
const metaOperation = "agents-mcp/httpOperation"

// toolAction is what a tool does, from the operation an HTTP tool lists in
// its _meta, or else from the leading verb of its own name
// ("list_channels", "slack_post_message"); actionUnknown if neither says.
func toolAction(t *agentsmcp.RegisteredTool) actionKind {
	if t.Tool != nil && t.Tool.Meta != nil {
		if op, ok := t.Tool.Meta[metaOperation].(map[string]any); ok {
			method, _ := op["method"].(string)
			path, _ := op["path"].(string)
			if a := operationAction(method, path); a != actionUnknown {
				return a
			}
		}
	}
	name := ""
	if t.Tool != nil {
		name = t.Tool.Name
	}
	if i := strings.Index(name, "__"); i > 0 {
		name = name[i+2:]
	}
	for _, w := range tokenWords(name) {
		if a, ok := verbActions[w.word]; ok {
			return a
		}
	}
	return actionUnknown
}

// operationAction is what an HTTP operation does: the verb of its path's
// last segment when it has one (RPC-style APIs: POST /chat.delete), else
// its method and whether its path ends at one item (a parameter) or at a
// collection: GET of a collection lists, GET of an item or of a singular
// sub-resource (/me, /cards/{id}/board) gets one.
func operationAction(method, path string) actionKind {
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	if len(segs) == 0 {
		return actionUnknown
	}
	last := segs[len(segs)-1]
	item := strings.HasPrefix(last, "{")
	if !item {
		toks := tokenWords(last)
		for i := len(toks) - 1; i >= 0; i-- {
			if a, ok := verbActions[toks[i].word]; ok {
				return a
			}
		}
	}
	switch strings.ToUpper(method) {
	case http.MethodDelete:
		return actionDelete
	case http.MethodPut, http.MethodPatch:
		return actionUpdate
	case http.MethodPost:
		if item {
			return actionUpdate
		}
		return actionCreate
	case http.MethodGet:
		if item {
			return actionGet
		}
		if toks := tokenWords(last); len(toks) > 0 && isPlural(toks[len(toks)-1]) {
			return actionList
		}
		return actionGet
	}
	return actionUnknown
}

// verbActions are the general English verbs of the five actions, as a
// tool's name or path and a request word them.
var verbActions = func() map[string]actionKind {
	m := map[string]actionKind{}
	for kind, words := range map[actionKind]string{
		actionList:   "list browse enumerate",
		actionGet:    "get read fetch retrieve show view info lookup",
		actionCreate: "create add make new insert post send upload invite start",
		actionUpdate: "update change edit modify rename set fix correct adjust replace patch alter",
		actionDelete: "delete remove erase destroy trash drop discard purge unset",
	} {
		for _, w := range strings.Fields(words) {
			m[w] = kind
		}
	}
	return m
}()

// manyWords in a request ask for many things at once.
var manyWords = map[string]bool{"all": true, "every": true, "each": true, "list": true}

// requestAction is what a request asks for, from its words (as tokenised,
// in order): the first of them that is an action's verb; a read that
// names many things ("all", "every") lists; a request with no verb lists
// when its nouns are all plural ("my playlists"). actionUnknown when its
// words do not say.
func requestAction(toks []token) actionKind {
	verb := actionUnknown
	for _, t := range toks {
		if a, ok := verbActions[t.word]; ok {
			verb = a
			break
		}
	}
	if verb != actionUnknown && verb != actionGet && verb != actionList {
		return verb
	}
	for _, t := range toks {
		if manyWords[t.word] {
			return actionList
		}
	}
	plural, singular := false, false
	for _, t := range toks {
		if _, ok := verbActions[t.word]; ok {
			continue
		}
		if isPlural(t) {
			plural = true
		} else {
			singular = true
		}
	}
	switch {
	case verb == actionList:
		return actionList
	case verb == actionGet:
		return actionGet
	case plural && !singular:
		return actionList
	}
	return actionUnknown
}

// isPlural reports whether a word is a plural noun by its form: its stem
// drops a final "s" ("cards", "entries"), and it is not an "-ss"/"-us"/"-is"
// word.
func isPlural(t token) bool {
	w := t.word
	return len(w) > 3 && strings.HasSuffix(w, "s") && t.stem != w && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

// reshape multiplies by 1 + weight the score of each of rs whose action
// is the request's (a share, so that it means the same for a lexical
// score as for a fused one), and sorts them again (ties by name); false, leaving rs as it
// was, when the request's action is unknown or no candidate's matches.
func reshape(rs []ranked, want actionKind, weight float64, sameSource bool) bool {
	if want == actionUnknown || weight == 0 || len(rs) == 0 {
		return false
	}
	changed := false
	src := serverOf(rs[0].doc.match.Name)
	for i := range rs {
		if sameSource && serverOf(rs[i].doc.match.Name) != src {
			continue
		}
		if rs[i].doc.action == want {
			rs[i].score *= 1 + weight
			rs[i].shaped = true
			changed = true
		}
	}
	if changed {
		slices.SortFunc(rs, byScore)
	}
	return changed
}

// queryTokens are the words the user wrote of a parsed query, in order
// (not the synonyms added for them).
func queryTokens(terms []queryTerm) []token {
	var out []token
	for _, t := range terms {
		if t.from == "" {
			out = append(out, token{stem: t.term, word: t.word})
		}
	}
	return out
}

// serverOf is the server part of "server__tool" ("" for a local tool).
func serverOf(name string) string {
	if i := strings.Index(name, "__"); i > 0 {
		return name[:i]
	}
	return ""
}
