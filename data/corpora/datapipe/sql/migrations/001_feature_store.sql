-- Feature store schema.

BEGIN;

CREATE SCHEMA IF NOT EXISTS feature_store;

CREATE TABLE feature_store.user_daily (
    user_id bigint NOT NULL,
    ds date NOT NULL,
    features jsonb NOT NULL,
    PRIMARY KEY (user_id, ds)
) PARTITION BY RANGE (ds);

CREATE TABLE feature_store.user_daily_staging (LIKE feature_store.user_daily);

CREATE TABLE feature_store.audit_log (
    ds date NOT NULL,
    source text NOT NULL,
    rows bigint NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now()
);

COMMIT;
