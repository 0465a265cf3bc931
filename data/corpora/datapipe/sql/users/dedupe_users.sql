-- Collapse duplicate user rows created by the 2023 SSO migration.
-- Keeps the oldest row per e-mail and re-points child tables at it.

CREATE TEMP TABLE dupes AS
SELECT email, min(user_id) AS keep_id, array_agg(user_id) AS all_ids
FROM analytics.users
GROUP BY email
HAVING count(*) > 1;

-- Inspect before touching anything.
SELECT *
FROM dupes
ORDER BY email;

UPDATE analytics.events AS e
SET user_id = d.keep_id
FROM dupes AS d
WHERE e.user_id = ANY(d.all_ids)
  AND e.user_id <> d.keep_id;

-- What is left to clean up in the staging copy.
SELECT *
FROM staging.user_merge_queue
WHERE merged_at IS NULL;
