-- Nightly cleanup of the staging schema.
-- We DELETE with a ds filter instead of TRUNCATE, because the
-- staging loaders may still be writing today's partition.

DELETE FROM feature_store.user_daily_staging
WHERE ds < current_date - 7;

DROP TABLE staging.user_merge_queue_old;
DROP TABLE staging.events_reject_2024_04;
DROP TABLE IF EXISTS staging.tmp_sessions;
