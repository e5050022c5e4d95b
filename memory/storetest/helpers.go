package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// base is the CreatedAt of test data: fixed, so that expectations do not
// depend on the wall clock.
var base = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// at returns base plus sec seconds.
func at(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }

// wantCode fails t unless err carries the application error code want.
func wantCode(t *testing.T, err error, want, what string) {
	t.Helper()
	if got := agentsmcp.ErrorCode(err); got != want {
		t.Fatalf("%s: error code %q (%v), want %q", what, got, err, want)
	}
}

// checkTime reports whether got is want at millisecond precision, in UTC.
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Truncate(time.Millisecond).Equal(want.Truncate(time.Millisecond)) {
		t.Errorf("%s = %v, want %v (at millisecond precision)", what, got, want)
	}
	if got.Location() != time.UTC {
		t.Errorf("%s is in %v, want UTC", what, got.Location())
	}
}

// checkRecent reports whether got was assigned between before and after.
func checkRecent(t *testing.T, what string, got, before, after time.Time) {
	t.Helper()
	if got.Before(before.Truncate(time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
		t.Errorf("%s = %v, want the time of the call, in [%v, %v]", what, got, before, after)
	}
}

// checkID reports whether id is a well-formed id with the given prefix.
func checkID(t *testing.T, what, id, prefix string) {
	t.Helper()
	if !agentsmcp.IDPattern.MatchString(id) || !strings.HasPrefix(id, prefix+"_") {
		t.Errorf("%s = %q, want an id matching %v with prefix %q", what, id, agentsmcp.IDPattern, prefix+"_")
	}
}

// orEmpty makes nil and empty lists compare equal: stores may return either.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// finder is a Find* method with its filter fixed except for the page.
type finder[T any] func(ctx context.Context, cursor string, limit int) ([]T, string, error)

// pageAll pages through find with limit and returns the ids it visits, in
// order. It fails t when a page is larger than the limit, a page that
// returns a cursor is not full, an item comes twice, or the cursor never
// ends. Only the last page may be empty.
func pageAll[T any](t *testing.T, find finder[T], limit int, idOf func(T) string) []string {
	t.Helper()
	size := limit
	if size <= 0 {
		size = agentsmcp.DefaultPageSize
	} else if size > agentsmcp.MaxPageSize {
		size = agentsmcp.MaxPageSize
	}
	var ids []string
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatalf("limit %d: more than 100 pages, the cursor never ends", limit)
		}
		items, next, err := find(t.Context(), cursor, limit)
		if err != nil {
			t.Fatalf("limit %d, page %d: %v", limit, page, err)
		}
		if len(items) > size {
			t.Fatalf("limit %d, page %d: %d items, want at most %d", limit, page, len(items), size)
		}
		for _, it := range items {
			id := idOf(it)
			if seen[id] {
				t.Fatalf("limit %d, page %d: %s returned twice", limit, page, id)
			}
			seen[id] = true
			ids = append(ids, id)
		}
		if next == "" {
			return ids
		}
		if len(items) < size {
			t.Fatalf("limit %d, page %d: %d items and a cursor; a page with a cursor must be full (%d)", limit, page, len(items), size)
		}
		if next == cursor {
			t.Fatalf("limit %d, page %d: the cursor did not advance", limit, page)
		}
		cursor = next
	}
}

// pageLimits are the limits every pagination test pages with; 0 means the
// default page size.
var pageLimits = []int{1, 2, 3, 0, agentsmcp.MaxPageSize + 1000}

// badCursors are cursors no store can have issued.
var badCursors = []string{"!", "not a cursor", "bm90LWEtY3Vyc29y", "AAAA", "%%%", "{}"}

// textCorpus is stored by the text-filter tests of every aggregate, one
// text per item; textCases are the filters and the corpus indexes each must
// find. The expectations hold for any store that matches whole words
// case-insensitively; none of them depends on whether a filter word also
// matches as a prefix or substring. The metacharacter cases catch stores
// that pass user text to a regex, LIKE, glob, FTS query or Mongo operator.
var textCorpus = []string{
	"alpha beta gamma",                // 0
	"x marks the spot",                // 1
	"why not y",                       // 2
	"mongo $where clause",             // 3
	`she said "quoted words"`,         // 4
	"a*b literal",                     // 5
	"axxb aXb ab",                     // 6: what a*b matches as a regex or glob
	"choose (x OR y) carefully",       // 7
	`operator {"$gt":""} injection`,   // 8
	"Delta EPSILON",                   // 9
	"percent % and underscore _ here", // 10
}

var textCases = []struct {
	text string
	want []int
}{
	{"alpha", []int{0}},
	{"ALPHA gamma", []int{0}}, // case-insensitive; words need not be adjacent
	{"gamma alpha", []int{0}}, // nor in order
	{"alpha delta", nil},      // every word must occur
	{"delta epsilon", []int{9}},
	{"nomatch", nil},
	{"a*b", []int{5}},
	{`"quoted`, []int{4}},
	{"(x OR y)", []int{7}},
	{".*", nil},
	{"%_", nil},
	{`\`, nil},
	{"*", nil},
	{`"`, nil},
	{"$where", []int{3}},
	{`{"$gt":""}`, []int{8}},
	{"NEAR(alpha beta)", nil},
	{"alpha OR nomatch", nil},
}

// checkTextCases runs textCases through find, which returns the corpus
// texts a filter text selects; ordered says whether find returns them
// newest first (corpus item i is newer than i-1) or in an order the test
// cannot predict.
func checkTextCases(t *testing.T, ordered bool, find func(text string) ([]string, error)) {
	t.Helper()
	for _, tc := range textCases {
		got, err := find(tc.text)
		if err != nil {
			t.Errorf("text %q: %v", tc.text, err)
			continue
		}
		var want []string
		for i := len(tc.want) - 1; i >= 0; i-- {
			want = append(want, textCorpus[tc.want[i]])
		}
		if !ordered {
			slices.Sort(got)
			slices.Sort(want)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Errorf("text %q found %q, want %q", tc.text, got, want)
		}
	}
}

// checkRaw compares JSON byte for byte: stores keep it verbatim. Nil and
// empty are alike.
func checkRaw(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s = %q, want %q (verbatim)", what, got, want)
	}
}

// checkTimeOrZero is checkTime, except that a zero want needs a zero got.
func checkTimeOrZero(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if want.IsZero() {
		if !got.IsZero() {
			t.Errorf("%s = %v, want the zero time", what, got)
		}
		return
	}
	checkTime(t, what, got, want)
}

// sameJSON compares the JSON forms of got and want, for the fields that
// checkRaw and checkTime do not cover.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}
