"""The second opinion (`synthesis.second_opinion`) with the real rg and ast-grep on a corpus written
here: an item whose expected spans leave out what a broader search finds is dropped as missed, one
that holds what an exclusion search finds as included, a check that cannot run and a rule with no
check drop the item too, and an item that agrees with every check is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_core.models import Check, Span
from codesearch_core.synthesis.second_opinion import Judge, Subject, checks_of, subject_of

APP_PY = """import click


def greet(name):
    # echo('not a call') in a comment
    echo(name)
    click.echo(name)


def echo(text):
    return text
"""

#: A reader of "calls to echo" counts the qualified call too: a text search for `echo(` on lines
#: that are neither comments nor definitions.
CALLS = Check("ripgrep_search", {"pattern": r"^(?![ \t]*#)(?!.*\bdef[ \t]).*\becho[ \t]*\(",
                                 "pcre2": True, "file_types": ["py"]}, "covers", "text_call")  # fmt: skip
COMMENTS = Check("ripgrep_search", {"pattern": r"^[ \t]*#", "file_types": ["py"]}, "excludes",
                 "comment")  # fmt: skip
NODES = Check("ast_grep_search", {"pattern": "echo($$$A)", "language": "python"}, "covers",
              "ast_call")  # fmt: skip


@pytest.fixture()
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "echoes" / "app.py").parent.mkdir(parents=True)
    (tmp_path / "echoes" / "app.py").write_text(APP_PY, encoding="utf-8")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(tmp_path))
    return "echoes"


def _item(corpus: str, *lines: int) -> Subject:
    spans = tuple(Span("app.py", n, n) for n in lines)
    return Subject(corpus, "call", "python", "echo", spans)


def _judge(*checks: Check) -> Judge:
    return Judge(checks=lambda rule, language, subject: checks if rule == "call" else None)


def test_an_item_that_misses_a_qualified_call_is_dropped_as_missed(corpus: str) -> None:
    assert _judge(CALLS).judge(_item(corpus, 6)) == "missed:text_call"
    assert _judge(CALLS).judge(_item(corpus, 6, 7)) == ""


def test_an_item_holding_a_comment_line_is_dropped_as_included(corpus: str) -> None:
    assert _judge(COMMENTS).judge(_item(corpus, 5, 6, 7)) == "included:comment"
    assert _judge(COMMENTS, CALLS).judge(_item(corpus, 6, 7)) == ""


def test_an_ast_grep_check_runs_on_the_files_holding_the_subject(corpus: str) -> None:
    judge = _judge(NODES)
    assert judge.judge(_item(corpus, 6, 7)) == ""
    # The same arguments on the same corpus ran once: items of one subject share their checks.
    assert len(judge._runs) == 1
    assert judge.judge(_item(corpus, 7)) == "missed:ast_call"


def test_a_check_that_cannot_run_or_a_rule_without_checks_drops_the_item(corpus: str) -> None:
    broken = Check("ast_grep_search", {"pattern": "echo(", "language": "python"}, "covers", "x")
    assert _judge(broken).judge(_item(corpus, 6, 7)).startswith("second_opinion_failed:")
    unknown = Subject(corpus, "no-such-rule", "python", "echo", (Span("app.py", 6, 6),))
    assert _judge(CALLS).judge(unknown) == "no_second_opinion"
    assert Judge().judge(unknown) == "no_second_opinion"


def test_every_rule_template_declares_its_second_opinion() -> None:
    from codesearch_core.synthesis.rules import TEMPLATES

    missing = [t.id for t in TEMPLATES if t.second is None]
    assert missing == []
    for t in TEMPLATES:
        language = t.languages[0] if t.languages else ""
        subject = str(t.extra.get("subject", "name"))
        assert checks_of(t.id, language, subject), t.id


def test_a_data_set_item_is_read_with_its_subject_and_expected_spans() -> None:
    item = {"corpus": "c", "rule": "call", "language": "python", "subject": "echo",
            "expected": [{"path": "a.py", "start_line": 2, "end_line": 4}]}  # fmt: skip
    assert subject_of(item) == Subject("c", "call", "python", "echo", (Span("a.py", 2, 4),))
