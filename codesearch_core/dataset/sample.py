"""The measured error rate of a built data set: a stratified random QA sample, reviewers'
verdicts on it, and the estimated share of correct items with its 95% Wilson interval.

`draw_sample` writes `DIR/qa/sample.jsonl` (deterministic for a seed: strata sorted, each drawn
with one seeded generator; each line the item as built, with its split and stratum);
`queue_sample` puts it in the store's QA queue (the Review page), where reviewers accept (correct)
or reject (incorrect) each item. Verdicts come from two sources: `{id, verdict}` files
(`import_verdicts`, kept in `DIR/qa/verdicts.jsonl`; a later verdict on an item replaces the
earlier) and the queue's settled decisions (read afresh each time, so an undo there is undone
here too; the queue's verdict wins over a file's on the same item). `write_estimate`, the one
code path for both, computes the estimate (`estimate`: statsmodels' `proportion_confint`, method
"wilson") overall and per stratum, writes it into the card, and lists the rejected items in
`DIR/qa/rejected.txt`, which a recipe's `[filters] drop` names so the next build leaves them out.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from codesearch_core.dataset.card import CARD_JSON, CARD_README, card_json_text, card_markdown
from codesearch_core.dataset.items import Item, read_items
from codesearch_core.errors import InputFileError
from codesearch_core.export import write_jsonl_atomic
from codesearch_core.store import QADataset, QAImport, QAItem, Store, settled_verdicts

QA: Final = "qa"
SAMPLE: Final = "sample.jsonl"
VERDICTS: Final = "verdicts.jsonl"
REJECTED: Final = "rejected.txt"
RULE_ERRORS: Final = "rule_errors.json"
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


def _data_files(out: Path) -> dict[str, Path]:
    """The data set's files by split; a clear error for a folder that holds no built data set."""
    files = {side: out / "data" / f"{side}.jsonl" for side in ("train", "eval")}
    for path in files.values():
        if not path.is_file():
            raise InputFileError(f"{out} holds no built data set (no {path}): `codesearch "
                                 "dataset build RECIPE --out DIR` first")  # fmt: skip
    return files


def _items(out: Path) -> list[Item]:
    return [
        {**i, "split": side} for side, path in _data_files(out).items() for i in read_items(path)
    ]


def _field(item: Mapping[str, Any], name: str) -> str:
    if name == "tag":
        tags = [t for t in item["tags"] if not t.startswith(_NOT_CATEGORY)]
        return tags[0] if tags else "none"
    return str(item[name])


def stratum(item: Mapping[str, Any], fields: Sequence[str]) -> str:
    return "/".join(_field(item, f) for f in fields) if fields else "all"


def _allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """`n` draws over strata in proportion to their sizes (largest remainder), never more than a
    stratum holds. No stratum gets a draw for being there: a floor of one per stratum spent most
    of a 100-item sample on small strata (seeds, 7% of the data, took half of it) and gave the
    largest stratum 7 draws, so the sample no longer looked like the data set."""
    total = sum(sizes.values())
    n = min(n, total)
    names = sorted(sizes)
    quota = {s: n * sizes[s] / total for s in names}
    take = {s: min(sizes[s], int(quota[s])) for s in names}
    order = sorted(names, key=lambda s: (-(quota[s] - int(quota[s])), -sizes[s], s))
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
            sample.append({**item, "stratum": name})
    sample.sort(key=lambda s: (s["stratum"], s["id"]))
    write_jsonl_atomic(out / QA / SAMPLE, sample)
    # The strata's sizes in the data set: the estimate weights each stratum by its share.
    sizes = {name: len(g) for name, g in sorted(groups.items())}
    meta = {"n": n, "stratify": list(stratify), "seed": seed, "sampled": len(sample),
            "sizes": sizes}  # fmt: skip
    (out / QA / "sample.json").write_text(json.dumps(meta, sort_keys=True) + "\n")
    return sample


