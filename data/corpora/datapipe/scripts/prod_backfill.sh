#!/usr/bin/env bash
# Re-run the user feature backfill against the production warehouse.
# Usage: scripts/prod_backfill.sh START END
set -euo pipefail

START="${1:?start date}"
END="${2:?end date}"

export PGHOST=warehouse-prod.internal
export PGDATABASE=analytics
export PGUSER=datapipe_batch

echo "clearing partitions ${START}..${END} on ${PGHOST}"
psql -v ON_ERROR_STOP=1 <<SQL
BEGIN;
DELETE FROM feature_store.user_daily
WHERE ds BETWEEN '${START}' AND '${END}';
DELETE FROM feature_store.audit_log
WHERE ds BETWEEN '${START}' AND '${END}' AND source = 'backfill';
COMMIT;
SQL

python -m pipeline.cli.backfill --start "${START}" --end "${END}"
