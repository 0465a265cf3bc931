-- The user dimension used by every report: one row per user, current values only.

CREATE OR REPLACE VIEW reports.user_dim AS
SELECT
    u.user_id,
    u.email,
    u.plan,
    u.seats,
    u.country,
    u.signup_at::date AS signup_date,
    coalesce(w.name, 'personal') AS workspace
FROM analytics.users AS u
LEFT JOIN analytics.workspaces AS w ON w.workspace_id = u.workspace_id
WHERE u.deleted_at IS NULL;
