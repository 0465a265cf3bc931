#!/usr/bin/env bash
# Reset the staging warehouse to a small, known state for the integration tests.
set -euo pipefail

export PGHOST=warehouse-staging.internal
export PGDATABASE=analytics

psql -v ON_ERROR_STOP=1 <<SQL
DELETE FROM analytics.events WHERE event_date < current_date - 3;
DELETE FROM feature_store.user_daily;
DELETE FROM predictions.churn;
TRUNCATE staging.user_merge_queue;
SQL

psql -v ON_ERROR_STOP=1 -f sql/users/user_dim.sql
echo "staging reset done"
