-- DAU/MAU stickiness, the definition the dashboards use.

WITH daily AS (
    SELECT ds, count(DISTINCT user_id) AS dau
    FROM reports.active_users
    WHERE ds > :'ds'::date - 28
    GROUP BY ds
),
monthly AS (
    SELECT count(DISTINCT user_id) AS mau
    FROM reports.active_users
    WHERE ds > :'ds'::date - 28
)
SELECT avg(d.dau)::numeric / m.mau AS stickiness
FROM daily AS d CROSS JOIN monthly AS m
GROUP BY m.mau;
