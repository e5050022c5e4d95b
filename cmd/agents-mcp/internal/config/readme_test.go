package config

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMESettingsTable checks the settings table of the README against
// the "setting" lines serve logs at start-up ([Config.LogSettings], which
// logs [Config.Describe]): every logged setting has a row, and every row
// names a logged setting. Operators read the one to understand the other,
// so a setting added to either alone is a doc line that lies.
func TestREADMESettingsTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := readmeSettings(t, string(data))
	if len(documented) == 0 {
		t.Fatal("no settings table found in README.md (its header starts with \"| YAML key | flag | environment |\")")
	}
	logged := map[string]bool{}
	for _, s := range Default().Describe() {
		logged[s.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(logged)) {
		if !documented[name] {
			t.Errorf("serve logs setting %q, but the README's settings table has no row for it", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		if !logged[name] {
			t.Errorf("the README's settings table has a row for %q, but serve logs no setting of that name", name)
		}
	}
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	loggedAs   = regexp.MustCompile("logged as `([^`]+)`")
	settingRE  = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)
)

// readmeSettings returns the setting names of the README's settings table,
// as Describe names them: the YAML keys of the first column, or the name
// after "logged as" where the column says one, or for a row without a YAML
// key its flag with dashes made underscores (--conformance-fixtures is
// conformance_fixtures).
func readmeSettings(t *testing.T, readme string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	lines := strings.Split(readme, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "| YAML key | flag | environment |") {
			continue
		}
		for _, row := range lines[i+2:] { // past the header and its |---| line
			if !strings.HasPrefix(row, "|") {
				break
			}
			cells := strings.Split(row, "|")
			if len(cells) < 4 {
				t.Errorf("settings table row with fewer than three cells: %s", row)
				continue
			}
			yamlCell, flagCell := cells[1], cells[2]
			var found []string
			if m := loggedAs.FindStringSubmatch(yamlCell); m != nil {
				found = append(found, m[1])
			} else {
				for _, m := range backticked.FindAllStringSubmatch(yamlCell, -1) {
					if settingRE.MatchString(m[1]) {
						found = append(found, m[1])
					}
				}
			}
			if len(found) == 0 {
				if m := backticked.FindStringSubmatch(flagCell); m != nil && strings.HasPrefix(m[1], "--") {
					found = append(found, strings.ReplaceAll(strings.TrimPrefix(m[1], "--"), "-", "_"))
				}
			}
			if len(found) == 0 {
				t.Errorf("settings table row names no setting: %s", row)
			}
			for _, n := range found {
				names[n] = true
			}
		}
		break
	}
	return names
}
