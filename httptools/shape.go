package httptools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shape reshapes an answer before it is returned, in this order: Table
// turns a text answer into rows, Select picks a part of the JSON, Pluck
// takes one field of each element of the (selected) array, and Unique
// drops repeated values, keeping the first of each.
//
// Paths (Select and Pluck) are a small, documented subset of JSONPath:
// names separated by dots ("data.items"), array indexes ("items[0]",
// negative from the end), and "*" or "[*]" for every element of an array
// (or every value of an object), so that "items[*].id" lists the ids. A
// leading "$" or "$." is allowed and ignored. A name that is not present
// selects nothing (null).
type Shape struct {
	Select string `yaml:"select" json:"select,omitempty"`
	Pluck  string `yaml:"pluck" json:"pluck,omitempty"`
	Unique bool   `yaml:"unique" json:"unique,omitempty"`
	// Table turns a text answer (an aligned table, CSV, a "|" table) into
	// rows: objects keyed by the header row, or arrays with NoHeader.
	Table *Table `yaml:"table" json:"table,omitempty"`
}

// Table says how a text table is split.
type Table struct {
	// Separator splits a row into cells; empty splits on runs of
	// spaces and tabs.
	Separator string `yaml:"separator" json:"separator,omitempty"`
	// NoHeader keeps every row as an array of cells; otherwise the first
	// row names the cells of the others.
	NoHeader bool `yaml:"no_header" json:"no_header,omitempty"`
}

func (s *Shape) problems() []Problem {
	var out []Problem
	if _, err := parsePath(s.Select); err != nil {
		out = append(out, Problem{Field: "select", Message: err.Error()})
	}
	if _, err := parsePath(s.Pluck); err != nil {
		out = append(out, Problem{Field: "pluck", Message: err.Error()})
	}
	return out
}

// step is one step of a path: a name, an index, or every element.
type step struct {
	name  string
	index int
	kind  int // stepName, stepIndex, stepAll
}

const (
	stepName = iota
	stepIndex
	stepAll
)

func parsePath(p string) ([]step, error) {
	p = strings.TrimSpace(p)
	p = strings.TrimPrefix(p, "$")
	p = strings.TrimPrefix(p, ".")
	if p == "" {
		return nil, nil
	}
	var out []step
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name == "" && rest == "" {
			return nil, fmt.Errorf("path %q has an empty step", p)
		}
		if name == "*" {
			out = append(out, step{kind: stepAll})
		} else if name != "" {
			out = append(out, step{kind: stepName, name: name})
		}
		if rest == "" && !strings.Contains(part, "[") {
			continue
		}
		for _, idx := range strings.Split("["+rest, "[")[1:] {
			inner, ok := strings.CutSuffix(idx, "]")
			if !ok {
				return nil, fmt.Errorf("path %q: unclosed [", p)
			}
			if inner == "*" {
				out = append(out, step{kind: stepAll})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil {
				return nil, fmt.Errorf("path %q: [%s] is not an index or *", p, inner)
			}
			out = append(out, step{kind: stepIndex, index: n})
		}
	}
	return out, nil
}

// selectPath applies a parsed path to a decoded JSON value. After a "*"
// step the rest applies to each element and the result is the array of
// results (missing ones left out).
func selectPath(v any, steps []step) any {
	for i, s := range steps {
		switch s.kind {
		case stepName:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[s.name]
		case stepIndex:
			l, ok := v.([]any)
			if !ok {
				return nil
			}
			n := s.index
			if n < 0 {
				n += len(l)
			}
			if n < 0 || n >= len(l) {
				return nil
			}
			v = l[n]
		case stepAll:
			var elems []any
			switch x := v.(type) {
			case []any:
				elems = x
			case map[string]any:
				for _, k := range sortedKeys(x) {
					elems = append(elems, x[k])
				}
			default:
				return nil
			}
			out := make([]any, 0, len(elems))
			for _, e := range elems {
				if r := selectPath(e, steps[i+1:]); r != nil {
					out = append(out, r)
				}
			}
			return out
		}
	}
	return v
}

// apply shapes a decoded JSON answer. Paths were checked when the source
// was loaded.
func (s *Shape) apply(v any) any {
	if s == nil {
		return v
	}
	if steps, _ := parsePath(s.Select); len(steps) > 0 {
		v = selectPath(v, steps)
	}
	if steps, _ := parsePath(s.Pluck); len(steps) > 0 {
		if l, ok := v.([]any); ok {
			out := make([]any, 0, len(l))
			for _, e := range l {
				if r := selectPath(e, steps); r != nil {
					out = append(out, r)
				}
			}
			v = out
		} else {
			v = selectPath(v, steps)
		}
	}
	if s.Unique {
		if l, ok := v.([]any); ok {
			v = unique(l)
		}
	}
	return v
}

// unique keeps the first of equal values (compared as JSON).
func unique(l []any) []any {
	seen := map[string]bool{}
	out := make([]any, 0, len(l))
	for _, e := range l {
		b, _ := json.Marshal(e)
		if seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		out = append(out, e)
	}
	return out
}

// rows splits a text table into rows. Blank lines and rule lines (made of
// -, =, +, | and spaces only) are skipped; with "|" as separator, the
// empty cells the outer bars leave are dropped.
func (t *Table) rows(text string) any {
	var table [][]string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.Trim(trimmed, "-=+| \t") == "" {
			continue
		}
		var cells []string
		if t.Separator == "" {
			cells = strings.Fields(trimmed)
		} else {
			if t.Separator == "|" {
				trimmed = strings.TrimSuffix(strings.TrimPrefix(trimmed, "|"), "|")
			}
			cells = strings.Split(trimmed, t.Separator)
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
		}
		table = append(table, cells)
	}
	out := make([]any, 0, len(table))
	if t.NoHeader || len(table) == 0 {
		for _, r := range table {
			row := make([]any, len(r))
			for i, c := range r {
				row[i] = c
			}
			out = append(out, row)
		}
		return out
	}
	header := table[0]
	for _, r := range table[1:] {
		row := make(map[string]any, len(header))
		for i, h := range header {
			if i < len(r) {
				row[h] = r[i]
			} else {
				row[h] = ""
			}
		}
		// Extra cells (a last column with spaces in it, split on
		// whitespace) join the last column.
		if len(r) > len(header) && len(header) > 0 {
			sep := t.Separator
			if sep == "" {
				sep = " "
			}
			last := header[len(header)-1]
			row[last] = strings.Join(r[len(header)-1:], sep)
		}
		out = append(out, row)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}
