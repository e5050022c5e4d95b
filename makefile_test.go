package agentsmcp_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakefileFuzzTargetsExist checks that each fuzz target make fuzz runs
// is defined in the package the Makefile names: go test -fuzz on a package
// without that target only warns and exits 0, so a target whose package
// moved would silently stop being fuzzed.
func TestMakefileFuzzTargetsExist(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`-fuzz '\^(\w+)\$\$' .* (\./\S*)`)
	found := 0
	for _, m := range line.FindAllStringSubmatch(string(makefile), -1) {
		found++
		target, dir := m[1], m[2]
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		defined := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), "func "+target+"(") {
				defined = true
				break
			}
		}
		if !defined {
			t.Errorf("make fuzz runs %s in %s, which does not define it", target, dir)
		}
	}
	if found < 8 {
		t.Errorf("found %d fuzz targets in the Makefile; want at least 8 (has the line format changed?)", found)
	}
}
