#!/usr/bin/env bash
# Fetch (or reuse) LLaMA-Factory's wheel, for the test that reads the sharegpt export with
# LLaMA-Factory's own code (tests/export/test_targets.py, tests/llamafactory_support.py).
#
#   bash .ci/llamafactory_wheel.sh
#   CODESEARCH_LLAMAFACTORY_WHEEL=/some/llamafactory.whl uv run pytest tests/export
#
# Only the wheel, no dependencies, and nothing is installed: the test imports the modules that
# read a dataset (its dataset_info.json parser, the ShareGPT converter, the tool formatters)
# straight from the zip. Installing LLaMA-Factory would pull torch, peft, trl and accelerate for
# code the test does not run. The version is pinned so that a new release cannot change the test.
set -euo pipefail

VERSION=0.9.5
DIR="${HOME}/.cache/codesearch-gym/llamafactory"
WHEEL="${DIR}/llamafactory-${VERSION}-py3-none-any.whl"
if [ -s "${WHEEL}" ]; then
  echo "LLaMA-Factory ${VERSION}: ${WHEEL} (cached)"
  exit 0
fi
mkdir -p "${DIR}"
uv run python -m pip download --quiet --no-deps --only-binary :all: \
  --dest "${DIR}" "llamafactory==${VERSION}"
echo "LLaMA-Factory ${VERSION}: ${WHEEL}"
