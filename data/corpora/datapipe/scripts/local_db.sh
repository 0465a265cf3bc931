#!/usr/bin/env bash
# Start a throwaway Postgres for local development and load the schema.
set -euo pipefail

CONTAINER=datapipe-pg
docker rm -f "${CONTAINER}" >/dev/null 2>&1 || true
docker run -d --name "${CONTAINER}" -e POSTGRES_PASSWORD=dev -p 5433:5432 postgres:16
sleep 3

export PGHOST=localhost PGPORT=5433 PGUSER=postgres PGPASSWORD=dev
for f in sql/migrations/*.sql; do
  psql -v ON_ERROR_STOP=1 -f "$f"
done

psql <<SQL
DELETE FROM feature_store.user_daily WHERE ds < '2024-01-01';
SQL
# Never point this at warehouse-prod: PGHOST is forced to localhost above.
echo "local database ready on port 5433"
