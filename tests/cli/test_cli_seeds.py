"""`codesearch grade`, `codesearch seeds verify|pin|audit`: real runs, exit codes, and messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codesearch_core import config
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
    # Coverage: the text hits only the first line of each multi-line call (1/3, 1/4, 1/7 and 1/3
    # of them), and finds two calls in .ts hooks the intent excludes.
    assert "span_f1=0.212" in out and "coverage matching" in out
    assert "[partial: 1 of 7 lines, 0 spilled]" in out
    assert "extra  src/web/hooks/useDebounce.ts:5:3:" in out
    assert "extra  src/web/hooks/useInventory.ts:15:3:" in out
    _, old, _ = run_cli(
        capsys, "grade", "--blueprint", USE_EFFECT_SEED, "--call", json.dumps(TEXT_CALL),
        "--matching", "overlap",
    )  # fmt: skip
    assert "span_f1=0.800" in old and "overlap matching" in old


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
        "webshop-password-equals-user-backreference",
        "--call",
        json.dumps(call),
    )
    assert code == 0
    assert "run failed (pcre2_required)" in out
    assert "R_pcre2_rule=-1" in out
    assert out.count("  miss ") == 1  # the one log line whose password is the user name


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


def test_grade_honours_supporting_spans(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The two .ts hooks the text search also finds, marked supporting: no longer extras.
    bp = next(b for b in load_seed_blueprints() if b.id == USE_EFFECT_SEED)
    d = blueprint_to_dict(bp)
    context = [("src/web/hooks/useDebounce.ts", 5), ("src/web/hooks/useInventory.ts", 15)]
    d["expected"] += [
        {"path": p, "start_line": n, "end_line": n, "supporting": True} for p, n in context
    ]
    bp_file = tmp_path / "bp.json"
    bp_file.write_text(json.dumps(d), encoding="utf-8")
    argv = ("grade", "--blueprint", f"@{bp_file}", "--call", json.dumps(TEXT_CALL))
    code, out, _ = run_cli(capsys, *argv, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["diff"]["extras"] == [] and report["diff"]["misses"] == []
    assert [(x["expected"]["path"], x["expected"]["supporting"]) for x in
            report["diff"]["supporting"]] == [(p, True) for p, _ in context]  # fmt: skip
    g = report["grade"]
    assert (g["n_predicted"], g["n_expected"], g["n_matched"]) == (4, 4, 4)
    assert g["file_iou"] == 1.0 and g["span_precision"] == g["span_recall"]
    code, text, _ = run_cli(capsys, *argv)
    assert code == 0 and "extra" not in text
    assert "context src/web/hooks/useDebounce.ts:5  <- " in text


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
    assert lines[-1] == f"{n} of {n} seeds reproduce; 0 seed-rule problem(s)"
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
    assert out.splitlines()[-1] == "1 of 2 seeds reproduce; 1 seed-rule problem(s)"


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


def test_seeds_verify_names_the_seed_and_line_of_each_broken_seed_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    seed = load_seed_blueprints()[0]
    path = seeds_file_with(tmp_path, {"tags": [*seed.tags, "react"]})
    code, _, err = run_cli(capsys, "seeds", "verify", "--file", str(path))
    assert code == 1
    assert f"{path}:1: seed {seed.id}: unknown tag 'react'" in err


def test_a_corpus_file_edited_under_a_seed_is_named_until_it_is_pinned_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpora = tmp_path / "corpora"
    shutil.copytree(config.corpora_dir() / "webshop", corpora / "webshop")
    monkeypatch.setenv("CODESEARCH_CORPORA", str(corpora))
    seed = load_seed_blueprints()[0]
    path = seeds_file_with(tmp_path)
    edited = corpora / "webshop" / seed.expected[0].path
    edited.write_text(edited.read_text(encoding="utf-8") + "// a new last line\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "seeds", "verify", "--file", str(path))
    assert code == 1
    assert f"seed {seed.id}: {seed.expected[0].path} changed since the seed was written" in err
    assert "codesearch seeds pin" in err
    # The spans still hold (a line was added at the end): pin, and the file verifies again. Both
    # seeds are on webshop, whose snapshot the edit changed: both are pinned again.
    assert {bp.corpus for bp in load_seed_blueprints()[:2]} == {"webshop"}
    code, out, _ = run_cli(capsys, "seeds", "pin", "--file", str(path))
    assert (code, out.strip()) == (
        0,
        f"{path}: pinned 2 seed(s) to their expected files and corpus snapshot",
    )
    code, _, err = run_cli(capsys, "seeds", "verify", "--file", str(path))
    assert (code, err) == (0, "")


# ----------------------------------------------------------------------------- seeds audit


def _audit_file(tmp_path: Path, seed_id: str, **changes: object) -> Path:
    seed = next(bp for bp in load_seed_blueprints() if bp.id == seed_id)
    row = {**blueprint_to_dict(seed), **changes}
    path = tmp_path / "audit.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def test_seeds_audit_calls_a_seed_weak_when_a_counter_call_scores_near_the_reference(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A "counter-call" that is the reference itself scores 1.0: the seed is weak, exit 1.
    seed = next(bp for bp in load_seed_blueprints() if bp.id == USE_EFFECT_SEED)
    same = {"call": seed.reference_call.to_dict(), "why": "not wrong at all"}
    path = _audit_file(tmp_path, USE_EFFECT_SEED, counter_calls=[same])
    code, out, _ = run_cli(capsys, "seeds", "audit", "--file", str(path))
    assert code == 1
    assert out.startswith(f"WEAK {USE_EFFECT_SEED}  reference 1.00")
    assert "counter     1.00  counter 1  <- above the weak line" in out
    assert "weak 1;" in out.splitlines()[-1]


def test_seeds_audit_json_lists_every_baseline_with_its_reward(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run_cli(
        capsys, "seeds", "audit", "--file", str(_audit_file(tmp_path, USE_EFFECT_SEED)), "--json"
    )
    report = json.loads(out)
    (seed,) = report["seeds"]
    kinds = {b["kind"]: b for b in seed["baselines"]}
    assert seed["reference"] == 1.0
    # The keyword baseline: the pattern's literal word as a fixed-string rg call over TS files.
    assert kinds["keyword"]["call"] == {
        "name": "ripgrep_search",
        "arguments": {"pattern": "useEffect", "fixed_strings": True, "file_types": ["ts"]},
    }
    assert kinds["keyword"]["reward"] < 0.9
    assert kinds["sibling"]["label"] == "as typescript"
    assert code == (0 if report["passed"] else 1)
    assert report["summary"]["seeds"] == 1


def test_seeds_audit_fails_a_seed_whose_second_opinion_disagrees(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The text form of the call over every TS file also finds the two calls in .ts hooks, which
    # the seed's spans (its .tsx components) leave out: the check says the seed missed them.
    check = {**TEXT_CALL, "tool": TEXT_CALL["name"], "mode": "covers", "why": "text_call"}
    del check["name"]
    path = _audit_file(tmp_path, USE_EFFECT_SEED, second_opinion=[check])
    code, out, _ = run_cli(capsys, "seeds", "audit", "--file", str(path))
    assert code == 1
    assert out.startswith(
        f"FAIL {USE_EFFECT_SEED}  reference 1.00  second opinion: missed:text_call"
    )
    assert "second opinion on 1 seed(s): 1 disagree, 0 declare none" in out.splitlines()[-1]
    code, out, _ = run_cli(capsys, "seeds", "audit", "--file", str(path), "--json")
    report = json.loads(out)
    assert (code, report["passed"]) == (1, False)
    assert report["seeds"][0]["second_opinion"] == "missed:text_call"
    assert report["summary"]["second_opinion_disagree"] == [USE_EFFECT_SEED]


def test_seeds_audit_on_the_shipped_seeds_finds_no_weak_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "seeds", "audit")
    summary = out.splitlines()[-1]
    assert "weak 0;" in summary, summary
    assert code == 0, summary
    assert err == ""


def test_seeds_verify_names_seeds_written_against_another_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = load_seed_blueprints()
    current = next(bp for bp in seeds if bp.id == USE_EFFECT_SEED)
    assert current.snapshot is not None  # the shipped seeds are pinned (`seeds pin`)
    other = {**blueprint_to_dict(current), "snapshot": "0" * 64}
    path = tmp_path / "seeds.jsonl"
    path.write_text(json.dumps(other) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "seeds", "verify", "--file", str(path))
    assert code in (0, 1)  # the one-seed file may break a set rule; the spans still reproduce
    assert "1 seed(s) were written against another snapshot" in out
    assert f"snapshot {USE_EFFECT_SEED}: pinned 000000000000, now {current.snapshot[:12]}" in out
    code, out, _ = run_cli(capsys, "seeds", "verify", "--json")
    assert json.loads(out)["other_snapshot"] == []
