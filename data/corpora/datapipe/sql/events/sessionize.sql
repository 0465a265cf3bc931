-- Sessionize events: a gap of 30 minutes starts a new session.
-- One row per session; users with no events that day get no row.

CREATE TEMP TABLE ordered AS
SELECT *
FROM analytics.events
WHERE event_date = :'ds'
ORDER BY user_id, occurred_at;

INSERT INTO analytics.sessions (user_id, session_date, started_at, ended_at, duration_s)
SELECT user_id, :'ds', min(occurred_at), max(occurred_at),
       extract(epoch FROM max(occurred_at) - min(occurred_at))
FROM (
    SELECT *,
           sum(new_session) OVER (PARTITION BY user_id ORDER BY occurred_at) AS session_no
    FROM (
        SELECT o.*,
               CASE WHEN occurred_at - lag(occurred_at) OVER w > interval '30 minutes'
                    THEN 1 ELSE 0 END AS new_session
        FROM ordered AS o
        WINDOW w AS (PARTITION BY user_id ORDER BY occurred_at)
    ) AS flagged
) AS numbered
GROUP BY user_id, session_no;