def wilson(correct: float, reviewed: float) -> tuple[float, float]:
    """The 95% Wilson score interval of a share (statsmodels' own computation)."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(correct, reviewed, alpha=0.05, method="wilson")
    return float(low), float(high)


def _figures(correct: int, reviewed: int) -> dict[str, Any]:
    low, high = wilson(correct, reviewed)
    return {"reviewed": reviewed, "correct": correct, "share": round(correct / reviewed, 6),
            "low": round(low, 6), "high": round(high, 6)}  # fmt: skip


def weighted(per: Mapping[str, Sequence[bool]], sizes: Mapping[str, int]) -> dict[str, Any]:
    """The share correct in the data set, each stratum's share weighted by its size there, with
    a 95% interval: Wilson's at the weighted share and the effective sample size (the size a
    simple random sample would need for the same variance; Kish), the stratified variance
    sum(W_h^2 p_h (1 - p_h) / n_h (1 - n_h / N_h)). Strata with no verdict yet are left out and
    the weights of the others scaled up (`covered` says how much of the data set was judged).
    With no error anywhere the variance is 0 and the effective size is the number reviewed."""
    judged = {h: v for h, v in per.items() if v and sizes.get(h, 0) > 0}
    population = sum(sizes.values())
    covered = sum(sizes[h] for h in judged)
    reviewed = sum(len(v) for v in judged.values())
    share = sum(sizes[h] / covered * (sum(v) / len(v)) for h, v in judged.items())
    variance = 0.0
    for h, v in judged.items():
        n_h, big_n = len(v), sizes[h]
        p_h = sum(v) / n_h
        variance += (big_n / covered) ** 2 * p_h * (1 - p_h) / n_h * max(0.0, 1 - n_h / big_n)
    effective = share * (1 - share) / variance if variance > 0 else float(reviewed)
    effective = min(effective, float(population))
    low, high = wilson(share * effective, effective)
    return {"reviewed": reviewed, "correct": sum(sum(v) for v in judged.values()),
            "share": round(share, 6), "low": round(low, 6), "high": round(high, 6),
            "effective_n": round(effective, 1),
            "covered": round(covered / population, 6) if population else 0.0}  # fmt: skip


def estimate(
    verdicts: Mapping[str, bool],
    strata: Mapping[str, str],
    sizes: Mapping[str, int] | None = None,
    rules: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The share correct with its 95% interval, overall and per stratum, from verdicts (item id ->
    correct) on sampled items (`strata`: item id -> its stratum). With the strata's sizes in the
    data set (`sizes`) the overall share is weighted by them (`weighted`); without, it is the
    sample's share (Wilson). `rules` (item id -> its rule) adds each rule's error rate."""
    if not verdicts:
        raise InputFileError("no verdicts: nothing to estimate")
    per: dict[str, list[bool]] = defaultdict(list)
    for item_id, ok in verdicts.items():
        per[strata[item_id]].append(ok)
    unweighted = _figures(sum(verdicts.values()), len(verdicts))
    # A sample drawn before sizes were kept has none: its share is the sample's.
    by_size = sizes is not None and any(sizes.get(h, 0) > 0 for h in per)
    out: dict[str, Any] = {
        "overall": weighted(per, sizes) if sizes is not None and by_size else unweighted,
        "weighting": "stratum size in the data set" if by_size else "none (sample share)",
        "unweighted": unweighted,
        "strata": {s: _figures(sum(v), len(v)) for s, v in sorted(per.items())},
    }
    if rules:
        by_rule: dict[str, list[bool]] = defaultdict(list)
        for item_id, ok in verdicts.items():
            by_rule[rules.get(item_id, "?")].append(ok)
        out["rules"] = {r: _error_figures(v) for r, v in sorted(by_rule.items())}
    return out


def _error_figures(verdicts: Sequence[bool]) -> dict[str, Any]:
    """A rule's error rate: wrong of reviewed, with the 95% Wilson interval of the error."""
    wrong = sum(1 for v in verdicts if not v)
    low, high = wilson(wrong, len(verdicts))
    return {"reviewed": len(verdicts), "wrong": wrong, "error": round(wrong / len(verdicts), 6),
            "low": round(low, 6), "high": round(high, 6)}  # fmt: skip


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


def dataset_of(out: Path) -> QADataset:
    """The identity of the data set built in DIR: an id hashed from its data files (the items a
    verdict is about: a rebuild that changes them is another data set), its name, the folder
    (resolved) and its card's recipe sha256."""
    digest = hashlib.sha256()
    for path in _data_files(out).values():
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    card = _card(out)
    return QADataset(
        dataset_id=digest.hexdigest()[:16],
        name=str(card["name"]),
        folder=str(out.resolve()),
        recipe_sha256=str(card["recipe"]["sha256"]),
    )


def queue_sample(out: Path, sample: Sequence[Item], store: Store) -> QAImport:
    """Put a sample `draw_sample` drew from DIR in the store's QA queue (see `store.qa.import_sample`
    for what happens to items queued before)."""
    dataset = dataset_of(out)
    return store.qa.import_sample(dataset, [(s["stratum"], s) for s in sample])


def _sample_rows(out: Path) -> list[Item]:
    if not (out / QA / SAMPLE).is_file():
        raise InputFileError(
            f"no QA sample in {out}: `codesearch dataset sample {out} --n N` first"
        )
    return read_items(out / QA / SAMPLE)


