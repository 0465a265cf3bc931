#!/usr/bin/env bash
# Shared helpers for the ops scripts. Source it, do not run it:
#   source "$(dirname "$0")/lib/common.sh"
#
# No eval anywhere: commands are passed around as arrays ("${cmd[@]}").

set -euo pipefail

if [[ "${DEBUG:-0}" == "1" ]]; then
  set -x
fi

readonly LOG_TAG="${LOG_TAG:-ops}"

log() {
  printf '%s [%s] %s\n' "$(date -u +%FT%TZ)" "$LOG_TAG" "$*" >&2
}

die() {
  log "ERROR: $*"
  exit 1
}

# debug: like log, but only when the caller passed --verbose (sets $verbose).
debug() {
  local debug="${verbose:-0}"
  if [[ "$debug" == "1" ]]; then
    log "debug: $*"
  fi
}

require_cmd() {
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || die "missing command: $cmd"
  done
}

# with_retry N CMD...: run CMD up to N times, sleeping 2^i seconds between tries.
function with_retry {
  local tries="$1"; shift
  local i
  for ((i = 0; i < tries; i++)); do
    if "$@"; then
      return 0
    fi
    log "attempt $((i + 1))/$tries failed: $*"
    sleep $((2 ** i))
  done
  return 1
}
