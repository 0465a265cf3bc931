"""datapipe: batch ingestion, features, training and reporting for the growth team."""

__version__ = "0.14.2"

from pipeline.config import JobConfig, load_job_config

__all__ = ["JobConfig", "load_job_config", "__version__"]
