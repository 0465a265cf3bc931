"""Alert message templates for job failures and data-quality checks."""

from __future__ import annotations

from pipeline.notify.slack import SlackWebhook

JOB_FAILED = """\
<!here> :red_circle: *{job}* failed for `{ds}`
Attempt {attempt} of {max_attempts}. Last error:
```{error}```
Runbook: https://wiki.internal/datapipe/runbooks/{job}
"""

JOB_RECOVERED = """\
:large_green_circle: *{job}* recovered for `{ds}` after {attempt} attempts.
"""

DQ_CHECK_FAILED = """\
<!here> Data-quality check *{check}* failed on `{table}` ({ds})
Expected {expected}, got {actual}.
"""


def notify_failure(job: str, ds: str, attempt: int, max_attempts: int, error: str) -> None:
    text = JOB_FAILED.format(job=job, ds=ds, attempt=attempt, max_attempts=max_attempts,
                             error=error[-1500:])
    SlackWebhook.from_env().post(text)


def notify_recovered(job: str, ds: str, attempt: int) -> None:
    SlackWebhook.from_env().post(JOB_RECOVERED.format(job=job, ds=ds, attempt=attempt))


def notify_dq_failure(check: str, table: str, ds: str, expected: str, actual: str) -> None:
    text = DQ_CHECK_FAILED.format(check=check, table=table, ds=ds, expected=expected, actual=actual)
    SlackWebhook.from_env().post(text)
