"""The pipeline's whole-corpus check: a draft's reference call must finish where users run it (the
whole corpus, within the default timeout), not only on the files its mining pass named; one probe
per tool and language."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.store import Draft, Store
from codesearch_core.synthesis import TemplateWriter, synthesize

PY = '''"""Calls {name} (the docstring names {name} too)."""


def handler_{i}(x):
    # {name}(x) in a comment
    return {name}(x) + {name}(x, 1)
'''


@pytest.fixture
def small_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A few Python files where each of two functions is called in two files."""
    for i in range(4):
        name = ("load_orders", "save_invoice")[i % 2]
        path = tmp_path / "corpora" / "small" / f"pkg/mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PY.format(name=name, i=i), encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path / "corpora"))
    return "small"


def test_drafts_whose_reference_is_too_slow_on_the_whole_corpus_are_dropped(
    small_corpus: str, tmp_path: Path
) -> None:
    with Store(tmp_path / "fine.duckdb") as store:
        fine = synthesize(small_corpus, writer=TemplateWriter(), sink=store.drafts)
    assert fine.counts.kept > 0 and fine.too_slow == []
    with Store(tmp_path / "slow.duckdb") as store:
        # No reference finishes on the whole corpus in a millisecond: every group is dropped,
        # though each of its targets reproduced on its mining pass's files.
        slow = synthesize(small_corpus, writer=TemplateWriter(), sink=store.drafts, timeout_s=0.001)
        assert store.drafts.list(status=None, corpus=small_corpus, limit=100)[1] == 0
    c = slow.counts
    assert c.kept == c.verified == 0
    assert c.dropped["too_slow_whole_corpus"] == fine.counts.verified
    # One probe per tool and language decides for every rule of it: the Python ast-grep rules
    # here (two of them made drafts before) are all dropped after a single slow probe.
    assert len({d.rule for d in _drafts(tmp_path / "fine.duckdb")}) >= 2
    assert slow.too_slow == ["ast_grep_search/python"]
    assert slow.to_dict()["too_slow"] == slow.too_slow


def _drafts(db: Path) -> list[Draft]:
    with Store(db) as store:
        return store.drafts.list(status=None, limit=100)[0]


def test_no_webshop_rule_is_too_slow_on_the_whole_corpus(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        report = synthesize("webshop", writer=TemplateWriter(), sink=store.drafts)
    assert report.counts.kept > 0 and report.too_slow == []
    assert not {"too_slow_whole_corpus", "whole_corpus_differs"} & set(report.counts.dropped)
