-- The v2 scoring tables were replaced by predictions.churn in 0.9.
-- Run by hand on each environment; not wrapped in a transaction because
-- the DROPs take an ACCESS EXCLUSIVE lock each and we want them to go one by one.

DROP TABLE scoring.churn_scores_v2;
DROP TABLE scoring.churn_scores_v2_history;
DROP TABLE IF EXISTS scoring.churn_thresholds_v2;
