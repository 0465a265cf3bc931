#!/usr/bin/env bash
# Run one file under sql/ with a partition date: scripts/run_sql.sh sql/users/active_users.sql 2024-05-01
set -euo pipefail

FILE="${1:?sql file}"
DS="${2:-$(date -d yesterday +%F)}"
: "${PGHOST:=warehouse.internal}"
export PGHOST

echo "running ${FILE} for ${DS} on ${PGHOST}"
psql -v ON_ERROR_STOP=1 -v ds="${DS}" -f "${FILE}"
