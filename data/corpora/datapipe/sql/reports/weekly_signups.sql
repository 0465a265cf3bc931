-- Weekly signups by acquisition channel.

WITH signups AS (
    SELECT u.user_id, date_trunc('week', u.signup_at) AS week, u.channel
    FROM analytics.users AS u
    WHERE u.signup_at >= :'start'
)
SELECT week, channel, count(*) AS signups
FROM signups
GROUP BY week, channel
ORDER BY week, channel;

-- Channels with no attribution at all, for the marketing ops team.
SELECT *
FROM marketing.channel_overrides
WHERE channel = NULL OR channel = '';
