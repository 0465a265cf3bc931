"""The shipped seed file's own rules: a fixed tag vocabulary, counter-calls on adversarial seeds,
empty answers only when tagged, spans inside their files, and pinned files that have not changed.
Every error names the seed and its line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from codesearch_core.corpora.seed_rules import (
    check_seed_file,
    derived_tags,
    pin_seed_file,
    read_seed_file,
)
from codesearch_core.errors import InputFileError

SOURCE = "def handler(x):\n    return x\n\n\n# handler is called below\nhandler(1)\n"


@pytest.fixture
def corpora(tmp_path: Path) -> Path:
    root = tmp_path / "corpora" / "tiny"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path / "corpora"


def seed(**changes: Any) -> dict[str, Any]:
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()
    row: dict[str, Any] = {
        "id": "tiny-handler-calls",
        "intent": "Find the calls to handler in the Python code, not the comment.",
        "corpus": "tiny",
        "language": "python",
        "reference_call": {
            "name": "ast_grep_search",
            "arguments": {"pattern": "handler($$$A)", "language": "python"},
        },
        "expected": [{"path": "src/app.py", "start_line": 6, "end_line": 6}],
        "tags": ["adversarial:comment-string", "lang:python", "tool:ast-grep"],
        "counter_calls": [
            {
                "call": {"name": "ripgrep_search", "arguments": {"pattern": "handler"}},
                "why": "also finds the definition and the comment",
            }
        ],
        "pins": {"src/app.py": digest},
    }
    row.update(changes)
    return row


def write(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "seeds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def problems(tmp_path: Path, corpora: Path, *rows: dict[str, Any]) -> list[str]:
    _, errors = check_seed_file(write(tmp_path, *rows), corpora)
    return [str(e) for e in errors]


def test_a_seed_that_keeps_every_rule_has_no_problem(tmp_path: Path, corpora: Path) -> None:
    assert problems(tmp_path, corpora, seed()) == []
    (bp,) = read_seed_file(write(tmp_path, seed()), corpora)
    assert derived_tags(bp) == {"lang:python", "tool:ast-grep"}


def test_an_unknown_tag_is_named_with_the_seed_and_its_line(tmp_path: Path, corpora: Path) -> None:
    other = seed(id="tiny-second")
    bad = seed(id="tiny-third", tags=[*seed()["tags"], "react"])
    path = write(tmp_path, seed(), other, bad)
    with pytest.raises(InputFileError) as err:
        read_seed_file(path, corpora)
    assert str(err.value).startswith(f"{path}:3: seed tiny-third: unknown tag 'react'")


def test_derived_tags_must_say_what_the_reference_call_does(tmp_path: Path, corpora: Path) -> None:
    found = problems(
        tmp_path, corpora, seed(tags=["adversarial:comment-string", "lang:go", "flag:pcre2"])
    )
    assert any("tag 'lang:go' does not match the reference call" in p for p in found)
    assert any("tag 'flag:pcre2' does not match the reference call" in p for p in found)
    assert any("missing tag 'lang:python'" in p for p in found)
    assert any("missing tag 'tool:ast-grep'" in p for p in found)


def test_flag_tags_follow_the_ripgrep_options(tmp_path: Path, corpora: Path) -> None:
    call = {
        "name": "ripgrep_search",
        "arguments": {
            "pattern": "handler",
            "word": True,
            "case_sensitive": False,
            "globs": ["*.py"],
        },
    }
    tags = ["lang:python", "tool:ripgrep", "flag:word", "flag:ignore-case", "flag:glob"]
    row = seed(reference_call=call, tags=tags, counter_calls=[],
               expected=[{"path": "src/app.py", "start_line": n, "end_line": n} for n in (1, 5, 6)])  # fmt: skip
    assert problems(tmp_path, corpora, row) == []


def test_an_adversarial_seed_needs_its_counter_calls(tmp_path: Path, corpora: Path) -> None:
    found = problems(tmp_path, corpora, seed(counter_calls=[]))
    assert found == [
        f"{tmp_path / 'seeds.jsonl'}:1: seed tiny-handler-calls: an adversarial seed needs "
        "counter_calls (the natural wrong calls)"
    ]


def test_a_seed_expects_nothing_exactly_when_it_is_an_empty_answer(
    tmp_path: Path, corpora: Path
) -> None:
    empty = seed(expected=[], pins={}, tags=["lang:python", "tool:ast-grep"], counter_calls=[])
    assert any("not tagged 'empty-answer'" in p for p in problems(tmp_path, corpora, empty))
    tagged = {**empty, "tags": ["empty-answer", "lang:python", "tool:ast-grep"]}
    assert problems(tmp_path, corpora, tagged) == []
    wrong = seed(tags=["empty-answer", "lang:python", "tool:ast-grep"], counter_calls=[])
    assert any("tagged 'empty-answer' but expects" in p for p in problems(tmp_path, corpora, wrong))


def test_a_span_past_the_end_of_its_file_is_named(tmp_path: Path, corpora: Path) -> None:
    row = seed(expected=[{"path": "src/app.py", "start_line": 6, "end_line": 60}])
    (found,) = problems(tmp_path, corpora, row)
    assert "ends at line 60, past the end of the file (6 lines)" in found


def test_a_changed_or_unpinned_file_is_named_and_pin_records_it(
    tmp_path: Path, corpora: Path
) -> None:
    (corpora / "tiny" / "src" / "app.py").write_text(SOURCE + "handler(2)\n", encoding="utf-8")
    (found,) = problems(tmp_path, corpora, seed())
    assert "src/app.py changed since the seed was written" in found
    assert "run `codesearch seeds pin`" in found
    (unpinned,) = problems(tmp_path, corpora, seed(pins={}))
    assert "src/app.py is not pinned" in unpinned
    path = write(tmp_path, seed(pins={}))
    assert pin_seed_file(path, corpora) == 1
    assert check_seed_file(path, corpora)[1] == []
    assert pin_seed_file(path, corpora) == 0  # already pinned: nothing changes


def test_a_duplicate_id_is_an_error_naming_both_lines(tmp_path: Path, corpora: Path) -> None:
    path = write(tmp_path, seed(), seed(intent="Another intent with the same id"))
    with pytest.raises(
        InputFileError, match=r":2: duplicate id 'tiny-handler-calls' \(first used on line 1\)"
    ):
        read_seed_file(path, corpora)


def test_a_counter_call_must_be_a_valid_call_with_a_reason(tmp_path: Path, corpora: Path) -> None:
    bad = seed(counter_calls=[{"call": {"name": "grep", "arguments": {}}, "why": "x"}])
    with pytest.raises(InputFileError, match=r":1: .*counter_calls\[0\]\.call"):
        read_seed_file(write(tmp_path, bad), corpora)
    no_reason = seed(counter_calls=[{"call": seed()["counter_calls"][0]["call"], "why": " "}])
    with pytest.raises(InputFileError, match=r"counter_calls\[0\]\.why"):
        read_seed_file(write(tmp_path, no_reason), corpora)


def test_pinning_keeps_the_seed_files_permissions(tmp_path: Path, corpora: Path) -> None:
    path = write(tmp_path, seed(pins={}))
    path.chmod(0o644)
    pin_seed_file(path, corpora)
    assert path.stat().st_mode & 0o777 == 0o644
