"""What a training run learns from, built without torch: a data set's `train` split as chat rows
in the export's `hf-chat` layout (the prompt `eval` and the engines use), the store's accepted
episodes in the `hf-agent` layout, and the split's blueprints as gym tasks (RFT, GRPO).

The rows go through the export's own layouts (`export.single_call_records`, `gym.export_episodes`)
rather than being read from the data set's `exports/` folder: a data set built before the prompt
changed would otherwise train a model on a prompt it is no longer asked with.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import blueprint_from_dict
from codesearch_core.dataset import export_row, spans_of
from codesearch_core.errors import CodesearchError, InputFileError
from codesearch_core.export import ExportFormat, single_call_records
from codesearch_core.gym import export_episodes
from codesearch_core.models import Blueprint
from codesearch_core.store import Store

CARD: Final = "card.json"
TRAIN_SPLIT: Final = "data/train.jsonl"
#: A data set item whose reference is a plan (several calls): the one-call layout holds none.
PLAN_TOOL: Final = "plan"


@dataclass(frozen=True, slots=True)
class DatasetRef:
    """A built data set: its folder, its card's sha256 (what a run record cites) and name."""

    folder: Path
    card_sha256: str
    name: str


def open_dataset(folder: Path) -> DatasetRef:
    """A folder `codesearch dataset build` wrote; anything else is a clear error."""
    card = folder / CARD
    if not folder.is_dir():
        raise InputFileError(
            f"{folder}: no such data set folder (codesearch dataset build writes one)"
        )
    if not card.is_file() or not (folder / TRAIN_SPLIT).is_file():
        raise InputFileError(
            f"{folder}: not a built data set (no {CARD} or {TRAIN_SPLIT}); "
            "`codesearch dataset build RECIPE --out DIR` writes one"
        )
    raw = card.read_bytes()
    try:
        name = str(json.loads(raw).get("recipe", {}).get("name", "") or folder.name)
    except (json.JSONDecodeError, AttributeError):
        name = folder.name
    return DatasetRef(folder, hashlib.sha256(raw).hexdigest(), name)


def read_split(ref: DatasetRef, split: str = "train") -> list[dict[str, Any]]:
    path = ref.folder / "data" / f"{split}.jsonl"
    items: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputFileError(f"not JSON: {err}", source=str(path), line=number) from None
            if not isinstance(item, dict) or "intent" not in item or "reference" not in item:
                raise InputFileError("not a data set item", source=str(path), line=number)
            items.append(item)
    return items


@dataclass(frozen=True, slots=True)
class Rows:
    """Chat rows (`messages`, `tools`) and what was left out building them, by reason."""

    rows: list[dict[str, Any]]
    left_out: dict[str, int]
    items: int = 0
    episodes: int = 0


def sft_rows(items: Sequence[Mapping[str, Any]]) -> Rows:
    """One `hf-chat` row per one-call item: system and user prompt, the reference call, what the
    tool answered (run on the item's corpus, as the export does) and the summary turn. Plans are
    left out and counted: the layout holds one call per answer."""
    singles = [i for i in items if i.get("tool") != PLAN_TOOL]
    left = {"plan": len(items) - len(singles)} if len(singles) < len(items) else {}
    rows = list(
        single_call_records(
            ExportFormat.HF_CHAT, ((export_row(i), spans_of(i)) for i in singles), with_meta=False
        )
    )
    return Rows(rows, left, items=len(rows))


def episode_rows(store: Store) -> Rows:
    """The store's accepted episodes as `hf-agent` rows, through the agent export (replay check
    included: a row is what the gym answers now); those whose corpus is gone are counted."""
    with tempfile.TemporaryDirectory(prefix="codesearch-train-") as tmp:
        path = Path(tmp) / "hf-agent.jsonl"
        manifest, _ = export_episodes(store, ExportFormat.HF_AGENT, path)
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    gone = int(manifest.counts.get("skipped_corpus_gone", 0))
    return Rows(rows, {"corpus_gone": gone} if gone else {}, episodes=len(rows))


def combine(*parts: Rows) -> Rows:
    left: dict[str, int] = {}
    for part in parts:
        for reason, n in part.left_out.items():
            left[reason] = left.get(reason, 0) + n
    return Rows(
        [r for p in parts for r in p.rows],
        left,
        items=sum(p.items for p in parts),
        episodes=sum(p.episodes for p in parts),
    )


def split_blueprints(items: Sequence[Mapping[str, Any]]) -> list[Blueprint]:
    """The items as blueprints (the gym's tasks for RFT and GRPO), plans included."""
    out: list[Blueprint] = []
    for item in items:
        try:
            out.append(
                blueprint_from_dict(
                    {
                        "id": item["id"],
                        "intent": item["intent"],
                        "corpus": item["corpus"],
                        "language": item["language"],
                        "reference_call": item["reference"],
                        "expected": item["expected"],
                        "tags": list(item.get("tags", ())),
                        "difficulty": item.get("difficulty", "medium"),
                    }
                )
            )
        except (KeyError, CodesearchError) as err:
            raise InputFileError(f"item {item.get('id')!r} is not a blueprint: {err}") from None
    return out


def write_rows(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
