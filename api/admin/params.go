package admin

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// maxParamBytes bounds a query parameter other than q.
const maxParamBytes = 1 << 10

// params reads the query parameters of one request. Every parameter a
// route accepts is named when it is created, so an unknown one (a typo) is
// an error instead of a filter silently ignored.
type params struct {
	values url.Values
}

// queryParams checks r's query against the parameters the route accepts:
// no other parameter, none given twice.
func queryParams(r *http.Request, accepted ...string) (*params, error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, invalidf("the query string is malformed")
	}
	for name, vs := range values {
		if !slices.Contains(accepted, name) {
			if len(accepted) == 0 {
				return nil, invalidf("this route takes no query parameter, got %q", storedform.TruncateUTF8(name, 64))
			}
			return nil, invalidf("unknown query parameter %q; this route takes %s", storedform.TruncateUTF8(name, 64), strings.Join(accepted, ", "))
		}
		if len(vs) > 1 {
			return nil, invalidf("query parameter %s is given %d times", name, len(vs))
		}
		limit := maxParamBytes
		if name == "q" {
			limit = agentsmcp.MaxQueryTextBytes
		}
		if len(vs[0]) > limit {
			return nil, invalidf("query parameter %s is %d bytes; the limit is %d", name, len(vs[0]), limit)
		}
	}
	return &params{values: values}, nil
}

func (p *params) str(name string) string { return p.values.Get(name) }

func (p *params) has(name string) bool { return p.values.Has(name) }

// time reads an RFC 3339 time; zero when absent.
func (p *params) time(name string) (time.Time, error) {
	v := p.values.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, invalidf("%s %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", name, storedform.TruncateUTF8(v, 64))
	}
	return t, nil
}

// window reads since and until: until, when both are set, must be later.
func (p *params) window() (since, until time.Time, err error) {
	if since, err = p.time("since"); err != nil {
		return
	}
	if until, err = p.time("until"); err != nil {
		return
	}
	if !since.IsZero() && !until.IsZero() && !until.After(since) {
		err = invalidf("until must be later than since")
	}
	return
}

// limit reads the page size: 1 to MaxPageSize, 0 when absent (the
// default page size).
func (p *params) limit() (int, error) {
	v := p.values.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > agentsmcp.MaxPageSize {
		return 0, invalidf("limit %q is not an integer from 1 to %d", storedform.TruncateUTF8(v, 64), agentsmcp.MaxPageSize)
	}
	return n, nil
}

// fraction reads a number in [0, 1]; 0 when absent.
func (p *params) fraction(name string) (float64, error) {
	v := p.values.Get(name)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return 0, invalidf("%s %q is not a number from 0 to 1", name, storedform.TruncateUTF8(v, 64))
	}
	return f, nil
}

// oneOf reads an enumerated value; "" when absent.
func oneOf[T ~string](p *params, name string, valid []T) (T, error) {
	v := T(p.values.Get(name))
	if v != "" && !slices.Contains(valid, v) {
		return "", invalidf("%s %q is not one of %v", name, storedform.TruncateUTF8(string(v), 64), valid)
	}
	return v, nil
}

// rankCursorPrefix marks the cursors of ranked searches (with q): offsets
// into a ranking recomputed per request, unlike the stores' cursors. A
// page may then repeat or skip an item when memory changed in between;
// ranked search has no stabler order to resume from.
const rankCursorPrefix = "r"

// rankPage is the window of one ranked page.
type rankPage struct{ offset, limit int }

func rankPageOf(p *params) (rankPage, error) {
	limit, err := p.limit()
	if err != nil {
		return rankPage{}, err
	}
	pg := rankPage{limit: storedform.PageSize(limit)}
	if c := p.str("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, rankCursorPrefix))
		if !strings.HasPrefix(c, rankCursorPrefix) || err != nil || n < 1 || n >= agentsmcp.MaxPageSize {
			return rankPage{}, invalidf("cursor %q is not one that a search with q returned", storedform.TruncateUTF8(c, 64))
		}
		pg.offset = n
	}
	return pg, nil
}

// want is how many ranked results the page needs: one more than it
// shows, to know whether there is a next page. Rankings stop at
// MaxPageSize results.
func (pg rankPage) want() int { return min(pg.offset+pg.limit+1, agentsmcp.MaxPageSize) }

// writeRanked writes the page's window of the ranked results found, each
// turned into its API item by item, with the search mode.
func writeRanked[S, T any](w http.ResponseWriter, pg rankPage, found []S, mode string, item func(*S) T) {
	from, to, next := pg.cut(len(found))
	items := make([]T, 0, to-from)
	for i := from; i < to; i++ {
		items = append(items, item(&found[i]))
	}
	writeJSON(w, http.StatusOK, newPage(items, next, mode))
}

// cut returns the page's window of n ranked results and the next cursor.
func (pg rankPage) cut(n int) (from, to int, next string) {
	from, to = min(pg.offset, n), min(pg.offset+pg.limit, n)
	if to < n {
		next = rankCursorPrefix + strconv.Itoa(to)
	}
	return from, to, next
}

// pathID reads the {id} path parameter, which must look like an id with
// the given prefix; anything else cannot exist and is not sent to a store.
func pathID(r *http.Request, prefix, what string) (string, error) {
	id := chi.URLParam(r, "id")
	if !agentsmcp.IDPattern.MatchString(id) || !strings.HasPrefix(id, prefix+"_") {
		return "", notFoundf("no %s with id %q", what, storedform.TruncateUTF8(id, 64))
	}
	return id, nil
}
