"""`codesearch grade` and `codesearch seeds verify`: real runs, exit codes, and messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_core.cli import main
from codesearch_core.corpora.blueprints import blueprint_to_dict, load_seed_blueprints

USE_EFFECT_SEED = "webshop-useeffect-calls-tsx"
USE_EFFECT_CALL = {
    "name": "ast_grep_search",
    "arguments": {"pattern": "useEffect($$$ARGS)", "language": "tsx"},
}
TEXT_CALL = {
    "name": "ripgrep_search",
    "arguments": {"pattern": r"useEffect\(", "file_types": ["ts"]},
}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------- grade


def test_grade_of_the_reference_call_is_perfect(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "grade", "--blueprint", USE_EFFECT_SEED, "--call", json.dumps(USE_EFFECT_CALL)
    )
    assert code == 0
    assert "span_f1=1.000" in out and "file_iou=1.000" in out
    assert "reward: 1.000" in out
    assert out.count("  hit ") == 4
    assert "miss" not in out and "extra" not in out


def test_grade_of_a_text_search_shows_its_extras(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "grade", "--blueprint", USE_EFFECT_SEED, "--call", json.dumps(TEXT_CALL)
    )
    assert code == 0
    assert "span_f1=0.800" in out
    assert "extra  src/web/hooks/useDebounce.ts:5:3:" in out
    assert "extra  src/web/hooks/useInventory.ts:15:3:" in out


def test_grade_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "grade", "--blueprint", USE_EFFECT_SEED, "--call", json.dumps(TEXT_CALL), "--json"
    )
    assert code == 0
    report = json.loads(out)
    assert report["blueprint"] == USE_EFFECT_SEED
    assert report["grade"]["n_matched"] == 4
    assert report["grade"]["n_predicted"] == 6
    assert {e["path"] for e in report["diff"]["extras"]} == {
        "src/web/hooks/useDebounce.ts",
        "src/web/hooks/useInventory.ts",
    }
    assert report["reward"]["components"]["R_parse"] == 1.0
    assert report["run"]["ok"] is True


def test_grade_reports_a_pcre2_refusal_with_the_penalty(capsys: pytest.CaptureFixture[str]) -> None:
    call = {"name": "ripgrep_search", "arguments": {"pattern": r"(?<=password=)\S+"}}
    code, out, _ = run_cli(
        capsys,
        "grade",
        "--blueprint",
        "webshop-password-values-lookbehind",
        "--call",
        json.dumps(call),
    )
    assert code == 0
    assert "run failed (pcre2_required)" in out
    assert "R_pcre2_rule=-1" in out
    assert out.count("  miss ") == 8


def test_grade_reads_the_call_and_the_blueprint_from_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bp = next(b for b in load_seed_blueprints() if b.id == USE_EFFECT_SEED)
    bp_file = tmp_path / "bp.json"
    bp_file.write_text(json.dumps(blueprint_to_dict(bp), indent=2), encoding="utf-8")
    call_file = tmp_path / "call.json"
    call_file.write_text(json.dumps(USE_EFFECT_CALL), encoding="utf-8")
    code, out, _ = run_cli(capsys, "grade", "--blueprint", f"@{bp_file}", "--call", f"@{call_file}")
    assert code == 0
    assert "span_f1=1.000" in out


def test_grade_accepts_a_plan_and_charges_effort(capsys: pytest.CaptureFixture[str]) -> None:
    narrow = {"name": "ripgrep_search", "arguments": {"pattern": "useEffect", "file_types": ["ts"]}}
    plan = {"steps": [{"call": narrow}, {"call": USE_EFFECT_CALL, "restrict_to_previous": True}]}
    code, out, _ = run_cli(
        capsys, "grade", "--blueprint", USE_EFFECT_SEED, "--call", json.dumps(plan), "--json"
    )
    assert code == 0
    report = json.loads(out)
    assert report["grade"]["span_f1"] == 1.0
    assert report["reward"]["components"]["R_effort"] == -1.0


def test_grade_looks_ids_up_in_another_seeds_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bp = next(b for b in load_seed_blueprints() if b.id == USE_EFFECT_SEED)
    seeds = tmp_path / "mine.jsonl"
    d = blueprint_to_dict(bp) | {"id": "my-copy"}
    seeds.write_text(json.dumps(d) + "\n", encoding="utf-8")
    code, out, _ = run_cli(
        capsys,
        "grade",
        "--blueprint",
        "my-copy",
        "--seeds",
        str(seeds),
        "--call",
        json.dumps(USE_EFFECT_CALL),
    )
    assert code == 0
    assert out.startswith("blueprint my-copy ")


@pytest.mark.parametrize(
    ("blueprint", "call", "message"),
    [
        ("no-such-seed", json.dumps(USE_EFFECT_CALL), "unknown blueprint id 'no-such-seed'"),
        (USE_EFFECT_SEED, "{not json", "not valid JSON"),
        (
            USE_EFFECT_SEED,
            json.dumps({"name": "ast_grep_search", "arguments": {"pattern": "x"}}),
            "arguments: `language` is a required property",
        ),
        (USE_EFFECT_SEED, "@/nonexistent/call.json", "cannot read the call"),
        ("@/nonexistent/bp.json", json.dumps(USE_EFFECT_CALL), "cannot read the blueprint"),
    ],
)
def test_grade_bad_input_exits_2_with_a_message(
    capsys: pytest.CaptureFixture[str], blueprint: str, call: str, message: str
) -> None:
    code, out, err = run_cli(capsys, "grade", "--blueprint", blueprint, "--call", call)
    assert code == 2
    assert err.startswith("error: ")
    assert message in err
    assert out == ""


def test_grade_refuses_a_negative_tolerance(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        capsys,
        "grade",
        "--blueprint",
        USE_EFFECT_SEED,
        "--call",
        json.dumps(USE_EFFECT_CALL),
        "--tolerance",
        "-1",
    )
    assert code == 2
    assert "--tolerance" in err


# ----------------------------------------------------------------------------- seeds verify


def seeds_file_with(tmp_path: Path, *changes: dict[str, object]) -> Path:
    """A blueprints file of two real seeds, the first updated with each of `changes`."""
    seeds = load_seed_blueprints()
    rows = [blueprint_to_dict(seeds[0]), blueprint_to_dict(seeds[1])]
    for change in changes:
        rows[0].update(change)
    path = tmp_path / "seeds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_seeds_verify_passes_on_the_shipped_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "seeds", "verify")
    assert code == 0
    lines = out.splitlines()
    n = len(load_seed_blueprints())
    assert lines[-1] == f"{n} of {n} seeds reproduce"
    assert sum(line.startswith("ok   ") for line in lines) == n


def test_seeds_verify_fails_a_seed_whose_expected_spans_are_wrong(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    seed = load_seed_blueprints()[0]
    wrong = [s.to_dict() for s in seed.expected[1:]] + [
        {"path": seed.expected[0].path, "start_line": 999, "end_line": 999}
    ]
    path = seeds_file_with(tmp_path, {"expected": wrong})
    code, out, _ = run_cli(capsys, "seeds", "verify", "--file", str(path))
    assert code == 1
    assert f"FAIL {seed.id}" in out
    assert f"miss  {seed.expected[0].path}:999" in out
    assert "extra" in out
    assert out.splitlines()[-1] == "1 of 2 seeds reproduce"


def test_seeds_verify_fails_a_seed_whose_corpus_is_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = seeds_file_with(tmp_path, {"corpus": "vanished"})
    code, out, _ = run_cli(capsys, "seeds", "verify", "--file", str(path), "--json")
    assert code == 1
    report = json.loads(out)
    assert (report["total"], report["failed"]) == (2, 1)
    assert "unknown corpus 'vanished'" in report["seeds"][0]["error"]
    assert report["seeds"][1]["ok"] is True


def test_seeds_verify_bad_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "seeds", "verify", "--file", str(tmp_path / "missing.jsonl"))
    assert code == 2
    assert "file not found" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    code, _, err = run_cli(capsys, "seeds", "verify", "--file", str(bad))
    assert code == 2
    assert f"{bad}:1: missing field(s)" in err
