// Command semanticmodel builds the offline semantic model of the
// "semantic" embedder (memory/embed) from data that Debian packages ship:
// WordNet 3.0 (wordnet-base), the package descriptions apt knows, and the
// doc comments of the Go standard library. build.sh runs it; see
// memory/embed/semantic/README.md for the steps and versions.
//
//	semanticmodel corpus -wordnet DIR [-prose] -out corpus.txt
//	semanticmodel pack -wordnet DIR -corpus corpus.txt -vectors vectors.vec -out model.bin
//	semanticmodel knowledge -wordnet DIR -base model.bin -data DIR -out model.bin
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: semanticmodel corpus|pack|knowledge [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	wnDir := fs.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
	out := fs.String("out", "", "output file")
	corpus := fs.String("corpus", "corpus.txt", "training corpus (pack: for word frequencies)")
	vectors := fs.String("vectors", "vectors.vec", "word vectors in fastText .vec text format")
	goroot := fs.String("goroot", runtime.GOROOT(), "Go tree whose doc comments join the corpus")
	base := fs.String("base", "", "knowledge: the packed model to add knowledge to")
	data := fs.String("data", "", "knowledge: directory of the unpacked npm packages")
	prose := fs.Bool("prose", false, "corpus: add manual pages, AppStream descriptions and Python docstrings")
	manDir := fs.String("man", "/usr/share/man", "corpus: manual pages directory (with -prose)")
	aptLists := fs.String("aptlists", "/var/lib/apt/lists", "corpus: apt lists directory, for AppStream (with -prose)")
	_ = fs.Parse(os.Args[2:])
	wn, err := loadWordNet(*wnDir)
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "corpus":
		err = writeCorpus(*out, wn, *goroot, *prose, *manDir, *aptLists)
	case "pack":
		err = pack(wn, *corpus, *vectors, *out)
	case "knowledge":
		err = knowledge(wn, *base, *data, *out)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "semanticmodel:", err)
	os.Exit(1)
}
