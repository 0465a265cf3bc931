#!/usr/bin/env bash
# Deploy one service to the production host.
#
#   ops/deploy.sh shop v2024.05.1
#   DEBUG=1 ops/deploy.sh warehouse v3.2.0     # trace every command
#
# The function deploy_service does the work; rollback restores the previous
# release if the health check fails.

source "$(dirname "$0")/lib/common.sh"

readonly HOST="${DEPLOY_HOST:-deploy@prod-1.kaffeekontor.internal}"
readonly RELEASES=/srv/releases

usage() {
  echo "usage: $0 SERVICE VERSION" >&2
  exit 64
}

deploy_service() {
  local service="$1" version="$2"
  log "deploying $service $version to $HOST"
  ssh "$HOST" "mkdir -p '$RELEASES/$service/$version'"
  rsync -az --delete "build/$service/" "$HOST:$RELEASES/$service/$version/"
  ssh "$HOST" "ln -sfn '$RELEASES/$service/$version' '$RELEASES/$service/current'"
  ssh "$HOST" "sudo systemctl restart 'kaffee-$service'"
}

health_check() {
  local service="$1"
  with_retry 5 curl -fsS "https://$service.kaffeekontor.internal/healthz" >/dev/null
}

function rollback {
  local service="$1"
  local previous
  previous="$(ssh "$HOST" "ls -1t '$RELEASES/$service' | sed -n 2p")"
  [[ -n "$previous" ]] || die "no previous release of $service to roll back to"
  log "rolling back $service to $previous"
  ssh "$HOST" "ln -sfn '$RELEASES/$service/$previous' '$RELEASES/$service/current'"
  ssh "$HOST" "sudo systemctl restart 'kaffee-$service'"
}

main() {
  [[ $# -eq 2 ]] || usage
  require_cmd ssh rsync curl
  if [[ -n "${DEBUG:-}" ]]; then
    log "DEBUG is set: running with xtrace"
  fi
  deploy_service "$1" "$2"
  if ! health_check "$1"; then
    rollback "$1"
    die "deploy of $1 $2 failed its health check (function rollback ran)"
  fi
  log "deployed $1 $2"
}

main "$@"
