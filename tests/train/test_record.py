"""The run record and the sha256 of a model folder."""

from __future__ import annotations

from pathlib import Path

from codesearch_core.train import RunRecord, folder_sha256, read_record, record_path, write_record


def _folder(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "config.json").write_text('{"a": 1}')
    (root / "sub" / "weights.bin").write_bytes(bytes(range(256)) * 10)
    return root


def test_the_folder_hash_follows_names_and_bytes_not_the_place(tmp_path: Path) -> None:
    a, b = _folder(tmp_path / "a"), _folder(tmp_path / "elsewhere" / "b")
    assert folder_sha256(a) == folder_sha256(b)
    (b / "sub" / "weights.bin").write_bytes(bytes(range(256)) * 10 + b"\0")
    assert folder_sha256(a) != folder_sha256(b)
    c = _folder(tmp_path / "c")
    (c / "config.json").rename(c / "config2.json")
    assert folder_sha256(a) != folder_sha256(c)


def test_the_record_lies_beside_the_output_and_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "sft-1"
    assert record_path(out) == tmp_path / "runs" / "sft-1.run.json"
    out.parent.mkdir()
    record = RunRecord(mode="sft", model="/m", dataset="/d", dataset_card_sha256="ab" * 32,
                       settings={"max_steps": 2}, out=str(out), status="done",
                       output_sha256="cd" * 32, context={"left_out": 1})  # fmt: skip
    write_record(record_path(out), record)
    assert read_record(record_path(out)) == record
    assert [p.name for p in out.parent.iterdir()] == ["sft-1.run.json"]  # no temp file left
