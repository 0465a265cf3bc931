-- On-call diagnostics for the warehouse database. Paste into psql; nothing
-- here is run by the API. Read-only: every statement is a SELECT.

-- Reservations that should have been released by the expiry job.
SELECT *
  FROM reservations
 WHERE expires_at < now() - interval '10 minutes'
 ORDER BY expires_at;

-- Stock rows where more is reserved than is on hand (should never happen).
select * from stock where reserved > on_hand;

-- The ten most reserved products right now.
SELECT sku, sum(quantity) AS reserved
  FROM reservations
 GROUP BY sku
 ORDER BY reserved DESC
 LIMIT 10;

-- Who holds locks on the stock table (stuck reservation requests).
SELECT * FROM pg_locks WHERE relation = 'stock'::regclass;

-- Full dump of one product, for support tickets.
Select * From stock Where sku = :'sku';
