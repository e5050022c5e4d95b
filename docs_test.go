package agentsmcp_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines bounds the README: it says what agents-mcp is, how to start,
// a first session and how to connect a client, and links to the rest.
const readmeMaxLines = 250

// readmeLinks are the pages, by audience, that the README must link to, so
// that each section moved out of it stays one click away.
var readmeLinks = []string{
	"docs/configuration.md#settings",
	"docs/configuration.md#upstream-mcp-servers",
	"docs/configuration.md#http-apis-as-tools",
	"docs/operations.md#security-defaults",
	"docs/operations.md#deployment",
	"docs/clients.md#endpoints",
	"docs/clients.md#json-rpc-errors",
	"docs/contributing.md",
	"docs/architecture.md",
}

// TestREADMEIsShortAndLinksToTheDocs holds the README to its length and to a
// link to each page a reader looks for.
func TestREADMEIsShortAndLinksToTheDocs(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page under docs/ and link it", n, readmeMaxLines)
	}
	for _, link := range readmeLinks {
		if !strings.Contains(string(data), "]("+link+")") {
			t.Errorf("README.md does not link to %s", link)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve checks every relative link of every Markdown file of
// the repository: the file it names exists, and the #anchor, if any, is a
// heading of that file (as GitHub makes anchors of headings). A section
// that moves or is renamed then takes its links with it.
func TestDocLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := headingAnchors(t, path)
		anchors[path] = a
		return a
	}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "data", "bin", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, fragment, _ := strings.Cut(link, "#")
			file := path
			if target != "" {
				file = filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
			}
			checked++
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s: link %s: no file %s", path, link, file)
				continue
			}
			if fragment != "" && strings.HasSuffix(file, ".md") && !anchorsOf(file)[fragment] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", path, link, file, fragment)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no relative link found in any Markdown file: the walk did not read the docs")
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, punctuation but - and _ dropped, spaces made
// dashes, and -1, -2, … after a repeated one. Lines in fenced code blocks
// are not headings.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return anchors
}
