"""The text baselines of a batch, measured on shared rg passes, score as each baseline run alone
with the runner does (real rg, the shipped webshop corpus)."""

from __future__ import annotations

from codesearch_core.corpora import corpus_root
from codesearch_core.grading import score
from codesearch_core.synthesis.baselines import baselines_of, measure_baselines
from codesearch_core.synthesis.mine import candidates, measure
from codesearch_core.tools import run_tool_call


def test_shared_passes_score_as_each_baseline_run_alone() -> None:
    targets = [t for c in candidates("webshop") if (t := measure("webshop", c)[0]) is not None]
    assert len(targets) >= 50
    root = corpus_root("webshop")
    shared = measure_baselines("webshop", targets)
    compared = 0
    for target, (best, label) in zip(targets, shared, strict=True):
        alone = [
            (score(run_tool_call(call, root), call, target.expected)[1].total, name)
            for name, call in baselines_of(target)
        ]
        if not alone:
            assert (best, label) == (None, "")
            continue
        top = max(total for total, _ in alone)
        assert best is not None and abs(best - top) < 1e-9, (target.key, label, alone)
        compared += 1
    assert compared >= 50
