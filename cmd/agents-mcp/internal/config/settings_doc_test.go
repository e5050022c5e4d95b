package config

import (
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// settingsDoc is the operators' page that holds the settings table, relative
// to this package's directory.
var settingsDoc = filepath.Join("..", "..", "..", "..", "docs", "configuration.md")

// TestSettingsDocMatchesCode checks the settings table of docs/configuration.md
// against the code, so that neither can change without the other:
//
//   - every setting serve logs at start-up ([Config.LogSettings], which logs
//     [Config.Describe]) has a row, and every row names a logged setting;
//   - the environment variables of the table are exactly those the loader
//     reads, and each one sets the setting of its row (its source becomes
//     env:NAME);
//   - the flags of the table are exactly those serve and stdio accept, and
//     each one sets the setting of its row;
//   - a default written as a value (`15s`, `50`, none, empty) is the value
//     of [Default].
//
// Operators read the table to understand the "setting" lines, so a setting
// added to either alone is a doc line that lies.
func TestSettingsDocMatchesCode(t *testing.T) {
	data, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := settingsTable(t, string(data))
	if len(rows) == 0 {
		t.Fatalf("no settings table found in %s (its header starts with %q)", settingsDoc, tableHeader)
	}

	// Names: the table against Describe.
	documented := map[string]bool{}
	for _, r := range rows {
		for _, n := range r.settings {
			documented[n] = true
		}
	}
	defaults := map[string]string{}
	for _, s := range Default().Describe() {
		defaults[s.Name] = s.Value
	}
	for _, name := range slices.Sorted(maps.Keys(defaults)) {
		if !documented[name] {
			t.Errorf("serve logs setting %q, but the settings table has no row for it", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := defaults[name]; !ok {
			t.Errorf("the settings table has a row for %q, but serve logs no setting of that name", name)
		}
	}

	// Environment variables: the table against what the loader reads.
	read := map[string]bool{}
	_, _ = load(nil, func(name string) string { read[name] = true; return "" }, io.Discard)
	documentedEnv := map[string]bool{}
	for _, r := range rows {
		for _, e := range r.envs {
			documentedEnv[e] = true
		}
	}
	for _, e := range slices.Sorted(maps.Keys(read)) {
		if !documentedEnv[e] {
			t.Errorf("the loader reads environment variable %s, but the settings table does not list it", e)
		}
	}
	for _, e := range slices.Sorted(maps.Keys(documentedEnv)) {
		if !read[e] {
			t.Errorf("the settings table lists environment variable %s, but the loader never reads it", e)
		}
	}

	// Flags: the table against the flag set.
	fs, _ := newFlagSet(io.Discard)
	flags := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) { flags["--"+f.Name] = f })
	documentedFlags := map[string]bool{}
	for _, r := range rows {
		for _, f := range r.flags {
			documentedFlags[f] = true
		}
	}
	for _, f := range slices.Sorted(maps.Keys(flags)) {
		if !documentedFlags[f] {
			t.Errorf("serve accepts flag %s, but the settings table does not list it", f)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(documentedFlags)) {
		if flags[f] == nil {
			t.Errorf("the settings table lists flag %s, but serve does not accept it", f)
		}
	}

	// Each row: its variables and flags set its settings, and its defaults hold.
	for _, r := range rows {
		if len(r.envs) > 0 {
			if len(r.envs) != len(r.settings) {
				t.Errorf("row names %d settings and %d environment variables; pair them one to one: %s", len(r.settings), len(r.envs), r.line)
			} else {
				for i, e := range r.envs {
					if !envSets(t, e, r.settings[i]) {
						t.Errorf("the settings table says %s sets %s, but no value of it does: %s", e, r.settings[i], r.line)
					}
				}
			}
		}
		for _, f := range r.flags {
			if len(r.settings) != 1 {
				t.Errorf("a row with a flag names one setting: %s", r.line)
			} else if fl := flags[f]; fl != nil && !flagSets(t, fl, r.settings[0]) {
				t.Errorf("the settings table says %s sets %s, but no value of it does: %s", f, r.settings[0], r.line)
			}
		}
		want, checkable := r.defaultValues()
		if !checkable {
			continue
		}
		if len(want) == 1 && len(r.settings) > 1 && want[0] == "" {
			want = slices.Repeat(want, len(r.settings))
		}
		if len(want) != len(r.settings) {
			t.Errorf("row names %d settings and %d defaults: %s", len(r.settings), len(want), r.line)
			continue
		}
		for i, name := range r.settings {
			if got, ok := defaults[name]; ok && !sameValue(got, want[i]) {
				t.Errorf("the settings table gives %s the default %q, but the code's default is %q", name, want[i], got)
			}
		}
	}
}

// candidateValues are tried in turn for an environment variable or a flag
// until one is accepted: the loader records a source only for a value it
// could parse.
var candidateValues = []string{"x", "1", "true", "10s", "2m", "http://127.0.0.1:1", "127.0.0.1:1", "a,b", "info", "db"}

// envSets reports whether some value of the environment variable env makes
// the loader record it as the source of setting.
func envSets(t *testing.T, env, setting string) bool {
	t.Helper()
	want := envSource(env)
	for _, v := range candidateValues {
		getenv := func(name string) string {
			if name == env {
				return v
			}
			return ""
		}
		if env == "AGENTS_MCP_CONFIG" { // read before the file, by load itself
			v = emptyConfigFile(t)
			c, err := load(nil, getenv, io.Discard)
			return err == nil && c.Source(setting) == want
		}
		l := &loader{cfg: Default(), getenv: getenv}
		l.applyEnv()
		if l.cfg.Source(setting) == want {
			return true
		}
	}
	return false
}

// flagSets reports whether some value of the flag makes load record it as the
// source of setting.
func flagSets(t *testing.T, f *flag.Flag, setting string) bool {
	t.Helper()
	values := candidateValues
	if f.Name == "config" {
		values = []string{emptyConfigFile(t)}
	}
	for _, v := range values {
		args := []string{"--" + f.Name + "=" + v}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			args = []string{"--" + f.Name}
		}
		c, err := load(args, func(string) string { return "" }, io.Discard)
		if err == nil && c.Source(setting) == flagSource(f.Name) {
			return true
		}
	}
	return false
}

func emptyConfigFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameValue compares a documented default with the logged one; durations are
// compared as durations (`720h` is logged as 720h0m0s, `0` as 0s).
func sameValue(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := time.ParseDuration(got)
	w, err2 := time.ParseDuration(want)
	if want == "0" {
		w, err2 = 0, nil
	}
	return err1 == nil && err2 == nil && g == w
}

const tableHeader = "| YAML key | flag | environment | default |"

type settingsRow struct {
	line                  string
	settings, flags, envs []string
	defaultCell           string
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	loggedAs   = regexp.MustCompile("logged as `([^`]+)`")
	settingRE  = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)
	envRE      = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	// valueList is a default cell that states values: `a`, `b (note)`, each
	// optionally followed by a parenthesis.
	valueList = regexp.MustCompile("^`[^`]*`( \\([^)]*\\))?(, `[^`]*`( \\([^)]*\\))?)*$")
)

