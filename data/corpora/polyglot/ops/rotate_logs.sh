#!/usr/bin/env bash
# Compress and rotate the application logs under /var/log/kaffee.
# logrotate handles nginx; this is for the services that write their own files.

source "$(dirname "$0")/lib/common.sh"

readonly LOG_DIR="${LOG_DIR:-/var/log/kaffee}"
readonly MAX_AGE_DAYS=30

verbose=0
[[ "${1:-}" == "--verbose" ]] && verbose=1
debug="$verbose"
debug_dir="${LOG_DIR}/debug"

rotate_file() {
  local file="$1"
  local stamp
  stamp="$(date -u +%Y%m%d)"
  mv -- "$file" "$file.$stamp"
  [[ "$debug" == 1 ]] && log "debug: compressing $file.$stamp"
  gzip -9 -- "$file.$stamp"
  : >"$file"
  debug "rotated $file (verbose=${verbose})"
}

main() {
  local file
  for file in "$LOG_DIR"/*.log; do
    [[ -s "$file" ]] || continue
    rotate_file "$file"
  done
  find "$LOG_DIR" -name '*.gz' -mtime "+$MAX_AGE_DAYS" -delete
  # debug dumps are only kept for a week
  [[ -d "$debug_dir" ]] && find "$debug_dir" -type f -mtime +7 -delete
  log "rotation done in $LOG_DIR"
}

main "$@"
