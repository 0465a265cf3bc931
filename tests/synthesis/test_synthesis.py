"""Synthesis on the shipped webshop corpus with the real rg and ast-grep, into a real store."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from codesearch_core.models import Difficulty
from codesearch_core.store import DRAFT, Store
from codesearch_core.synthesis import (
    NothingToMineError,
    SynthesisCounts,
    Target,
    TemplateWriter,
    WrittenIntent,
    check_sample,
    stored_draft_ids,
    synthesize,
)
from codesearch_core.synthesis.baselines import measure_baselines
from codesearch_core.synthesis.mine import (
    MIN_MARGIN,
    Candidate,
    candidates,
    measure,
    verify_target,
)
from codesearch_core.synthesis.pipeline import INTENT_SIMILARITY, IntentIndex
from codesearch_core.synthesis.rules import TEMPLATES


@functools.cache
def _webshop_candidates() -> dict[tuple[str, str, str], Candidate]:
    # The mining passes run once for the module's tests.
    return {(c.template.id, c.language, c.subject): c for c in candidates("webshop")}


def _target(rule: str, language: str, subject: str) -> Target:
    found = _webshop_candidates().get((rule, language, subject))
    assert found is not None, f"{rule} {language} {subject} was not mined"
    target, why = measure("webshop", found)
    assert target is not None, why
    [(best, label)] = measure_baselines("webshop", [target])
    return replace(target, baseline_reward=best, baseline_label=label)


def test_a_call_target_has_its_findings_and_beats_the_keyword_search() -> None:
    target = _target("call", "javascript", "DB.query")
    # `DB` is capitalized (a module-like receiver): the callee is `DB.query` exactly.
    assert target.call.arguments == {
        "rule": {"kind": "call_expression",
                 "has": {"kind": "member_expression", "regex": r"^DB\s*\.\s*query$"}},
        "language": "javascript",
    }  # fmt: skip
    assert len(target.expected) >= 2 and target.files >= 2
    # the webshop mentions DB.query in comments and strings: a text search finds those too
    assert "DB.query" in target.baseline_label or "query" in target.baseline_label
    assert target.baseline_reward is not None
    assert target.baseline_reward <= target.reference_reward - MIN_MARGIN
    assert verify_target(target)


def test_a_text_target_is_measured_against_its_naive_searches() -> None:
    target = _target("secret-password", "javascript", "password")
    assert target.call.name.value == "ripgrep_search"
    assert target.baseline_label == "rg 'password'"
    assert target.baseline_reward is not None and target.baseline_reward < 0.75


def test_size_bounds_refuse_a_single_finding() -> None:
    template = next(t for t in TEMPLATES if t.id == "call")
    arguments = {"pattern": "stripe.refunds.create($$$ARGS)", "language": "typescript"}
    candidate = Candidate(template, "typescript", "stripe.refunds.create", arguments)
    assert measure("webshop", candidate) == (None, "too_small")


def test_synthesize_writes_distinct_verified_drafts(tmp_path: Path) -> None:
    progress: list[int] = []
    with Store(tmp_path / "s.duckdb") as store:
        report = synthesize(
            "webshop", writer=TemplateWriter(), sink=store.drafts, limit=12, seed=0,
            on_progress=lambda c: progress.append(c.kept),
        )  # fmt: skip
        c = report.counts
        assert c.kept == 12 and len(set(report.draft_ids)) == c.kept
        assert c.candidates >= c.mined >= c.verified >= c.deduplicated >= c.kept
        assert c.dropped["too_small"] and c.dropped["baseline_close"]
        assert progress and progress[-1] == c.kept
        drafts, total = store.drafts.list(status="pending", limit=1000)
        assert total == c.kept
        assert len({d.findings_hash for d in drafts}) == total  # no two with the same findings
        assert {d.engine for d in drafts} == {"templates"}
        assert all(d.rule and d.prompt.startswith("template:") for d in drafts)
        # Run again with the same seed: what is stored is not run nor written again, the run goes
        # on to targets not drafted yet.
        again = synthesize(
            "webshop", writer=TemplateWriter(), sink=store.drafts, limit=3, seed=0,
            known_drafts=stored_draft_ids(store, "webshop"),
        )  # fmt: skip
        assert again.counts.kept == 3 and set(again.draft_ids).isdisjoint(report.draft_ids)
        assert again.counts.already_drafted == 12
        assert store.queue(DRAFT).counts()["open"] == 15


def test_a_stop_midway_keeps_the_drafts_made_so_far(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        seen: list[SynthesisCounts] = []
        report = synthesize(
            "webshop", writer=TemplateWriter(), sink=store.drafts, batch_size=8,
            on_progress=seen.append, should_stop=lambda: bool(seen),
        )  # fmt: skip
        assert report.stopped and len(seen) == 1  # one batch of 8 candidates, then the stop
        c = report.counts
        assert c.mined + sum(c.dropped[w] for w in ("too_small", "too_large", "failed")) <= 8
        drafts, total = store.drafts.list(limit=100)
        assert total == report.counts.kept == len(drafts)
        assert all(d.expected and d.intent for d in drafts)


def test_a_corpus_without_a_known_language_has_nothing_to_mine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("TODO(ann): write\nTODO(ann): more\n")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    with pytest.raises(NothingToMineError, match="nothing to mine in corpus 'notes'"):
        list(candidates("notes"))


class _SameIntent:
    engine, model = "fixed", "m"

    def write(self, targets: Sequence[Target], *, seed: int) -> list[WrittenIntent]:
        del seed
        return [WrittenIntent("Find the request handlers", Difficulty.MEDIUM) for _ in targets]


def test_too_close_intents_are_dropped(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        report = synthesize("webshop", writer=_SameIntent(), sink=store.drafts, limit=1)
    assert report.counts.kept == 1
    assert report.counts.dropped["close_intent"] >= 1


def test_model_samples_are_checked() -> None:
    target = _target("call", "javascript", "DB.query")
    good = json.dumps({"intent": "Where do we run SQL through DB.query?", "difficulty": "easy"})
    assert check_sample(good, target) == (("Where do we run SQL through DB.query?", "easy"), "")
    assert check_sample("{not json", target)[1] == "invalid_json"
    slip = '{"intent": "Where is DB.query\x08 called?", "difficulty": "medium"}'
    assert check_sample(slip, target) == (("Where is DB.query called?", "medium"), "")
    assert check_sample('{"intent": "x"}', target)[1] == "invalid_json"
    quoted = json.dumps({"intent": "Find DB.query($$$ARGS) calls", "difficulty": "easy"})
    assert check_sample(quoted, target)[1] == "quotes_pattern"
    regex = json.dumps({"intent": r"Lines matching \bTODO\( in code", "difficulty": "hard"})
    assert check_sample(regex, target)[1] == "quotes_pattern"


def test_template_intents_vary_with_the_seed_and_fill_the_subject() -> None:
    target = _target("call", "javascript", "DB.query")
    intents = {TemplateWriter().write([target], seed=s)[0].intent for s in range(12)}
    assert len(intents) >= 3
    assert all(i is not None and "DB.query" in i and "JavaScript" in i for i in intents)


def test_the_intent_index_finds_what_comparing_with_every_intent_finds() -> None:
    # The length window is exact, not a heuristic: the same answers as the all-pairs check.
    rng = random.Random(7)
    words = ["find", "every", "call", "to", "db.query", "in", "the", "python", "code", "x", "yy"]
    texts = [" ".join(rng.choices(words, k=rng.randint(2, 9))) for _ in range(400)]
    index = IntentIndex()
    seen: list[str] = []
    for text in texts:
        brute = any(fuzz.ratio(text, old) >= INTENT_SIMILARITY for old in seen)
        assert index.close(text) == brute, text
        if not brute:
            index.add(text)
            seen.append(text)
    assert 20 < len(seen) < 400
