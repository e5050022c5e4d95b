package httptools

import (
	"encoding/json"
	"testing"
)

// FuzzShape feeds paths and JSON answers to the shaping steps: a path
// either fails to parse (a config error) or applies without panicking, and
// what it selects encodes as JSON.
func FuzzShape(f *testing.F) {
	for _, seed := range []struct{ sel, pluck, body string }{
		{"data.items", "tag", `{"data":{"items":[{"tag":"x"},{"tag":"y"}]}}`},
		{"$.a[0][1]", "", `{"a":[[1,2],[3]]}`},
		{"a[*].b[-1]", "c", `{"a":[{"b":[1,{"c":2}]}]}`},
		{"*", "[*]", `{"x":[1],"y":[2]}`},
		{"a[", "", `{}`},
		{"..", "", `[]`},
	} {
		f.Add(seed.sel, seed.pluck, seed.body, true)
	}
	f.Fuzz(func(t *testing.T, sel, pluck, body string, uniq bool) {
		s := &Shape{Select: sel, Pluck: pluck, Unique: uniq}
		if len(s.problems()) > 0 {
			return
		}
		var v any
		if json.Unmarshal([]byte(body), &v) != nil {
			return
		}
		if _, err := json.Marshal(s.apply(v)); err != nil {
			t.Fatalf("shaped %q with %q/%q: %v", body, sel, pluck, err)
		}
	})
}

func TestTableRows(t *testing.T) {
	for _, tc := range []struct {
		table Table
		text  string
		want  string
	}{
		{Table{}, "name  age city\nann   3   New York\n\nbob   4   Paris\n", `[{"age":"3","city":"New York","name":"ann"},{"age":"4","city":"Paris","name":"bob"}]`},
		{Table{Separator: ","}, "a,b\n1,2\n3\n", `[{"a":"1","b":"2"},{"a":"3","b":""}]`},
		{Table{Separator: "|"}, "+---+---+\n| a | b |\n+---+---+\n| 1 | 2 |\n", `[{"a":"1","b":"2"}]`},
		{Table{NoHeader: true}, "x y\nz\n", `[["x","y"],["z"]]`},
		{Table{}, "\n\n", `[]`},
	} {
		got, _ := json.Marshal(tc.table.rows(tc.text))
		if string(got) != tc.want {
			t.Errorf("rows(%q, %+v) = %s, want %s", tc.text, tc.table, got, tc.want)
		}
	}
}
