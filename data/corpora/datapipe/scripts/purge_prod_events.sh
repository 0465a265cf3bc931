#!/usr/bin/env bash
# GDPR erasure: remove every event of the user ids listed in a file.
# Usage: scripts/purge_prod_events.sh ids.txt
set -euo pipefail

IDS_FILE="${1:?file with one user id per line}"
IDS=$(paste -sd, "${IDS_FILE}")

export PGHOST=warehouse-prod.internal
export PGDATABASE=analytics

psql -v ON_ERROR_STOP=1 <<SQL
DELETE FROM analytics.events WHERE user_id IN (${IDS});
UPDATE analytics.users SET email = NULL, deleted_at = now() WHERE user_id IN (${IDS});
SQL

echo "purged events of $(wc -l < "${IDS_FILE}") users"
