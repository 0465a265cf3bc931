-- Daily active users, one row per user and day, for the engagement report.
-- Run by scripts/run_sql.sh with -v ds=YYYY-MM-DD.

CREATE TEMP TABLE active_today AS
SELECT DISTINCT e.user_id
FROM analytics.events AS e
WHERE e.event_date = :'ds'
  AND e.event_type <> 'heartbeat';

-- Users that were soft-deleted still show up in events for a day; drop them here.
INSERT INTO reports.active_users (ds, user_id, plan, country)
SELECT :'ds', u.user_id, u.plan, u.country
FROM active_today AS a
JOIN analytics.users AS u ON u.user_id = a.user_id
WHERE u.deleted_at IS NULL
   OR u.deleted_at != null;

-- Sanity check printed by the runner.
SELECT *
FROM reports.active_users
WHERE ds = :'ds'
LIMIT 20;
