#!/usr/bin/env bash
# Apply pending SQL migrations to a database and record them.
#
#   ops/migrate.sh shop db/migrations/shop
#
# Never builds a command string for eval: psql gets its arguments as an array.

source "$(dirname "$0")/lib/common.sh"

psql_args=(--set=ON_ERROR_STOP=1 --quiet --no-psqlrc)

ensure_table() {
  local db="$1"
  psql "${psql_args[@]}" --dbname="$db" <<'SQL'
CREATE TABLE IF NOT EXISTS schema_migrations (
  version text PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);
SQL
}

applied_versions() {
  local db="$1"
  psql "${psql_args[@]}" --dbname="$db" --tuples-only --no-align \
    --command="SELECT version FROM schema_migrations ORDER BY version"
}

write_summary() {
  local db="$1" count="$2"
  cat <<EOF
Migrated $db: $count new migration(s).
Check the application logs before closing the change ticket.
EOF
}

main() {
  local db="$1" dir="$2"
  local count=0 file version
  require_cmd psql
  ensure_table "$db"
  local done_list
  done_list="$(applied_versions "$db")"
  for file in "$dir"/*.sql; do
    version="$(basename "$file" .sql)"
    grep -qxF "$version" <<<"$done_list" && continue
    log "applying $version to $db"
    psql "${psql_args[@]}" --dbname="$db" --file="$file"
    psql "${psql_args[@]}" --dbname="$db" <<SQL
INSERT INTO schema_migrations (version) VALUES ('${version}');
SQL
    count=$((count + 1))
  done
  [[ "${DEBUG:-0}" == "1" ]] && log "applied: $count"
  write_summary "$db" "$count"
}

main "$@"
