#!/usr/bin/env bash
# Nightly backup of the shop and billing databases to the backup bucket.
# Keeps 14 daily dumps. Run from cron at 02:30:
#   30 2 * * * /opt/kaffee/ops/backup_db.sh >>/var/log/kaffee/backup.log 2>&1

source "$(dirname "$0")/lib/common.sh"

readonly BUCKET="${BACKUP_BUCKET:-s3://kaffee-backups/db}"
readonly KEEP_DAYS=14
verbose="${verbose:-0}"
debug="$verbose"

dump_database() {
  local db="$1" out="$2"
  debug "dumping $db to $out (verbose=$verbose)"
  pg_dump --format=custom --no-owner --dbname="$db" --file="$out"
}

record_backup() {
  local db="$1" file="$2" bytes="$3"
  psql --dbname=ops --set=ON_ERROR_STOP=1 <<SQL
INSERT INTO backups (database, file, bytes, taken_at)
VALUES ('${db}', '${file}', ${bytes}, now());
SQL
}

prune_old() {
  local cutoff
  cutoff="$(date -u -d "-${KEEP_DAYS} days" +%F)"
  aws s3 ls "$BUCKET/" | awk '{print $4}' | while read -r name; do
    [[ "${name:0:10}" < "$cutoff" ]] && aws s3 rm "$BUCKET/$name"
  done
}

main() {
  require_cmd pg_dump psql aws
  local stamp tmp db file
  stamp="$(date -u +%F)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  for db in shop billing; do
    file="${stamp}-${db}.dump"
    dump_database "$db" "$tmp/$file"
    [[ "${debug:-0}" == 1 ]] && log "debug: uploading $file"
    with_retry 3 aws s3 cp "$tmp/$file" "$BUCKET/$file"
    record_backup "$db" "$file" "$(stat -c %s "$tmp/$file")"
  done
  prune_old
  log "backup done: $stamp"
}

main "$@"
