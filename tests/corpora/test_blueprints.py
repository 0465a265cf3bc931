"""Blueprint JSONL: validation that names the field, line-numbered errors, atomic writes."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from codesearch_core import config
from codesearch_core.corpora.blueprints import (
    blueprint_from_dict,
    blueprint_to_dict,
    check_expected_files,
    dumps_blueprints_jsonl,
    load_seed_blueprints,
    read_blueprints_jsonl,
    write_blueprints_jsonl,
)
from codesearch_core.errors import InputFileError, ToolCallError
from codesearch_core.models import Blueprint, Difficulty, Span, Split, ToolName


def bp_dict(**overrides: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": "demo-1",
        "intent": "Find calls to café() in Python",
        "corpus": "telemetry",
        "language": "python",
        "reference_call": {
            "name": "ast_grep_search",
            "arguments": {"pattern": "café($$$ARGS)", "language": "python"},
        },
        "expected": [{"path": "tools/sites.py", "start_line": 26, "end_line": 26}],
        "tags": ["adversarial:unicode"],
        "difficulty": "medium",
        "notes": "accented identifier",
    }
    d.update(overrides)
    return d


def line(**overrides: Any) -> str:
    return json.dumps(bp_dict(**overrides), ensure_ascii=False)


# ----------------------------------------------------------------------------- one blueprint


def test_a_valid_dict_becomes_a_blueprint_and_round_trips() -> None:
    bp = blueprint_from_dict(bp_dict())
    assert bp.id == "demo-1"
    assert bp.tool is ToolName.AST_GREP
    assert bp.expected == (Span("tools/sites.py", 26, 26),)
    assert bp.difficulty is Difficulty.MEDIUM
    assert blueprint_to_dict(bp) == bp_dict()
    assert blueprint_from_dict(blueprint_to_dict(bp)) == bp


def test_a_supporting_mark_round_trips_and_an_unmarked_span_is_written_as_before() -> None:
    spans = [
        {"path": "tools/sites.py", "start_line": 26, "end_line": 26},
        {"path": "tools/sites.py", "start_line": 3, "end_line": 4, "supporting": True},
        {"path": "tools/other.py", "start_line": 9, "end_line": 9, "supporting": False},
    ]
    bp = blueprint_from_dict(bp_dict(expected=spans))
    assert [s.supporting for s in bp.expected] == [False, True, False]
    assert bp.essential == (Span("tools/sites.py", 26, 26), Span("tools/other.py", 9, 9))
    # `false` is the default, so it is not written back; the mark is.
    assert blueprint_to_dict(bp)["expected"] == [
        spans[0],
        spans[1],
        {"path": "tools/other.py", "start_line": 9, "end_line": 9},
    ]
    again = blueprint_from_dict(blueprint_to_dict(bp))
    assert [s.supporting for s in again.expected] == [False, True, False]


def test_optional_fields_take_defaults_and_empty_notes_are_left_out() -> None:
    d = bp_dict()
    for key in ("tags", "difficulty", "notes"):
        del d[key]
    bp = blueprint_from_dict(d)
    assert (bp.tags, bp.difficulty, bp.notes) == ((), Difficulty.MEDIUM, "")
    assert "notes" not in blueprint_to_dict(bp)


def test_split_eval_round_trips_and_train_is_left_out_of_the_line() -> None:
    held = blueprint_from_dict(bp_dict(split="eval"))
    assert held.split is Split.EVAL and blueprint_to_dict(held) == bp_dict(split="eval")
    assert blueprint_from_dict(bp_dict()).split is Split.TRAIN
    assert "split" not in blueprint_to_dict(blueprint_from_dict(bp_dict(split="train")))
    with pytest.raises(InputFileError, match="split: 'test' is not one of: train, eval"):
        blueprint_from_dict(bp_dict(split="test"))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"id": "has space"}, "id"),
        ({"id": "../escape"}, "id"),
        ({"id": ""}, "id"),
        ({"corpus": "a/b"}, "corpus"),
        ({"intent": "   "}, "intent"),
        ({"intent": "x" * 2001}, "intent"),
        ({"language": "Python 3"}, "language"),
        ({"difficulty": "brutal"}, "difficulty"),
        ({"tags": "unicode"}, "tags"),
        ({"tags": [""]}, "tags[0]"),
        ({"notes": 3}, "notes"),
        ({"expected": {"path": "a"}}, "expected"),
        (
            {"expected": [{"path": "a.py", "start_line": 0, "end_line": 1}]},
            "expected[0].start_line",
        ),
        ({"expected": [{"path": "a.py", "start_line": 5, "end_line": 4}]}, "expected[0].end_line"),
        (
            {"expected": [{"path": "a.py", "start_line": "1", "end_line": 1}]},
            "expected[0].start_line",
        ),
        (
            {"expected": [{"path": "a.py", "start_line": True, "end_line": 1}]},
            "expected[0].start_line",
        ),
        (
            {"expected": [{"path": "/etc/passwd", "start_line": 1, "end_line": 1}]},
            "expected[0].path",
        ),
        (
            {"expected": [{"path": "src/../x.py", "start_line": 1, "end_line": 1}]},
            "expected[0].path",
        ),
        ({"expected": [{"path": "src\\x.py", "start_line": 1, "end_line": 1}]}, "expected[0].path"),
        ({"expected": [{"path": "a.py", "start_line": 1}]}, "expected[0]"),
        ({"expected": [{"path": "a.py", "start_line": 1, "end_line": 1, "col": 2}]}, "expected[0]"),
        (
            {"expected": [{"path": "a.py", "start_line": 1, "end_line": 1, "supporting": "yes"}]},
            "expected[0].supporting",
        ),
        (
            {"expected": [{"path": "a.py", "start_line": 1, "end_line": 1}] * 2},
            "expected[1]",
        ),
    ],
)
def test_bad_fields_are_named_in_the_error(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(InputFileError) as exc:
        blueprint_from_dict(bp_dict(**overrides))
    assert str(exc.value).startswith(f"{field}: ")


def test_a_bad_reference_call_is_a_tool_call_error_under_reference_call() -> None:
    call = {"name": "ripgrep_search", "arguments": {"pattern": "x", "bogus": 1}}
    with pytest.raises(ToolCallError) as exc:
        blueprint_from_dict(bp_dict(reference_call=call))
    assert exc.value.field == "reference_call.arguments"
    assert "bogus" in str(exc.value)


def test_unknown_and_missing_top_level_fields_are_errors() -> None:
    with pytest.raises(InputFileError, match=r"unknown field.*colour"):
        blueprint_from_dict(bp_dict(colour="red"))
    d = bp_dict()
    del d["expected"]
    with pytest.raises(InputFileError, match=r"missing field.*expected"):
        blueprint_from_dict(d)
    with pytest.raises(InputFileError, match="JSON object"):
        blueprint_from_dict(["not", "an", "object"])


# ----------------------------------------------------------------------------- reading files


def test_reads_from_a_path_a_text_stream_and_plain_lines(tmp_path: Path) -> None:
    text = line(id="a") + "\n\n" + line(id="b") + "\n"
    p = tmp_path / "bp.jsonl"
    p.write_text(text, encoding="utf-8")
    for source in (p, io.StringIO(text), text.splitlines()):
        bps, errors = read_blueprints_jsonl(source)
        assert [b.id for b in bps] == ["a", "b"]
        assert errors == []


def test_first_bad_line_raises_with_its_line_number_and_source(tmp_path: Path) -> None:
    p = tmp_path / "bp.jsonl"
    p.write_text(line(id="a") + "\n" + "\n" + '{"id": "b", ' + "\n" + line(id="c") + "\n")
    with pytest.raises(InputFileError) as exc:
        read_blueprints_jsonl(p)
    assert exc.value.line == 3
    assert str(exc.value).startswith(f"{p}:3: not valid JSON")


def test_skip_bad_keeps_the_good_lines_and_reports_each_bad_one() -> None:
    lines = [
        line(id="a"),
        "[1, 2]",
        line(id="b", difficulty="brutal"),
        line(id="c"),
    ]
    bps, errors = read_blueprints_jsonl(lines, skip_bad=True)
    assert [b.id for b in bps] == ["a", "c"]
    assert [(e.line, e.detail.split(":")[0]) for e in errors] == [
        (2, "a blueprint must be a JSON object, got list"),
        (3, "difficulty"),
    ]


def test_a_duplicate_id_names_both_lines() -> None:
    lines = [line(id="a"), line(id="b"), line(id="a", intent="another intent")]
    with pytest.raises(InputFileError) as exc:
        read_blueprints_jsonl(lines)
    assert exc.value.line == 3
    assert "duplicate id 'a' (first used on line 1)" in str(exc.value)
    bps, errors = read_blueprints_jsonl(lines, skip_bad=True)
    assert [b.id for b in bps] == ["a", "b"]
    assert bps[0].intent == bp_dict()["intent"]
    assert len(errors) == 1


def test_invalid_utf8_is_a_line_error_not_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "bp.jsonl"
    p.write_bytes(line(id="a").encode() + b"\n" + b'{"id": "\xff"}\n')
    bps, errors = read_blueprints_jsonl(p, skip_bad=True)
    assert [b.id for b in bps] == ["a"]
    assert errors[0].line == 2
    assert "UTF-8" in str(errors[0])


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "bp.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + line(id="a").encode() + b"\n")
    assert [b.id for b in read_blueprints_jsonl(p)[0]] == ["a"]


def test_a_missing_file_is_an_input_file_error(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="file not found"):
        read_blueprints_jsonl(tmp_path / "nope.jsonl")
    with pytest.raises(InputFileError, match="directory"):
        read_blueprints_jsonl(tmp_path)


# ----------------------------------------------------------------------------- writing files


def sample_blueprints() -> list[Blueprint]:
    return [blueprint_from_dict(bp_dict(id=f"bp-{i}", intent=f"intent {i}")) for i in range(3)]


def test_write_then_read_gives_back_the_same_blueprints(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "out.jsonl"
    bps = sample_blueprints()
    write_blueprints_jsonl(p, bps)
    assert read_blueprints_jsonl(p)[0] == bps
    assert "café" in p.read_text(encoding="utf-8")  # UTF-8 kept, not \u escapes
    assert p.read_text(encoding="utf-8") == dumps_blueprints_jsonl(bps)


def test_write_replaces_the_file_and_leaves_no_temp_files(tmp_path: Path) -> None:
    p = tmp_path / "out.jsonl"
    p.write_text("old content\n")
    write_blueprints_jsonl(p, sample_blueprints()[:1])
    assert len(read_blueprints_jsonl(p)[0]) == 1
    assert os.listdir(tmp_path) == ["out.jsonl"]


def test_write_refuses_duplicate_ids_and_keeps_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "out.jsonl"
    p.write_text("keep me\n")
    bp = sample_blueprints()[0]
    with pytest.raises(InputFileError, match="duplicate id"):
        write_blueprints_jsonl(p, [bp, bp])
    assert p.read_text() == "keep me\n"


# ----------------------------------------------------------------------------- seeds and corpora


def test_seed_blueprints_load_and_every_expected_file_exists() -> None:
    seeds = load_seed_blueprints()
    assert len(seeds) >= 30
    for bp in seeds:
        assert check_expected_files(bp, config.corpora_dir() / bp.corpus) == [], bp.id


def test_check_expected_files_lists_the_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    bp = blueprint_from_dict(
        bp_dict(
            expected=[
                {"path": "src/a.py", "start_line": 1, "end_line": 1},
                {"path": "src/gone.py", "start_line": 1, "end_line": 1},
                {"path": "src", "start_line": 1, "end_line": 1},
            ]
        )
    )
    assert check_expected_files(bp, tmp_path) == ["src/gone.py", "src"]


def test_check_expected_files_treats_a_symlink_out_of_the_corpus_as_missing(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("secret\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "link.py").symlink_to(outside)
    bp = blueprint_from_dict(
        bp_dict(expected=[{"path": "link.py", "start_line": 1, "end_line": 1}])
    )
    assert check_expected_files(bp, corpus) == ["link.py"]


def test_a_line_too_long_to_read_is_an_error_naming_it_and_skippable(tmp_path: Path) -> None:
    from codesearch_core.corpora.jsonl_lines import MAX_LINE_BYTES

    path = tmp_path / "b.jsonl"
    path.write_bytes(b"z" * (2 * MAX_LINE_BYTES) + b"\n")
    with pytest.raises(InputFileError, match=r":1: line longer than 1,048,576 bytes"):
        read_blueprints_jsonl(path)
    blueprints, errors = read_blueprints_jsonl(path, skip_bad=True)
    assert blueprints == [] and [e.line for e in errors] == [1]


PLAN = {
    "steps": [
        {"call": {"name": "ripgrep_search", "arguments": {"pattern": "^import requests"}}},
        {
            "call": {
                "name": "ast_grep_search",
                "arguments": {"pattern": "requests.get($$$A)", "language": "python"},
            },
            "restrict_to_previous": True,
        },
    ]
}


def test_a_plan_reference_is_kept_whole_and_its_last_step_is_the_call() -> None:
    bp = blueprint_from_dict(bp_dict(reference_call=PLAN))
    assert bp.plan is not None and len(bp.plan.steps) == 2
    assert bp.reference_call.name is ToolName.AST_GREP  # the step whose findings count
    assert bp.reference is bp.plan
    assert [c.name for c in bp.reference_calls] == [ToolName.RIPGREP, ToolName.AST_GREP]
    again = blueprint_from_dict(json.loads(json.dumps(blueprint_to_dict(bp))))
    assert again == bp
    assert blueprint_to_dict(bp)["reference_call"]["steps"][1]["restrict_to_previous"] is True
    # Another plan with the same last step is another blueprint.
    first = {"call": {"name": "ripgrep_search", "arguments": {"pattern": "^from requests"}}}
    other = {"steps": [first, PLAN["steps"][1]]}
    assert blueprint_from_dict(bp_dict(reference_call=other)).content_hash != bp.content_hash


def test_a_one_step_plan_reference_is_refused_naming_the_field() -> None:
    with pytest.raises(ToolCallError) as err:
        blueprint_from_dict(bp_dict(reference_call={"steps": PLAN["steps"][:1]}))
    assert "reference_call.steps" in str(err.value) and "2 or more steps" in str(err.value)


# ----------------------------------------------------------------------------- second opinion

CHECK: dict[str, Any] = {
    "tool": "ripgrep_search",
    "arguments": {"pattern": r"café\(", "file_types": ["py"]},
    "mode": "covers",
    "why": "text_call",
}


def test_a_second_opinion_is_kept_and_written_back_but_not_compared() -> None:
    bp = blueprint_from_dict(bp_dict(second_opinion=[CHECK]))
    (check,) = bp.second_opinion
    assert (check.tool, check.mode, check.why) == ("ripgrep_search", "covers", "text_call")
    assert dict(check.arguments) == CHECK["arguments"]
    # `seeds pin` rewrites the file: the checks survive, after every other field
    assert list(blueprint_to_dict(bp))[-1] == "second_opinion"
    assert blueprint_to_dict(bp) == bp_dict(second_opinion=[CHECK])
    # the store keeps no checks: a stored blueprint equals its seed
    assert bp == blueprint_from_dict(bp_dict())
    assert "second_opinion" not in blueprint_to_dict(blueprint_from_dict(bp_dict()))


@pytest.mark.parametrize(
    ("check", "field"),
    [
        ({**CHECK, "tool": "grep"}, r"second_opinion\[1\]\.tool"),
        ({**CHECK, "arguments": {"file_types": ["py"]}}, r"second_opinion\[1\]\.arguments"),
        ({**CHECK, "mode": "finds"}, r"second_opinion\[1\]\.mode: 'finds' is not one of"),
        ({**CHECK, "why": "Text call!"}, r"second_opinion\[1\]\.why: .* short slug"),
        ({k: v for k, v in CHECK.items() if k != "why"}, r"second_opinion\[1\]: must be"),
    ],
)
def test_a_bad_check_in_a_seed_file_names_the_line_and_the_field(
    tmp_path: Path, check: dict[str, Any], field: str
) -> None:
    p = tmp_path / "bp.jsonl"
    p.write_text(line(id="a") + "\n" + line(id="b", second_opinion=[CHECK, check]) + "\n")
    with pytest.raises(InputFileError, match=rf":2: {field}") as exc:
        read_blueprints_jsonl(p)
    assert exc.value.line == 2