// defaultValues returns the defaults a row states as values, in the order of
// its settings, and false for a default described in words (derived from
// another setting, such as "the issuer" or "per embedder: …").
func (r settingsRow) defaultValues() ([]string, bool) {
	cell := strings.TrimSpace(r.defaultCell)
	if strings.HasPrefix(cell, "none") || strings.HasPrefix(cell, "empty") {
		return []string{""}, true
	}
	if !valueList.MatchString(cell) || strings.Contains(cell, "<") {
		return nil, false
	}
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out, true
}

// settingsTable parses the settings table: the setting names as Describe
// names them (the YAML keys of the first column, or the name after "logged
// as" where the column says one, or for a row without a YAML key its flag
// with dashes made underscores: --conformance-fixtures is
// conformance_fixtures), its flags, environment variables and default cell.
func settingsTable(t *testing.T, doc string) []settingsRow {
	t.Helper()
	var rows []settingsRow
	lines := strings.Split(doc, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, tableHeader) {
			continue
		}
		for _, row := range lines[i+2:] { // past the header and its |---| line
			if !strings.HasPrefix(row, "|") {
				break
			}
			cells := strings.Split(row, "|")
			if len(cells) < 6 {
				t.Errorf("settings table row with fewer than five cells: %s", row)
				continue
			}
			r := settingsRow{line: row, defaultCell: cells[4]}
			yamlCell, flagCell, envCell := cells[1], cells[2], cells[3]
			for _, m := range backticked.FindAllStringSubmatch(flagCell, -1) {
				if strings.HasPrefix(m[1], "--") {
					r.flags = append(r.flags, m[1])
				}
			}
			for _, m := range backticked.FindAllStringSubmatch(envCell, -1) {
				if envRE.MatchString(m[1]) {
					r.envs = append(r.envs, m[1])
				}
			}
			if m := loggedAs.FindStringSubmatch(yamlCell); m != nil {
				r.settings = append(r.settings, m[1])
			} else {
				for _, m := range backticked.FindAllStringSubmatch(yamlCell, -1) {
					if settingRE.MatchString(m[1]) {
						r.settings = append(r.settings, m[1])
					}
				}
			}
			if len(r.settings) == 0 && len(r.flags) > 0 {
				r.settings = append(r.settings, strings.ReplaceAll(strings.TrimPrefix(r.flags[0], "--"), "-", "_"))
			}
			if len(r.settings) == 0 {
				t.Errorf("settings table row names no setting: %s", row)
			}
			rows = append(rows, r)
		}
		break
	}
	return rows
}
