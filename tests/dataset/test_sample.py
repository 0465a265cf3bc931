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
        # Largest remainder, no floor of one per stratum: less than one off its share.
        share = n * size / len(items)
        assert abs(drawn[name] - share) < 1, (name, drawn[name], share)


def test_a_small_stratum_gets_no_draw_for_being_there(built_copy: Path) -> None:
    # Half the sample went to small strata when each had a draw of its own (issue 36): here a
    # sample smaller than the number of strata still follows the sizes.
    sizes = Counter(stratum(i, ["rule"]) for i in _items(built_copy))
    largest = max(sizes.values())
    sample = draw_sample(built_copy, 3, ["rule"], seed=0)
    drawn = Counter(s["stratum"] for s in sample)
    assert len(sample) == 3 and drawn.most_common(1)[0][1] >= round(
        3 * largest / sum(sizes.values())
    )
    meta = json.loads((built_copy / "qa/sample.json").read_text())
    assert meta["sizes"] == dict(sorted(sizes.items()))


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
    low, _high = proportion_confint(8, 10, alpha=0.05, method="wilson")
    assert qa["unweighted"]["low"] == pytest.approx(low, abs=1e-6)
    o = qa["overall"]  # weighted by the strata's sizes in the data set
    text = render_card(built_copy)
    assert f"{100 * (1 - o['high']):.1f}% to {100 * (1 - o['low']):.1f}%" in text
    assert "From 10 reviewed" in text and "weighted by its share of the data set" in text
    assert text == (built_copy / "README.md").read_text()


def test_a_verdict_on_an_item_not_sampled_is_an_error_naming_the_line(built_copy: Path) -> None:
    draw_sample(built_copy, 5, ["language"], seed=0)
    verdicts = built_copy / "verdicts.jsonl"
    verdicts.write_text('\n{"id": "no-such-item", "verdict": "correct"}\n')
    with pytest.raises(InputFileError, match=r"verdicts\.jsonl:2: 'no-such-item' is not in the QA"):
        import_verdicts(built_copy, verdicts)
    assert not (built_copy / "qa/rejected.txt").exists()


def test_the_weighted_estimate_follows_the_strata_sizes_not_the_sample() -> None:
    # 10 seeds (all right) and 10 synthesized items (5 wrong) reviewed; the data set holds 100
    # seeds and 900 synthesized items: it is about 45% wrong, not the sample's 25%.
    strata = {f"s{i}": "seed" for i in range(10)} | {f"t{i}": "synthesis" for i in range(10)}
    verdicts = {k: not (k.startswith("t") and int(k[1:]) < 5) for k in strata}
    figures = estimate(verdicts, strata, {"seed": 100, "synthesis": 900})
    o = figures["overall"]
    assert o["share"] == pytest.approx(0.1 * 1.0 + 0.9 * 0.5)
    assert figures["unweighted"]["share"] == 0.75
    # Stratified variance: 0.9^2 * 0.25 / 10 * (1 - 10/900); Wilson at the effective size.
    variance = 0.81 * 0.25 / 10 * (1 - 10 / 900)
    effective = o["share"] * (1 - o["share"]) / variance
    low, high = proportion_confint(o["share"] * effective, effective, method="wilson")
    assert (o["low"], o["high"]) == (pytest.approx(low, abs=1e-6), pytest.approx(high, abs=1e-6))
    assert o["effective_n"] == pytest.approx(effective, abs=0.05) and o["covered"] == 1.0


def test_rule_error_rates_and_the_rules_a_next_build_leaves_out(tmp_path: Path) -> None:
    from codesearch_core.dataset.recipe import Filters
    from codesearch_core.dataset.select import rules_too_wrong

    strata = {f"c{i}": "synthesis/call" for i in range(20)} | {
        f"w{i}": "synthesis/word" for i in range(20)
    }
    verdicts = {k: not (k.startswith("w") and int(k[1:]) < 6) for k in strata}
    rules = {k: strata[k].split("/")[1] for k in strata}
    figures = estimate(verdicts, strata, {"synthesis/call": 50, "synthesis/word": 50}, rules)
    assert figures["rules"]["word"]["wrong"] == 6 and figures["rules"]["call"]["wrong"] == 0
    _low, high = proportion_confint(6, 20, method="wilson")
    assert figures["rules"]["word"]["high"] == pytest.approx(high, abs=1e-6)
    path = tmp_path / "rule_errors.json"
    path.write_text(json.dumps(figures["rules"]))
    # call: 0 of 20 wrong, upper bound 16.1%; word: 6 of 20, upper bound 52.4%.
    assert rules_too_wrong(Filters(rule_errors=path, max_rule_error=0.2)) == {"word"}
    assert rules_too_wrong(Filters(rule_errors=path, max_rule_error=0.1)) == {"word", "call"}
    assert rules_too_wrong(Filters(rule_errors=tmp_path / "none.json")) == frozenset()
    path.write_text("[1, 2]")
    with pytest.raises(InputFileError, match=r"not a QA rule_errors\.json"):
        rules_too_wrong(Filters(rule_errors=path, max_rule_error=0.2))
