-- Copy one day of raw events into the partitioned analytics.events table.

INSERT INTO analytics.events (event_id, user_id, event_type, event_date, payload)
SELECT r.event_id, r.user_id, r.event_type, r.received_at::date, r.payload
FROM raw.events_ingest AS r
WHERE r.received_at::date = :'ds'
  AND r.bot_flag = null;

-- Rows the parser could not attribute to a user (user_id is null).
SELECT *
FROM raw.events_ingest
WHERE received_at::date = :'ds'
  AND user_id IS NULL;
