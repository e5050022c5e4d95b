package sqlite

import (
	"encoding/json"
	"fmt"
	"strings"
)

// listQuery builds the SELECT of one page of a Find* method. The rows come
// from a driving table (the aggregate's table, or a side table keyed by
// (value, created_at, id) when a list filter is set) whose sort key the
// page is ordered and resumed by, so that SQLite reads a page straight off
// an index, newest first, without sorting.
type listQuery struct {
	columns string   // selected columns of the aggregate
	from    string   // FROM clause
	keyN    string   // the numeric sort column of the driving table
	keyID   string   // the id sort column of the driving table
	where   []string // conditions, ANDed
	args    []any
}

func (q *listQuery) and(cond string, args ...any) {
	q.where = append(q.where, cond)
	q.args = append(q.args, args...)
}

// after resumes the list after the item of c: sort keys strictly lower, as
// the order is descending. The row value comparison uses the index.
func (q *listQuery) after(c cursor) {
	q.and(fmt.Sprintf("(%s, %s) < (?, ?)", q.keyN, q.keyID), c.n, c.id)
}

// sql returns the statement and its arguments for a page of limit rows.
func (q *listQuery) sql(limit int) (string, []any) {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s", q.columns, q.from)
	if len(q.where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(q.where, " AND "))
	}
	fmt.Fprintf(&b, " ORDER BY %s DESC, %s DESC LIMIT ?", q.keyN, q.keyID)
	return b.String(), append(q.args[:len(q.args):len(q.args)], limit)
}

// encodeList is the stored form of a list field: a JSON array, never null.
func encodeList(list []string) string {
	if len(list) == 0 {
		return "[]"
	}
	b, err := json.Marshal(list)
	if err != nil {
		panic(err) // a []string always marshals
	}
	return string(b)
}

// decodeList reads a list field; an empty list is a non-nil empty slice,
// which JSON callers see as [] rather than null.
func decodeList(s string) ([]string, error) {
	list := []string{}
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, fmt.Errorf("decode list %.40q: %w", s, err)
	}
	return list, nil
}
