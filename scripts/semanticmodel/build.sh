#!/usr/bin/env bash
# Builds memory/embed/semantic/model.bin, the model of the offline
# "semantic" embedder, from data that Debian packages ship. Not run by
# make test: run it by hand (it takes about an hour on 2 busy cores, most of
# it fastText) and commit the model with SemanticModelVersion bumped (the
# test TestSemanticModelVersion prints the value).
#
#   scripts/semanticmodel/build.sh [WORKDIR]
#
# Needs: apt-get install -y wordnet-base fasttext (Debian bookworm:
# wordnet-base 1:3.0-37, fasttext 0.9.2+ds-1+b1), apt lists (apt-get
# update) for the package descriptions, and Go. fastText runs on one thread
# with a fixed seed, so the same inputs give the same model.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cd "$root"
for pkg in wordnet-base fasttext; do
  dpkg-query -W -f='${Package} ${Version}\n' "$pkg" || { echo "install $pkg: apt-get install -y $pkg" >&2; exit 1; }
done
go run ./scripts/semanticmodel corpus -wordnet /usr/share/wordnet -out "$work/corpus.txt"
sha256sum "$work/corpus.txt"
fasttext skipgram -input "$work/corpus.txt" -output "$work/vectors" \
  -dim 100 -epoch 5 -minCount 3 -maxn 0 -thread 1 -seed 1 -verbose 1
go run ./scripts/semanticmodel pack -wordnet /usr/share/wordnet -corpus "$work/corpus.txt" \
  -vectors "$work/vectors.vec" -out memory/embed/semantic/model.bin
ls -l memory/embed/semantic/model.bin
sha256sum memory/embed/semantic/model.bin