def import_verdicts(out: Path, path: Path, store: Store | None = None) -> dict[str, Any]:
    """Add the verdicts of `path` to DIR's, then `write_estimate` (with the queue's, when a store
    is given). Nothing is written when a line is wrong."""
    queued = _queued(out, store)
    known_ids = {s["id"] for s in _sample_rows(out)} | {q.item_id for q in queued}
    new = _read_verdicts(path, known_ids)
    if not new:
        raise InputFileError(f"no verdicts in {path}: nothing to estimate")
    merged = {**_file_verdicts(out, known_ids), **new}
    rows = [
        {"id": k, "verdict": "correct" if v else "incorrect"} for k, v in sorted(merged.items())
    ]
    write_jsonl_atomic(out / QA / VERDICTS, rows)
    qa_card = write_estimate(out, store, queued=queued)
    assert qa_card is not None  # the file's verdicts are there
    return qa_card


def _queued(out: Path, store: Store | None) -> list[QAItem]:
    return [] if store is None else store.qa.items(dataset_of(out).dataset_id)


def _file_verdicts(out: Path, known_ids: set[str]) -> dict[str, bool]:
    path = out / QA / VERDICTS
    return _read_verdicts(path, known_ids) if path.is_file() else {}


def _queue_figures(queue: Sequence[QAItem]) -> dict[str, Any]:
    """Where the QA queue stands: settled items count, open ones and conflicts do not (yet)."""
    states = Counter(q.decision for q in queue)
    return {"dataset": queue[0].dataset.dataset_id, "settled": states["accept"] + states["reject"],
            "open": states[None], "conflict": states["conflict"]}  # fmt: skip


def write_estimate(
    out: Path, store: Store | None, *, queued: Sequence[QAItem] | None = None
) -> dict[str, Any] | None:
    """The card's QA section from every verdict on DIR's sample: those imported from files and the
    QA queue's settled decisions in `store` (accepted: correct, rejected: incorrect; open items
    and conflicts are not counted). Writes it into card.json and README.md with the rejected ids in
    qa/rejected.txt, and returns it; None (and no QA section) while there is no verdict yet."""
    queue = list(_queued(out, store) if queued is None else queued)
    sample = read_items(out / QA / SAMPLE) if (out / QA / SAMPLE).is_file() else []
    if not sample and not queue:
        return None  # never sampled: the card says how to begin
    strata = {s["id"]: s["stratum"] for s in sample} | {q.item_id: q.stratum for q in queue}
    verdicts = {**_file_verdicts(out, set(strata)), **settled_verdicts(queue)}
    card = _card(out)
    qa_card = None
    if verdicts:
        meta_path = out / QA / "sample.json"
        # No sample.json: the queue holds a sample drawn from another folder of the same data.
        meta: dict[str, Any] = (json.loads(meta_path.read_text(encoding="utf-8"))
                                if meta_path.is_file()
                                else {"stratify": ["as queued"], "seed": None})  # fmt: skip
        rules = {s["id"]: s["rule"] for s in sample} | {q.item_id: str(q.item.get("rule", "?"))
                                                         for q in queue}  # fmt: skip
        qa_card = {**estimate(verdicts, strata, meta.get("sizes"), rules), "sampled": len(strata),
                   "stratify": meta["stratify"] or ["all"], "seed": meta["seed"]}  # fmt: skip
        if queue:
            qa_card["queue"] = _queue_figures(queue)
        card["qa"] = qa_card
    elif card.pop("qa", None) is None:
        return None  # nothing reviewed, and the card says so already
    rejected = sorted(k for k, v in verdicts.items() if not v)
    _write_text(out / QA / REJECTED, "".join(f"{r}\n" for r in rejected))
    if qa_card is not None:
        # What a recipe's `[filters] rule_errors` names: the next build leaves out the rules
        # whose error's upper bound is above its `max_rule_error`.
        _write_text(out / QA / RULE_ERRORS, json.dumps(qa_card.get("rules", {}), indent=1,
                                                       sort_keys=True) + "\n")  # fmt: skip
    _write_text(out / CARD_JSON, card_json_text(card))
    _write_text(out / CARD_README, card_markdown(card))
    return qa_card


def _card(out: Path) -> dict[str, Any]:
    path = out / CARD_JSON
    if not path.is_file():
        raise InputFileError(f"{out} has no {CARD_JSON}: `codesearch dataset build` first")
    card: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return card


def render_card(out: Path) -> str:
    """The card of the data set in DIR, rendered again from its card.json (QA included)."""
    return card_markdown(_card(out))


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
