-- Rebuild the feature store partitions for a date range from staging.
-- Safe to re-run: everything happens in one transaction.

BEGIN;

DROP TABLE IF EXISTS feature_store.user_daily_rebuild;
CREATE TABLE feature_store.user_daily_rebuild (LIKE feature_store.user_daily INCLUDING ALL);

INSERT INTO feature_store.user_daily_rebuild
SELECT user_id, ds, features
FROM feature_store.user_daily_staging
WHERE ds BETWEEN :'start' AND :'end';

DROP TABLE feature_store.user_daily_old;
ALTER TABLE feature_store.user_daily RENAME TO user_daily_old;
ALTER TABLE feature_store.user_daily_rebuild RENAME TO user_daily;
DROP TABLE feature_store.audit_log_rebuild;

COMMIT;
