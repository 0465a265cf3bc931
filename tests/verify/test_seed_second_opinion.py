"""The seed audit's second opinion: a seed's own checks (`second_opinion` in its line), run with the
real tools on its corpus against its expected spans (`verify.audit`, `verify.second_opinion`)."""

from __future__ import annotations

from pathlib import Path

from codesearch_core.corpora import blueprint_from_dict
from codesearch_core.models import Blueprint
from codesearch_core.verify import Judge, Subject
from codesearch_core.verify.audit import audit_seed, audit_seeds, summarize

CALL = {"name": "ast_grep_search", "arguments": {"pattern": "handler($$$A)", "language": "python"}}


def check(pattern: str, mode: str, why: str) -> dict[str, object]:
    return {
        "tool": "ripgrep_search",
        "arguments": {"pattern": pattern, "file_types": ["py"], "pcre2": True},
        "mode": mode,
        "why": why,
    }


def seed(
    *checks: dict[str, object], seed_id: str = "tiny-seed", lines: tuple[int, int] = (8, 10)
) -> Blueprint:
    return blueprint_from_dict(
        {
            "id": seed_id,
            "intent": "Find the calls to handler",
            "corpus": "tiny",
            "language": "python",
            "reference_call": CALL,
            "expected": [{"path": "app.py", "start_line": lines[0], "end_line": lines[1]}],
            **({"second_opinion": list(checks)} if checks else {}),
        }
    )


#: The text form of the call on lines that are not comments: it also finds `def handler(`.
TEXT_CALL = check(r"^(?![ \t]*#).*\bhandler\(", "covers", "text_call")
#: The same without the definition: only the call on line 8.
TEXT_CALL_NOT_DEF = check(r"^(?![ \t]*#)(?!.*\bdef[ \t]).*\bhandler\(", "covers", "text_call")
COMMENTS = check(r"^[ \t]*#", "excludes", "comment")


def test_a_covers_check_finding_a_line_outside_the_spans_fails_the_audit(corpus: Path) -> None:
    audit = audit_seed(seed(TEXT_CALL))
    assert audit.reference == 1.0 and not audit.weak
    assert audit.second_opinion == "missed:text_call" and audit.disagrees
    summary = summarize([audit])
    assert summary.second_opinion_disagree == ("tiny-seed",)
    assert summary.second_opinion_checked == 1 and summary.second_opinion_none == 0
    assert not summary.passed


def test_checks_that_agree_pass_and_a_seed_without_checks_is_counted_apart(corpus: Path) -> None:
    audits = audit_seeds(
        [seed(TEXT_CALL_NOT_DEF, COMMENTS), seed(seed_id="tiny-unchecked")], workers=2
    )
    assert [a.second_opinion for a in audits] == ["", None]
    assert not any(a.disagrees for a in audits)
    summary = summarize(audits)
    assert (summary.second_opinion_checked, summary.second_opinion_none) == (1, 1)
    assert summary.second_opinion_disagree == () and summary.passed


def test_an_excludes_check_finding_a_line_inside_a_span_is_included(corpus: Path) -> None:
    # The whole file as one span holds the comment on line 2.
    assert audit_seed(seed(COMMENTS, lines=(1, 10))).second_opinion == "included:comment"


def test_a_check_that_cannot_run_is_a_disagreement(corpus: Path) -> None:
    broken = {"tool": "ast_grep_search", "arguments": {"pattern": "handler(", "language": "python"},
              "mode": "covers", "why": "node_call"}  # fmt: skip
    verdict = audit_seed(seed(broken)).second_opinion
    assert verdict is not None and verdict.startswith("second_opinion_failed:")


def test_judge_by_runs_given_checks_and_judge_without_a_source_says_none(corpus: Path) -> None:
    bp = seed(TEXT_CALL)
    item = Subject("tiny", bp.id, "python", "", bp.expected)
    assert Judge().judge_by(item, bp.second_opinion) == "missed:text_call"
    assert Judge().judge(item) == "no_second_opinion"
