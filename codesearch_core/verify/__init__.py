"""Verification at scale: execute and grade many proposals, inline, in a local process pool, or on
Ray, and write the results to the store.

Public API: `verify_one` (`verify.tasks`: the unit of work, plain data in and out), `verify_many`
(`verify.pool`: many tasks in a local process pool, no store),
`verify_pending` (`verify.pending`: drive a store), `verify_stale` (`verify.stale`: re-check what
was made on another corpus snapshot or tool version, into the Drift queue), `verify_many_ray`
(`verify.ray_backend`, and its pieces other Ray fan-outs use: `import_ray`, `connect_ray`,
`submit_lazily`, `cluster_cpus`),
`audit_seeds` / `summarize` / `baseline_calls` (`verify.audit`: the seed audit; its thresholds are the seed
rules', in `corpora`). The second opinion (`verify.second_opinion`): `Judge` runs `models.Check`s
(searches a reader would also count, or leave out) on a corpus and judges a `Subject`'s expected
spans by them (`judge` by its checks source, a `CheckSource`; `judge_by` by given checks), with
`NO_SECOND_OPINION`, `MAX_CHECK_FINDINGS`; synthesis adds its rules' checks, the
seed audit a seed's own.
Imports the store only for type checking, so workers skip DuckDB and pandas.
"""

from codesearch_core.verify.audit import (
    AuditSummary,
    SeedAudit,
    audit_seeds,
    baseline_calls,
    summarize,
)
from codesearch_core.verify.pending import DEFAULT_BATCH_SIZE, task_for, verify_pending
from codesearch_core.verify.pool import OutcomeStream, VerifyProgress, default_workers, verify_many
from codesearch_core.verify.ray_backend import (
    cluster_cpus,
    connect_ray,
    import_ray,
    submit_lazily,
    verify_many_ray,
)
from codesearch_core.verify.second_opinion import (
    MAX_CHECK_FINDINGS,
    NO_SECOND_OPINION,
    CheckSource,
    Judge,
    Subject,
)
from codesearch_core.verify.stale import StaleReport, verify_stale
from codesearch_core.verify.tasks import VerifyTask, verify_one

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MAX_CHECK_FINDINGS",
    "NO_SECOND_OPINION",
    "AuditSummary",
    "CheckSource",
    "Judge",
    "OutcomeStream",
    "SeedAudit",
    "StaleReport",
    "Subject",
    "VerifyProgress",
    "VerifyTask",
    "audit_seeds",
    "baseline_calls",
    "cluster_cpus",
    "connect_ray",
    "default_workers",
    "import_ray",
    "submit_lazily",
    "summarize",
    "task_for",
    "verify_many",
    "verify_many_ray",
    "verify_one",
    "verify_pending",
    "verify_stale",
]
