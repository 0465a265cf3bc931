"""What a data set keeps: the mix caps and de-duplication, on hand-made items."""

from __future__ import annotations

from collections import Counter
from typing import Any

from codesearch_core.dataset.recipe import Filters, Mix
from codesearch_core.dataset.select import cap_mix, select


def _item(
    n: int, rule: str, tool: str, *, intent: str = "", source: str = "synthesis"
) -> dict[str, Any]:
    return {
        "id": f"{rule}-{n:03d}", "source": source, "corpus": "c", "language": "python",
        "intent": intent or f"find {rule} number {n} with some {n * 7919} words",
        "tool": tool, "rule": rule, "difficulty": "easy", "tags": [],
        "reference": {}, "expected": [{"path": f"{rule}.py", "start_line": n, "end_line": n}],
        "verified": {"ok": True, "reward": 1.0, "span_f1": 1.0, "error": None},
    }  # fmt: skip


ITEMS = (
    [_item(i, "call", "ast_grep_search") for i in range(60)]
    + [_item(i, "new", "ast_grep_search") for i in range(20)]
    + [_item(i, "literal", "ripgrep_search") for i in range(10)]
    + [_item(i, "todo", "ripgrep_search") for i in range(10)]
)


def _shares(items: list[dict[str, Any]], key: str) -> dict[str, float]:
    counts = Counter(i[key] for i in items)
    return {k: n / len(items) for k, n in counts.items()}


def test_no_rule_is_above_its_cap_after_the_mix() -> None:
    kept, dropped = cap_mix(ITEMS, Mix(max_rule_share=0.4), seed=0)
    assert max(_shares(kept, "rule").values()) <= 0.4
    assert dropped["mix_rule_cap"] == len(ITEMS) - len(kept) > 0


def test_ripgrep_tasks_reach_their_minimum_share() -> None:
    kept, dropped = cap_mix(ITEMS, Mix(min_ripgrep_share=0.5), seed=0)
    assert _shares(kept, "tool")["ripgrep_search"] >= 0.5
    assert sum(1 for i in kept if i["tool"] == "ripgrep_search") == 20  # none of them dropped
    assert dropped["mix_min_ripgrep"] == len(ITEMS) - len(kept)


def test_the_mix_is_the_same_for_a_seed_and_differs_for_another() -> None:
    mix = Mix(max_rule_share=0.4, max_tool_share=0.7)
    first, _ = cap_mix(ITEMS, mix, seed=1)
    assert cap_mix(list(reversed(ITEMS)), mix, seed=1)[0] == first
    assert {i["id"] for i in cap_mix(ITEMS, mix, seed=2)[0]} != {i["id"] for i in first}


def test_near_duplicate_intents_and_same_findings_are_dropped_seeds_first() -> None:
    seed = _item(1, "seed", "ripgrep_search", intent="Find every TODO comment", source="seed")
    close = _item(2, "todo", "ripgrep_search", intent="Find every TODO comment.")
    same = {**_item(3, "x", "ripgrep_search"), "expected": seed["expected"], "rule": "seed"}
    chosen = select([close, same, seed], Filters(), Mix(), drop=set(), seed=0)
    assert [i["id"] for i in chosen.kept] == [seed["id"]]
    assert chosen.dropped == Counter({"close_intent": 1, "same_findings": 1})


def test_the_drop_list_and_the_minimum_reward_leave_items_out() -> None:
    low = {**_item(1, "call", "ast_grep_search"), "verified": {"ok": True, "reward": 0.5}}
    rejected = _item(2, "call", "ast_grep_search")
    chosen = select([low, rejected], Filters(min_reward=0.9), Mix(), drop={rejected["id"]}, seed=0)
    assert chosen.kept == [] and chosen.dropped == Counter(
        {"below_min_reward": 1, "qa_rejected": 1}
    )
