"""The QA sample and the measured error rate: a deterministic stratified draw, the Wilson interval
as statsmodels computes it, the card and the drop list for the next build."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from codesearch_core.dataset import draw_sample, estimate, import_verdicts, render_card
from codesearch_core.dataset.sample import stratum
from codesearch_core.errors import InputFileError


def _items(out: Path) -> list[dict[str, object]]:
    return [
        {**json.loads(line), "split": side}
        for side in ("train", "eval")
        for line in (out / f"data/{side}.jsonl").read_text().splitlines()
    ]


def test_the_same_seed_draws_the_same_sample_and_another_seed_another(built_copy: Path) -> None:
    first = draw_sample(built_copy, 20, ["tag", "language"], seed=3)
    text = (built_copy / "qa/sample.jsonl").read_bytes()
    assert draw_sample(built_copy, 20, ["tag", "language"], seed=3) == first
    assert (built_copy / "qa/sample.jsonl").read_bytes() == text
    assert [s["id"] for s in draw_sample(built_copy, 20, ["tag", "language"], seed=4)] != [
        s["id"] for s in first
    ]


def test_the_sample_has_every_stratum_in_proportion_to_its_size(built_copy: Path) -> None:
    items = _items(built_copy)
    sizes = Counter(stratum(i, ["language"]) for i in items)
    n = 2 * len(sizes) + 10
    sample = draw_sample(built_copy, n, ["language"], seed=0)
    drawn = Counter(s["stratum"] for s in sample)
    assert len(sample) == n and set(drawn) == set(sizes)
    for name, size in sizes.items():
        # Largest remainder over one draw per stratum: at most one off its proportional share.
        share = 1 + (n - len(sizes)) * size / len(items)
        assert abs(drawn[name] - share) <= 1, (name, drawn[name], share)


def test_the_estimate_is_statsmodels_wilson_interval_overall_and_per_stratum() -> None:
    strata = {f"a{i}": "python" for i in range(12)} | {f"b{i}": "java" for i in range(5)}
    verdicts = {k: k not in {"a3", "a7"} for k in strata}  # 2 wrong of 12, 0 of 5
    figures = estimate(verdicts, strata)
    low, high = proportion_confint(15, 17, alpha=0.05, method="wilson")
    assert figures["overall"]["correct"] == 15 and figures["overall"]["reviewed"] == 17
    assert figures["overall"]["low"] == pytest.approx(low, abs=1e-6)
    assert figures["overall"]["high"] == pytest.approx(high, abs=1e-6)
    low, high = proportion_confint(5, 5, alpha=0.05, method="wilson")
    assert figures["strata"]["java"]["low"] == pytest.approx(low, abs=1e-6) and high == 1.0


def test_imported_verdicts_go_into_the_card_and_the_rejected_list(built_copy: Path) -> None:
    sample = draw_sample(built_copy, 10, ["tag", "language"], seed=1)
    wrong = {sample[0]["id"], sample[5]["id"]}
    verdicts = built_copy / "verdicts.jsonl"
    verdicts.write_text("".join(
        json.dumps({"id": s["id"], "verdict": "incorrect" if s["id"] in wrong else "correct"}) + "\n"
        for s in sample
    ))  # fmt: skip
    qa = import_verdicts(built_copy, verdicts)
    assert qa["overall"]["reviewed"] == 10 and qa["overall"]["correct"] == 8
    assert (built_copy / "qa/rejected.txt").read_text().split() == sorted(wrong)
    card = json.loads((built_copy / "card.json").read_text())
    assert card["qa"]["overall"] == qa["overall"] and card["qa"]["sampled"] == 10
    low, high = proportion_confint(8, 10, alpha=0.05, method="wilson")
    text = render_card(built_copy)
    assert f"{100 * low:.1f}% to {100 * high:.1f}%" in text and "from 10 reviewed" in text
    assert text == (built_copy / "README.md").read_text()


def test_a_verdict_on_an_item_not_sampled_is_an_error_naming_the_line(built_copy: Path) -> None:
    draw_sample(built_copy, 5, ["language"], seed=0)
    verdicts = built_copy / "verdicts.jsonl"
    verdicts.write_text('\n{"id": "no-such-item", "verdict": "correct"}\n')
    with pytest.raises(InputFileError, match=r"verdicts\.jsonl:2: 'no-such-item' is not in the QA"):
        import_verdicts(built_copy, verdicts)
    assert not (built_copy / "qa/rejected.txt").exists()
