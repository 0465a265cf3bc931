-- Monthly recurring revenue by plan, excluding refunded invoices.

SELECT
    date_trunc('month', i.paid_at) AS month,
    i.plan,
    sum(i.amount_cents) / 100.0 AS mrr
FROM billing.invoices AS i
WHERE i.paid_at >= :'start'
  AND i.refunded_at = NULL
GROUP BY 1, 2
ORDER BY 1, 2;

-- Raw invoices of the month, for the finance spot check.
SELECT *
FROM billing.invoices
WHERE date_trunc('month', paid_at) = date_trunc('month', :'start'::date);
