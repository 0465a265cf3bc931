"""Which verified items a data set keeps: the recipe's filters, de-duplication and mix caps.

Every decision is a pure function of the items and the recipe, taken in a fixed order (seeds
first: they are hand-checked; then by id), so the same inputs keep the same items. What is left
out is counted by reason for the card.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from codesearch_core.dataset.items import Item
from codesearch_core.dataset.recipe import Filters, Mix
from codesearch_core.errors import InputFileError
from codesearch_core.models import sha256_hex
from codesearch_core.synthesis import IntentIndex, normalize_intent

RIPGREP = "ripgrep_search"


@dataclass(slots=True)
class Selection:
    kept: list[Item]
    dropped: Counter[str] = field(default_factory=Counter)


def read_drop_list(lines: Iterable[str]) -> set[str]:
    """Item ids, one a line; blank lines and `#` comments are skipped."""
    return {s for line in lines if (s := line.split("#", 1)[0].strip())}


def _order(item: Item) -> tuple[int, str]:
    return (0 if item["source"] == "seed" else 1, item["id"])


def rules_too_wrong(filters: Filters) -> frozenset[str]:
    """The rules QA found too often wrong: those whose error's 95% upper bound in the recipe's
    `rule_errors` file (a QA card's `qa/rule_errors.json`) is above `max_rule_error`. A rule QA
    has not reviewed is not judged; a file not there yet is no judgement (a first build)."""
    path = filters.rule_errors
    if path is None or not path.is_file():
        return frozenset()
    try:
        rates = json.loads(path.read_text(encoding="utf-8"))
        return frozenset(
            rule for rule, r in rates.items()
            if rule != "seed" and float(r["high"]) > filters.max_rule_error
        )  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise InputFileError(f"{path}: not a QA rule_errors.json ({{rule: {{high, ...}}}}): "
                             f"{err}") from err  # fmt: skip


def select(
    items: Sequence[Item],
    filters: Filters,
    mix: Mix,
    drop: set[str],
    seed: int,
    too_wrong: frozenset[str] = frozenset(),
) -> Selection:
    """The filters, then de-duplication, then the mix caps (`cap_mix`). `too_wrong`: the rules QA
    found too often wrong (`rules_too_wrong`), left out whole."""
    out = Selection([])
    levels = {d.value for d in filters.difficulty}
    seen_findings: set[tuple[str, str]] = set()
    intents = IntentIndex()
    for item in sorted(items, key=_order):
        verified = item.get("verified") or {}
        if item["id"] in drop:
            out.dropped["qa_rejected"] += 1
        elif item["rule"] in too_wrong:
            out.dropped["qa_rule_error"] += 1
        elif not verified.get("ok"):
            out.dropped["run_failed"] += 1
        elif float(verified.get("reward", -1.0)) < filters.min_reward:
            out.dropped["below_min_reward"] += 1
        elif item["difficulty"] not in levels:
            out.dropped["difficulty"] += 1
        elif filters.dedup and (key := _findings_key(item)) in seen_findings:
            out.dropped["same_findings"] += 1
        elif filters.dedup and intents.close(norm := normalize_intent(item["intent"])):
            out.dropped["close_intent"] += 1
        else:
            if filters.dedup:
                seen_findings.add(key)
                intents.add(norm)
            out.kept.append(item)
    kept, capped = cap_mix(out.kept, mix, seed)
    out.kept = sorted(kept, key=lambda i: i["id"])
    out.dropped.update(capped)
    return out


def _findings_key(item: Item) -> tuple[str, str]:
    """Two items of one corpus that expect the same spans teach one answer to two requests: the
    near-duplicates synthesis drops within a run, here across runs, seeds and rules."""
    spans = ";".join(f"{s['path']}:{s['start_line']}-{s['end_line']}" for s in item["expected"])
    # An empty answer is a lesson in itself whatever was asked: only its intent can repeat.
    return (item["corpus"], spans or f"empty:{item['id']}")


def _rank(seed: int, item: Item) -> str:
    return sha256_hex(f"{seed}\n{item['id']}")


def cap_mix(items: Sequence[Item], mix: Mix, seed: int) -> tuple[list[Item], Counter[str]]:
    """Trim the items until no rule and no tool is above its share and ripgrep tasks are at least
    theirs. Each trim drops the lowest-ranked items (a seeded hash of the id) of the largest group
    over its cap, then the shares are measured again, until none is over: a fixed point, since
    every pass only removes. Seeds are never trimmed for a rule cap (their rule is "seed": many
    hand-written tasks are no template repeated)."""
    kept = sorted(items, key=lambda i: _rank(seed, i))
    dropped: Counter[str] = Counter()
    while True:
        total = len(kept)
        if total == 0:
            return kept, dropped
        over = _over_cap(kept, "rule", mix.max_rule_share, skip={"seed"})
        reason = "mix_rule_cap"
        if over is None:
            over = _over_cap(kept, "tool", mix.max_tool_share, skip=set())
            reason = "mix_tool_cap"
        if over is None:
            ripgrep = sum(1 for i in kept if i["tool"] == RIPGREP)
            if mix.min_ripgrep_share > 0 and ripgrep < mix.min_ripgrep_share * total:
                # Other tools' items the ripgrep ones can carry at the share asked for.
                allowed = int(ripgrep / mix.min_ripgrep_share) - ripgrep if ripgrep else 0
                over = ("tool", _largest_other(kept), total - ripgrep - allowed)
                reason = "mix_min_ripgrep"
        if over is None:
            return kept, dropped
        key, value, excess = over
        kept, n = _drop_last(kept, key, value, excess)
        dropped[reason] += n


def _over_cap(
    kept: list[Item], key: str, share: float, skip: set[str]
) -> tuple[str, str, int] | None:
    if share >= 1.0:
        return None
    counts = Counter(i[key] for i in kept if i[key] not in skip)
    for value, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        allowed = int(share * len(kept))
        if n > allowed:
            # One at a time shrinks the total too; the excess over the cap is trimmed at least.
            return key, value, max(1, n - allowed)
    return None


def _largest_other(kept: list[Item]) -> str:
    counts = Counter(i["tool"] for i in kept if i["tool"] != RIPGREP)
    return str(min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0])


def _drop_last(kept: list[Item], key: str, value: str, n: int) -> tuple[list[Item], int]:
    """Drop the `n` lowest-ranked items whose `key` is `value` (the list is in rank order)."""
    positions = [p for p, i in enumerate(kept) if i[key] == value][-n:]
    gone = set(positions)
    return [i for p, i in enumerate(kept) if p not in gone], len(gone)
