"""A data set's train split as SFT rows (the export's `hf-chat` layout) and as gym tasks."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from codesearch_core.errors import InputFileError
from codesearch_core.export.formats import prompt_messages
from codesearch_core.train import combine, open_dataset, read_split, sft_rows, split_blueprints
from codesearch_core.train.data import Rows


def test_the_train_split_becomes_hf_chat_rows_with_the_exports_prompt(small_dataset: Path) -> None:
    ref = open_dataset(small_dataset)
    assert ref.card_sha256 == hashlib.sha256((small_dataset / "card.json").read_bytes()).hexdigest()
    items = read_split(ref, "train")
    assert items and {i["corpus"] for i in items} == {"webshop"}  # the recipe's train side
    built = sft_rows(items)
    singles = [i for i in items if i["tool"] != "plan"]
    assert built.items == len(built.rows) == len(singles)
    assert built.left_out == (
        {"plan": len(items) - len(singles)} if len(singles) < len(items) else {}
    )
    for item, row in zip(singles, built.rows, strict=True):
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant", "tool", "assistant"]
        # The same prompt the export layouts (and so `eval`) give a model: one definition.
        assert row["messages"][:2] == prompt_messages(item["intent"])
        (call,) = row["messages"][2]["tool_calls"]
        assert call["function"]["name"] == item["reference"]["name"]
        assert call["function"]["arguments"] == item["reference"]["arguments"]
        assert {t["function"]["name"] for t in row["tools"]} == {
            "ripgrep_search",
            "ast_grep_search",
        }


def test_the_split_as_blueprints_keeps_ids_calls_and_spans(small_dataset: Path) -> None:
    items = read_split(open_dataset(small_dataset), "train")
    blueprints = split_blueprints(items)
    assert [b.id for b in blueprints] == [i["id"] for i in items]
    for item, bp in zip(items, blueprints, strict=True):
        assert bp.reference_dict() == item["reference"]
        assert [s.to_dict() for s in sorted(bp.expected)] == item["expected"]


def test_combine_adds_rows_and_left_out_counts() -> None:
    a = Rows([{"messages": []}], {"plan": 2}, items=1)
    b = Rows([{"messages": []}, {"messages": []}], {"plan": 1, "corpus_gone": 3}, episodes=2)
    both = combine(a, b)
    assert len(both.rows) == 3 and both.items == 1 and both.episodes == 2
    assert both.left_out == {"plan": 3, "corpus_gone": 3}


def test_a_folder_that_is_not_a_built_data_set_is_a_clear_error(
    small_dataset: Path, tmp_path: Path
) -> None:
    with pytest.raises(InputFileError, match="no such data set folder"):
        open_dataset(tmp_path / "nowhere")
    (tmp_path / "half").mkdir()
    with pytest.raises(InputFileError, match="not a built data set"):
        open_dataset(tmp_path / "half")
    broken = Path(shutil.copytree(small_dataset, tmp_path / "broken"))
    with (broken / "data" / "train.jsonl").open("a") as fh:
        fh.write("{not json\n")
    lines = len((broken / "data" / "train.jsonl").read_text().splitlines())
    with pytest.raises(InputFileError, match=rf"train.jsonl:{lines}: not JSON"):
        read_split(open_dataset(broken))
    (broken / "data" / "train.jsonl").write_text(json.dumps({"id": "x"}) + "\n")
    with pytest.raises(InputFileError, match="not a data set item"):
        read_split(open_dataset(broken))
