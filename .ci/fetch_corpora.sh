#!/usr/bin/env bash
# Fetch the real corpora that data/seeds/real_corpora.jsonl is written on: pinned, read-only
# snapshots in the corpora directory (data/corpora/, or CODESEARCH_CORPORA), made by
# `codesearch corpus add`. Fetched, never committed (.gitignore); the tests that need them are
# skipped until this has run, and nothing downloads at test time.
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
)

source_of() {  # the source recorded in a corpus's manifest, empty when there is none
  uv run --quiet codesearch corpus list --json | python3 -c '
import json, sys
name = sys.argv[1]
print(next((c.get("source") or "" for c in json.load(sys.stdin) if c["name"] == name), ""))
' "$1"
}

if ! command -v npm >/dev/null 2>&1; then
  echo "npm is missing (npm pack fetches npm packages): installing it"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

for entry in "${CORPORA[@]}"; do
  read -r name source <<<"$entry"
  if uv run --quiet codesearch corpus check "$name" >/dev/null 2>&1 \
    && [ "$(source_of "$name")" = "$source" ]; then
    echo "$name: fetched already ($source), unchanged"
    continue
  fi
  echo "$name: fetching $source"
  uv run --quiet codesearch corpus add "$name" --from "$source" --replace
done
