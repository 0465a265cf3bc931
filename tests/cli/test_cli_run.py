"""`codesearch run`: a call (or plan) in, findings out, and the exit status says how it went."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.cli import main


@pytest.fixture
def corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "corpora"
    (root / "shop" / "src").mkdir(parents=True)
    (root / "shop" / "src" / "cart.py").write_text(
        "def total(items):\n    # TODO: tax\n    return sum(items)\n"
    )
    (root / "shop" / "README.md").write_text("TODO: write docs\n")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(root))
    return root


RG_TODO = json.dumps({"name": "ripgrep_search", "arguments": {"pattern": "TODO"}})


def test_prints_one_line_per_finding_for_a_named_corpus(
    corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", RG_TODO, "--corpus", "shop"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["README.md:1:1: TODO", "src/cart.py:2:7: TODO"]
    assert "2 findings in 2 files" in err


def test_a_corpus_can_be_a_directory_path(
    corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", RG_TODO, "--corpus", str(corpora / "shop" / "src")]) == 0
    assert capsys.readouterr().out.splitlines() == ["cart.py:2:7: TODO"]


def test_json_output_has_the_findings_and_status(
    corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = {"name": "ast_grep_search", "arguments": {"pattern": "sum($X)", "language": "python"}}
    assert main(["run", json.dumps(call), "--corpus", "shop", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is True and result["error_kind"] is None
    assert [(f["path"], f["start_line"], f["text"]) for f in result["findings"]] == [
        ("src/cart.py", 3, "sum(items)")
    ]


def test_the_call_can_come_from_a_file(
    corpora: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "call.json").write_text(RG_TODO)
    assert main(["run", f"@{tmp_path / 'call.json'}", "--corpus", "shop"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_a_plan_runs_its_steps(corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = {
        "steps": [
            {"call": json.loads(RG_TODO)},
            {
                "call": {
                    "name": "ast_grep_search",
                    "arguments": {"pattern": "return $X", "language": "python"},
                },
                "restrict_to_previous": True,
            },
        ]
    }
    assert main(["run", json.dumps(plan), "--corpus", "shop"]) == 0
    assert capsys.readouterr().out.splitlines() == ["src/cart.py:3:5: return sum(items)"]


def test_a_failed_call_exits_1_with_the_reason(
    corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = {"name": "ripgrep_search", "arguments": {"pattern": "(?<=# )TODO"}}
    assert main(["run", json.dumps(call), "--corpus", "shop"]) == 1
    err = capsys.readouterr().err
    assert "pcre2_required" in err and "set `pcre2: true`" in err


def test_truncation_is_reported(corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", RG_TODO, "--corpus", "shop", "--max-findings", "1"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 and "truncated" in err


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('{"name": "ripgrep_search", ', "CALL: not valid JSON"),
        ('{"name": "ripgrep_search", "arguments": {}}', "`pattern` is a required property"),
        (
            '{"name": "ripgrep_search", "arguments": {"pattern": "x", "colour": true}}',
            "arguments: unknown field(s): colour",
        ),
        ('{"name": "grep", "arguments": {}}', "name: 'grep' is not one of"),
        ("@/no/such/call.json", "/no/such/call.json: cannot read the call"),
    ],
)
def test_bad_input_exits_2_naming_the_problem(
    corpora: Path, capsys: pytest.CaptureFixture[str], call: str, message: str
) -> None:
    assert main(["run", call, "--corpus", "shop"]) == 2
    assert message in capsys.readouterr().err


def test_an_unknown_corpus_exits_2_listing_the_known_ones(
    corpora: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", RG_TODO, "--corpus", "nope"]) == 2
    assert "unknown corpus 'nope' (known: shop)" in capsys.readouterr().err


def test_bad_limits_exit_2(corpora: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", RG_TODO, "--corpus", "shop", "--timeout", "0"]) == 2
    assert "--timeout" in capsys.readouterr().err
