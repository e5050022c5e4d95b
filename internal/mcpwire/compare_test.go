package mcpwire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRevisionsComparedOnlyHere reads every non-test Go file of the module
// and fails on each comparison of an MCP revision outside this package: a
// date literal ("2025-06-18"), [ProtocolSessionless] or go-sdk's
// LatestProtocolVersion compared with ==, !=, <, <=, > or >=, named in a
// switch case, or handed to strings.Compare or cmp.Compare/Less. What a
// revision allows is read through [Revision] and [Capabilities] instead,
// so that the protocol facts have one home.
func TestRevisionsComparedOnlyHere(t *testing.T) {
	root := moduleRoot(t)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", "vendor", ".git":
				return filepath.SkipDir
			}
			if path == here {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, at := range revisionComparisons(t, rel, src) {
			t.Errorf("%s compares an MCP revision: read it through mcpwire.Revision or mcpwire.Capabilities", at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s: the walk did not see the module", files, root)
	}
}

// TestRevisionComparisonsFound checks the scan itself on sources that
// compare revisions, and on some that only name one.
func TestRevisionComparisonsFound(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want int
	}{
		{`v == "2025-06-18"`, 1},
		{`v < "2025-06-18"`, 1},
		{`"2026-07-28" <= v`, 1},
		{`v >= mcpwire.ProtocolSessionless`, 1},
		{`v != ProtocolSessionless`, 1},
		{`v == mcp.LatestProtocolVersion`, 1},
		{`mcpwire.Revision(v) < mcpwire.Revision(w)`, 1},
		{`strings.Compare(v, "2025-11-25")`, 1},
		{`cmp.Compare(v, mcpwire.ProtocolSessionless)`, 1},
		{`func() { switch v { case "2025-03-26": } }`, 1},
		// Naming a revision is not comparing it.
		{`f("2025-11-25")`, 0},
		{`"version " + mcpwire.ProtocolSessionless`, 0},
		{`mcpwire.Revision(v).Sessionless()`, 0},
		{`v == ""`, 0},
		{`month == "2026-11"`, 0},
		{`layout != "2006-01-02"`, 0},
	} {
		src := "package p\nvar _ = " + tt.src + "\n"
		if got := revisionComparisons(t, "p.go", []byte(src)); len(got) != tt.want {
			t.Errorf("%s: found %v, want %d", tt.src, got, tt.want)
		}
	}
}

// revisionDate is a revision written as a Go string literal: a date from
// 2024 on, the first revision's year (Go's layout date 2006-01-02 is not
// one).
var revisionDate = regexp.MustCompile("^[\"`]20(2[4-9]|[3-9]\\d)-\\d{2}-\\d{2}[\"`]$")

// revisionComparisons returns the positions of the comparisons of
// revisions in the Go source src.
func revisionComparisons(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var found []string
	report := func(n ast.Node) { found = append(found, fset.Position(n.Pos()).String()) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			switch n.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				if isRevision(n.X) || isRevision(n.Y) {
					report(n)
				}
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if isRevision(e) {
					report(e)
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok &&
					(pkg.Name == "strings" && sel.Sel.Name == "Compare" || pkg.Name == "cmp" && (sel.Sel.Name == "Compare" || sel.Sel.Name == "Less")) {
					for _, a := range n.Args {
						if isRevision(a) {
							report(n)
							break
						}
					}
				}
			}
		}
		return true
	})
	return found
}

// isRevision reports whether e is a revision: a date literal, one of the
// constants that name a revision, or a conversion to mcpwire.Revision.
func isRevision(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING && revisionDate.MatchString(e.Value)
	case *ast.Ident:
		return e.Name == "ProtocolSessionless" || e.Name == "LatestProtocolVersion"
	case *ast.SelectorExpr:
		return e.Sel.Name == "ProtocolSessionless" || e.Sel.Name == "LatestProtocolVersion"
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Revision" && len(e.Args) == 1
	case *ast.ParenExpr:
		return isRevision(e.X)
	}
	return false
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
