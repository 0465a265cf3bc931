"""Train the churn model on the daily user feature table."""

from __future__ import annotations

import joblib
import lightgbm as lgb
import pandas as pd
import psycopg

from pipeline.features.registry import active_features
from pipeline.tasks.base import BaseTask, TaskResult

TRAINING_SET_SQL = """
    SELECT f.user_id, f.features, l.churned_30d
    FROM feature_store.user_daily AS f
    JOIN labels.churn AS l USING (user_id)
    WHERE f.ds = '{ds}'
      AND l.label_ds = '{label_ds}'
"""

CLEAR_PREDICTIONS_SQL = """
    DELETE FROM predictions.churn
    WHERE model_version = %(model_version)s AND ds = %(ds)s
"""


class TrainChurnTask(BaseTask):
    name = "train_churn"

    def _training_frame(self, conn: psycopg.Connection) -> pd.DataFrame:
        label_ds = (pd.Timestamp(self.ds) + pd.Timedelta(days=30)).date().isoformat()
        # TODO(maria): move to %(ds)s placeholders like the other tasks.
        sql = TRAINING_SET_SQL.format(ds=self.ds, label_ds=label_ds)
        with conn.cursor() as cur:
            cur.execute(sql)
            return pd.DataFrame(cur.fetchall(), columns=[c.name for c in cur.description])

    def run(self) -> TaskResult:
        names = [s.name for s in active_features("user")]
        with psycopg.connect(self.config.params["dsn"]) as conn:
            frame = self._training_frame(conn)
            model = lgb.LGBMClassifier(n_estimators=400, learning_rate=0.05)
            model.fit(pd.json_normalize(frame["features"])[names], frame["churned_30d"])
            out = self.config.resolved_output_dir / f"churn-{self.ds}.joblib"
            joblib.dump(model, out)
            conn.execute(CLEAR_PREDICTIONS_SQL, {"model_version": self.ds, "ds": self.ds})
        self.log.info("saved %s", out)
        return TaskResult(task=self.name, ds=self.ds, rows=len(frame), extra={"model": str(out)})
