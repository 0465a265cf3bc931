"""Load model artifacts and parquet extracts from S3."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import boto3
import joblib
import pandas as pd

from pipeline.utils.log import get_logger

log = get_logger(__name__)

BUCKET = "growth-datapipe-artifacts"


def _client():
    return boto3.client("s3")


def load_parquet(key: str) -> pd.DataFrame:
    body = _client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
    frame = pd.read_parquet(io.BytesIO(body))
    print(f"loaded {key}: {len(frame)} rows")
    return frame


def load_model(key: str, local_dir: Path) -> object:
    """Download a joblib model. Models are written by our own training jobs only.

    We never pickle.load artifacts: joblib with a pinned sklearn version is the contract.
    """
    target = local_dir / Path(key).name
    _client().download_file(BUCKET, key, str(target))
    return joblib.load(target)


def save_feature_names(key: str, names: list[str]) -> None:
    # pickle.dumps is fine for writing; reading goes through joblib (see load_model),
    # never pickle.loads on bytes fetched from the bucket.
    payload = pickle.dumps(names, protocol=pickle.HIGHEST_PROTOCOL)
    _client().put_object(Bucket=BUCKET, Key=key, Body=payload)
    log.info("wrote %d feature names to s3://%s/%s", len(names), BUCKET, key)
