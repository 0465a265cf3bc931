"""The measured error rate of a built data set: a stratified random QA sample, reviewers'
verdicts on it, and the estimated share of correct items with its 95% Wilson interval.

`draw_sample` writes `DIR/qa/sample.jsonl` (deterministic for a seed: strata sorted, each drawn
with one seeded generator); `import_verdicts` reads `{id, verdict}` lines (correct / incorrect)
for sampled items into `DIR/qa/verdicts.jsonl` (a later verdict on an item replaces the earlier),
computes the estimate (`estimate`: statsmodels' `proportion_confint`, method "wilson") overall
and per stratum, writes it into the card, and lists the rejected items in `DIR/qa/rejected.txt`,
which a recipe's `[filters] drop` names so the next build leaves them out.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from codesearch_core.dataset.card import CARD_JSON, CARD_README, card_json_text, card_markdown
from codesearch_core.dataset.items import Item, read_items
from codesearch_core.errors import InputFileError
from codesearch_core.export import write_jsonl_atomic

QA: Final = "qa"
SAMPLE: Final = "sample.jsonl"
VERDICTS: Final = "verdicts.jsonl"
REJECTED: Final = "rejected.txt"
VERDICT_VALUES: Final = {"correct": True, "incorrect": False}
#: What a sample may be stratified by: an item's field, or `tag` (its first category tag).
STRATA_FIELDS: Final = (
    "tag",
    "language",
    "tool",
    "rule",
    "corpus",
    "difficulty",
    "source",
    "split",
)
_NOT_CATEGORY: Final = ("synth:", "lang:", "tool:")


def _items(out: Path) -> list[Item]:
    items = []
    for side in ("train", "eval"):
        path = out / "data" / f"{side}.jsonl"
        if not path.is_file():
            raise InputFileError(f"{out} holds no built data set (no {path}): `codesearch "
                                 "dataset build RECIPE --out DIR` first")  # fmt: skip
        items += [{**i, "split": side} for i in read_items(path)]
    return items


def _field(item: Mapping[str, Any], name: str) -> str:
    if name == "tag":
        tags = [t for t in item["tags"] if not t.startswith(_NOT_CATEGORY)]
        return tags[0] if tags else "none"
    return str(item[name])


def stratum(item: Mapping[str, Any], fields: Sequence[str]) -> str:
    return "/".join(_field(item, f) for f in fields) if fields else "all"


def _allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """`n` draws over strata in proportion to their sizes (largest remainder), at least one per
    stratum while `n` allows, never more than a stratum holds."""
    total = sum(sizes.values())
    n = min(n, total)
    names = sorted(sizes)
    base = {s: min(sizes[s], 1) if n >= len(names) else 0 for s in names}
    left = n - sum(base.values())
    quota = {s: left * sizes[s] / total for s in names}
    take = {s: min(sizes[s], base[s] + int(quota[s])) for s in names}
    order = sorted(names, key=lambda s: (-(quota[s] - int(quota[s])), s))
    while sum(take.values()) < n:
        for s in order:
            if sum(take.values()) >= n:
                break
            if take[s] < sizes[s]:
                take[s] += 1
    return take


def draw_sample(out: Path, n: int, stratify: Sequence[str], seed: int) -> list[Item]:
    """Draw `n` items of the data set in DIR, stratified by `stratify`, into DIR/qa/sample.jsonl."""
    if n < 1:
        raise InputFileError(f"--n must be at least 1, got {n}")
    for name in stratify:
        if name not in STRATA_FIELDS:
            raise InputFileError(f"cannot stratify by {name!r}: one of {', '.join(STRATA_FIELDS)}")
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in sorted(_items(out), key=lambda i: i["id"]):
        groups[stratum(item, stratify)].append(item)
    take = _allocate({s: len(g) for s, g in groups.items()}, n)
    rng = random.Random(seed)
    sample = []
    for name in sorted(groups):
        for item in rng.sample(groups[name], take[name]):
            sample.append({"id": item["id"], "stratum": name, "split": item["split"],
                           "corpus": item["corpus"], "language": item["language"],
                           "intent": item["intent"], "reference": item["reference"],
                           "expected": item["expected"]})  # fmt: skip
    sample.sort(key=lambda s: (s["stratum"], s["id"]))
    write_jsonl_atomic(out / QA / SAMPLE, sample)
    meta = {"n": n, "stratify": list(stratify), "seed": seed, "sampled": len(sample)}
    (out / QA / "sample.json").write_text(json.dumps(meta, sort_keys=True) + "\n")
    return sample


def wilson(correct: int, reviewed: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a share (statsmodels' own computation)."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(correct, reviewed, alpha=0.05, method="wilson")
    return float(low), float(high)


def _figures(correct: int, reviewed: int) -> dict[str, Any]:
    low, high = wilson(correct, reviewed)
    return {"reviewed": reviewed, "correct": correct, "share": round(correct / reviewed, 6),
            "low": round(low, 6), "high": round(high, 6)}  # fmt: skip


def estimate(verdicts: Mapping[str, bool], strata: Mapping[str, str]) -> dict[str, Any]:
    """The share correct with its 95% Wilson interval, overall and per stratum, from verdicts
    (item id -> correct) on sampled items (`strata`: item id -> its stratum)."""
    if not verdicts:
        raise InputFileError("no verdicts: nothing to estimate")
    per: dict[str, list[bool]] = defaultdict(list)
    for item_id, ok in verdicts.items():
        per[strata[item_id]].append(ok)
    return {
        "overall": _figures(sum(verdicts.values()), len(verdicts)),
        "strata": {s: _figures(sum(v), len(v)) for s, v in sorted(per.items())},
    }


def _read_verdicts(path: Path, sampled: set[str]) -> dict[str, bool]:
    verdicts: dict[str, bool] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise InputFileError(f"cannot read verdicts {path}: {err.strerror or err}") from err
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item_id, verdict = str(row["id"]), row["verdict"]
        except (ValueError, KeyError, TypeError) as err:
            raise InputFileError(f"{path}:{number}: expected {{\"id\": ..., \"verdict\": "
                                 f"\"correct\" | \"incorrect\"}}: {err}") from err  # fmt: skip
        if verdict not in VERDICT_VALUES:
            raise InputFileError(f"{path}:{number}: verdict {verdict!r}: correct or incorrect")
        if item_id not in sampled:
            raise InputFileError(f"{path}:{number}: {item_id!r} is not in the QA sample")
        verdicts[item_id] = VERDICT_VALUES[verdict]
    return verdicts


def import_verdicts(out: Path, path: Path) -> dict[str, Any]:
    """Add the verdicts of `path` to DIR's, estimate, and write the card and the rejected list."""
    qa = out / QA
    if not (qa / SAMPLE).is_file():
        raise InputFileError(
            f"no QA sample in {out}: `codesearch dataset sample {out} --n N` first"
        )
    sample = read_items(qa / SAMPLE)
    strata = {s["id"]: s["stratum"] for s in sample}
    new = _read_verdicts(path, set(strata))
    known = _read_verdicts(qa / VERDICTS, set(strata)) if (qa / VERDICTS).is_file() else {}
    verdicts = {**known, **new}
    figures = estimate(verdicts, strata)
    meta = json.loads((qa / "sample.json").read_text(encoding="utf-8"))
    qa_card = {**figures, "sampled": len(sample), "stratify": meta["stratify"] or ["all"],
               "seed": meta["seed"]}  # fmt: skip
    rows = [
        {"id": k, "verdict": "correct" if v else "incorrect"} for k, v in sorted(verdicts.items())
    ]
    write_jsonl_atomic(qa / VERDICTS, rows)
    rejected = sorted(k for k, v in verdicts.items() if not v)
    _write_text(qa / REJECTED, "".join(f"{r}\n" for r in rejected))
    card = json.loads((out / CARD_JSON).read_text(encoding="utf-8"))
    card["qa"] = qa_card
    _write_text(out / CARD_JSON, card_json_text(card))
    _write_text(out / CARD_README, card_markdown(card))
    return qa_card


def render_card(out: Path) -> str:
    """The card of the data set in DIR, rendered again from its card.json (QA included)."""
    path = out / CARD_JSON
    if not path.is_file():
        raise InputFileError(f"{out} has no {CARD_JSON}: `codesearch dataset build` first")
    return card_markdown(json.loads(path.read_text(encoding="utf-8")))


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
