package agentsmcp_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxRootLines bounds the root package's non-test Go, counted as `wc -l
// *.go` counts (newlines) over the files not ending in _test.go. What
// belongs in the root is stated in docs/architecture.md ("What the root
// holds"); behaviour, helpers and prose go elsewhere.
const maxRootLines = 2000

func TestRootStaysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
	}
	if total > maxRootLines {
		t.Errorf("the root package has %d lines of non-test Go (wc -l), more than %d: move behaviour, helpers and prose out of it (docs/architecture.md, What the root holds)", total, maxRootLines)
	}
}
