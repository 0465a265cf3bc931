-- Split analytics.events into monthly partitions.

BEGIN;

ALTER TABLE analytics.events RENAME TO events_legacy;

CREATE TABLE analytics.events (
    event_id uuid NOT NULL,
    user_id bigint,
    event_type text NOT NULL,
    event_date date NOT NULL,
    payload jsonb
) PARTITION BY RANGE (event_date);

CREATE TABLE analytics.events_2024_05 PARTITION OF analytics.events
    FOR VALUES FROM ('2024-05-01') TO ('2024-06-01');

INSERT INTO analytics.events
SELECT event_id, user_id, event_type, event_date, payload
FROM analytics.events_legacy
WHERE event_date >= '2024-05-01';

DROP TABLE analytics.events_legacy;

COMMIT;
