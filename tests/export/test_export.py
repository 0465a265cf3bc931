"""Exports: xLAM, chat and preference pairs, loaded back with the `datasets` library and checked
against the layouts that training code expects."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from store_helpers import (
    blueprint,
    finding,
    grade,
    invalid_proposal,
    proposal,
    reward,
    rg_call,
    run_ok,
)

from codesearch_core.errors import InputFileError
from codesearch_core.export.formats import OPENAI_TOOLS, xlam_tools
from codesearch_core.export.writers import ExportFormat, export, manifest_path, preview
from codesearch_core.models import CounterCall, Plan, PlanStep, Proposal, sha256_hex
from codesearch_core.store import PROPOSAL
from codesearch_core.store.core import Store
from codesearch_core.store.filters import QueueFilters
from codesearch_core.tools.schemas import (
    AST_GREP_PATTERN_ARGUMENTS,
    AST_GREP_RULE_ARGUMENTS,
    RIPGREP_ARGUMENTS,
    parse_tool_call,
)

XLAM_TYPES = {"str", "bool", "int", "List[str]", "dict"}

Loader = Callable[[Path], Any]


@pytest.fixture(scope="session")
def load_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Loader:
    """`datasets.load_dataset("json", ...)` on a local file, offline, with a throw-away cache."""
    home = tmp_path_factory.mktemp("hf_home")
    os.environ["HF_HOME"] = str(home)
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    def load(path: Path) -> Any:
        return datasets.load_dataset(
            "json", data_files=str(path), split="train", cache_dir=str(home / "cache")
        )

    return load


def _add(store: Store, bp_proposal: Proposal) -> str:
    [pid] = store.add_proposals([bp_proposal])
    return pid


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """bp-000: two accepted (F1 0.9 and 0.5), one rejected, one invalid rejected.
    bp-001 (ripgrep, go): one accepted that repeats the reference call, one rejected.
    bp-002: nothing decided. bp-003: only a rejected proposal."""
    s = Store(tmp_path / "studio.duckdb")
    bps = [
        blueprint(0),
        blueprint(1, tool="ripgrep_search", language="go", tags=("pcre2",)),
        blueprint(2),
        blueprint(3, language="go", intent="Find the café handlers"),
    ]
    s.blueprints.add(bps)
    ids: dict[str, str] = {}
    for name, prop, action, f1 in [
        ("A", proposal(bps[0], "good", engine="vllm", model="qwen"), "accept", 0.9),
        ("B", proposal(bps[0], "bad", mutation_kind="widen_scope"), "reject", 0.1),
        ("C", invalid_proposal(bps[0]), "reject", None),
        ("D", proposal(bps[0], "ok"), "accept", 0.5),
        ("E", proposal(bps[1], "nope"), "reject", 0.0),
        ("G", proposal(bps[3], "wrong"), "reject", 0.2),
    ]:
        ids[name] = _add(s, prop)
        if f1 is not None:
            s.record_execution_and_grade(ids[name], run_ok(finding()), grade(f1), reward(f1))
        s.queue(PROPOSAL).decide(ids[name], action, "ann", note=f"{name} noted")
    reference = bps[1].reference_call
    f = Proposal(
        blueprint_id=bps[1].id,
        engine="vllm",
        model="qwen",
        raw_text=reference.to_json(),
        call=reference,
        valid=True,
    )
    ids["F"] = _add(s, f)
    s.record_execution_and_grade(ids["F"], run_ok(finding()), grade(1.0), reward(1.0))
    s.queue(PROPOSAL).decide(ids["F"], "accept", "bob")
    s.add_proposals([proposal(bps[2], "undecided")])
    s.ids = ids  # type: ignore[attr-defined]
    yield s
    s.close()


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _ids(store: Store, *names: str) -> list[str]:
    return [store.ids[n] for n in names]  # type: ignore[attr-defined]


# --- xLAM ------------------------------------------------------------------------------------------


def test_xlam_loads_with_datasets_in_the_xlam_layout(
    store: Store, tmp_path: Path, load_jsonl: Loader
) -> None:
    out = tmp_path / "xlam.jsonl"
    manifest = export(store, ExportFormat.XLAM, out)
    ds = load_jsonl(out)
    assert ds.num_rows == manifest.rows == 3
    assert {k: ds.features[k].dtype for k in ("id", "query", "tools", "answers")} == {
        "id": "int64",
        "query": "string",
        "tools": "string",
        "answers": "string",
    }
    assert ds["id"] == [0, 1, 2]
    for row in ds:
        tools = json.loads(row["tools"])
        assert [t["name"] for t in tools] == ["ast_grep_search", "ripgrep_search"]
        for tool in tools:
            assert isinstance(tool["description"], str) and tool["description"]
            for spec in tool["parameters"].values():
                assert spec["type"] in XLAM_TYPES and isinstance(spec["description"], str)
        answers = json.loads(row["answers"])
        assert isinstance(answers, list) and len(answers) == 1
        assert set(answers[0]) == {"name", "arguments"}
        assert isinstance(answers[0]["arguments"], dict)
        parse_tool_call(answers[0])  # every answer is a valid call


def test_xlam_holds_only_accepted_calls_in_blueprint_then_proposal_order(
    store: Store, tmp_path: Path
) -> None:
    out = tmp_path / "xlam.jsonl"
    export(store, ExportFormat.XLAM, out, with_meta=True)
    rows = _read(out)
    accepted = sorted(_ids(store, "A", "D"))
    assert [r["meta"]["proposal_id"] for r in rows] == [*accepted, store.ids["F"]]  # type: ignore[attr-defined]
    assert rows[0]["query"] == "Find the calls to handler_0"
    meta = rows[-1]["meta"]
    assert meta["decision"]["reviewer"] == "bob" and meta["decision"]["action"] == "accept"
    assert meta["grade"]["span_f1"] == 1.0 and meta["source"] == "proposal"
    assert meta["call_hash"] == sha256_hex(
        json.dumps(json.loads(rows[-1]["answers"])[0], sort_keys=True, separators=(",", ":"))
    )


def test_reference_calls_join_as_gold_items_once(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "xlam.jsonl"
    export(store, ExportFormat.XLAM, out, include_reference=True, with_meta=True)
    rows = _read(out)
    sources = [(r["meta"]["blueprint_id"], r["meta"]["source"]) for r in rows]
    assert sources == [
        ("bp-000", "reference"),
        ("bp-000", "proposal"),
        ("bp-000", "proposal"),
        ("bp-001", "proposal"),  # the reference call itself was accepted: written once
        ("bp-002", "reference"),
        ("bp-003", "reference"),
    ]
    assert [r["id"] for r in rows] == list(range(6))


def test_the_same_store_exports_the_same_bytes(store: Store, tmp_path: Path) -> None:
    first = export(store, ExportFormat.XLAM, tmp_path / "a.jsonl", include_reference=True)
    second = export(store, ExportFormat.XLAM, tmp_path / "b.jsonl", include_reference=True)
    assert first.sha256 == second.sha256
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        # The Tool filter is the exported answer's tool (bug 10 of the review issue): A and D are
        # ripgrep answers to an ast-grep blueprint.
        (QueueFilters(tool="ripgrep_search"), ["A", "D", "F"]),
        (QueueFilters(tool="ast_grep_search"), []),
        (QueueFilters(language="python"), ["A", "D"]),
        (QueueFilters(min_f1=0.6), ["A", "F"]),
        (QueueFilters(engine="vllm", model="qwen"), ["A", "F"]),
        (QueueFilters(tag="pcre2"), ["F"]),
    ],
)
def test_export_filters(
    store: Store, tmp_path: Path, filters: QueueFilters, expected: list[str]
) -> None:
    out = tmp_path / "x.jsonl"
    manifest = export(store, ExportFormat.XLAM, out, filters=filters, with_meta=True)
    got = [r["meta"]["proposal_id"] for r in _read(out)]
    assert sorted(got) == sorted(_ids(store, *expected))
    assert manifest.filters == {k: v for k, v in filters.to_dict().items() if k != "decision"}


def test_the_manifest_describes_the_file(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "exports" / "xlam.jsonl"
    manifest = export(store, ExportFormat.XLAM, out, filters=QueueFilters(language="python"))
    saved = json.loads(manifest_path(out).read_text(encoding="utf-8"))
    assert saved == json.loads(json.dumps(manifest.to_dict()))
    assert saved["format"] == "xlam" and saved["rows"] == 2
    assert saved["sha256"] == sha256_hex(out.read_text(encoding="utf-8"))
    assert saved["bytes"] == out.stat().st_size
    assert saved["filters"] == {"language": "python"}
    assert saved["counts"]["proposal"] == 2
    assert saved["store"]["state"]["decision_events"] == 7
    assert saved["code_version"]
    assert saved["created_at"].endswith("Z")


def test_an_export_that_matches_nothing_writes_an_empty_file(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "none.jsonl"
    assert export(store, ExportFormat.XLAM, out, filters=QueueFilters(language="rust")).rows == 0
    assert out.read_bytes() == b""


# --- tool definitions ------------------------------------------------------------------------------


def test_every_schema_argument_is_advertised_in_both_tool_styles() -> None:
    ripgrep = set(RIPGREP_ARGUMENTS["properties"])
    ast_grep = set(AST_GREP_PATTERN_ARGUMENTS["properties"]) | set(
        AST_GREP_RULE_ARGUMENTS["properties"]
    )
    xlam = {t["name"]: set(t["parameters"]) for t in xlam_tools()}
    openai = {
        t["function"]["name"]: set(t["function"]["parameters"]["properties"]) for t in OPENAI_TOOLS
    }
    assert xlam == openai == {"ripgrep_search": ripgrep, "ast_grep_search": ast_grep}
    types = {t["name"]: {k: v["type"] for k, v in t["parameters"].items()} for t in xlam_tools()}
    assert types["ast_grep_search"]["rule"] == "dict"
    assert types["ripgrep_search"]["file_types"] == "List[str]"
    assert types["ripgrep_search"]["pcre2"] == "bool"
    assert types["ripgrep_search"]["context_lines"] == "int"


def test_openai_tool_parameters_are_json_schemas_that_accept_the_calls() -> None:
    for tool in OPENAI_TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in OPENAI_TOOLS}
    for call in [
        {
            "name": "ripgrep_search",
            "arguments": {"pattern": "(?<=x)y", "pcre2": True, "globs": ["*.c"]},
        },
        {"name": "ast_grep_search", "arguments": {"pattern": "f($A)", "language": "python"}},
        {"name": "ast_grep_search", "arguments": {"rule": {"kind": "call"}, "language": "go"}},
    ]:
        parse_tool_call(call)
        jsonschema.validate(call["arguments"], by_name[call["name"]])


# --- chat ------------------------------------------------------------------------------------------


def test_chat_loads_with_datasets_as_openai_messages_with_tool_calls(
    store: Store, tmp_path: Path, load_jsonl: Loader
) -> None:
    out = tmp_path / "chat.jsonl"
    manifest = export(store, ExportFormat.CHAT, out, include_reference=True)
    ds = load_jsonl(out)
    assert ds.num_rows == manifest.rows == 6
    for row in ds:
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant"]
        assert isinstance(row["messages"][1]["content"], str)
        [tool_call] = row["messages"][2]["tool_calls"]
        assert tool_call["type"] == "function" and len(tool_call["id"]) == 9
        function = tool_call["function"]
        assert isinstance(function["arguments"], str)
        arguments = json.loads(function["arguments"])
        parse_tool_call({"name": function["name"], "arguments": arguments})
        tools = {t["function"]["name"]: t for t in row["tools"]}
        assert set(tools) == {"ast_grep_search", "ripgrep_search"}
        assert all(t["type"] == "function" for t in tools.values())
        jsonschema.validate(arguments, tools[function["name"]]["function"]["parameters"])
    assert ds[5]["messages"][1]["content"] == "Find the café handlers"


# --- preference pairs ------------------------------------------------------------------------------


def test_pairs_load_with_datasets_one_per_rejected_proposal(
    store: Store, tmp_path: Path, load_jsonl: Loader
) -> None:
    out = tmp_path / "pairs.jsonl"
    manifest = export(store, ExportFormat.PAIRS, out, with_meta=True)
    ds = load_jsonl(out)
    assert ds.num_rows == manifest.rows == 4
    rows = _read(out)
    rejected = [r["meta"]["rejected"]["proposal_id"] for r in rows]
    assert sorted(rejected[:2]) == sorted(_ids(store, "B", "C"))
    assert rejected[2:] == _ids(store, "E", "G")
    chosen = [(r["meta"]["chosen"]["source"], r["meta"]["chosen"]["proposal_id"]) for r in rows]
    a, f = _ids(store, "A", "F")
    assert chosen == [("proposal", a), ("proposal", a), ("proposal", f), ("reference", None)]
    for row in ds:
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert [m["role"] for m in row["chosen"]] == ["assistant"]
        assert [m["role"] for m in row["rejected"]] == ["assistant"]
        assert row["chosen"][0]["tool_calls"]
    invalid = next(r for r in rows if r["meta"]["rejected"]["proposal_id"] == store.ids["C"])  # type: ignore[attr-defined]
    assert "tool_calls" not in invalid["rejected"][0]
    assert invalid["rejected"][0]["content"].startswith('{"name": "ripgrep_search"')
    assert manifest.counts["chosen_reference"] == 1 and manifest.counts["rejected_invalid"] == 1


def test_preview_is_the_head_of_the_export(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "chat.jsonl"
    export(store, ExportFormat.CHAT, out, include_reference=True)
    assert preview(store, "chat", limit=2, include_reference=True) == _read(out)[:2]


def test_a_blueprints_counter_calls_are_rejected_answers_in_the_pairs(
    store: Store, tmp_path: Path, load_jsonl: Loader
) -> None:
    # bp-002 had nothing decided, so no pair; with counter-calls it has one per counter-call,
    # the reference call chosen.
    bp = next(b for b in store.blueprints.get_many(["bp-002"]))
    wrong = CounterCall(rg_call("handler_2"), "a text search also finds the comment")
    store.blueprints.upsert(dataclasses.replace(bp, counter_calls=(wrong,)))
    out = tmp_path / "pairs.jsonl"
    manifest = export(store, ExportFormat.PAIRS, out, with_meta=True)
    assert load_jsonl(out).num_rows == manifest.rows == 5
    (pair,) = [r for r in _read(out) if r["meta"]["chosen"]["blueprint_id"] == "bp-002"]
    assert pair["meta"]["chosen"]["source"] == "reference"
    rejected = pair["meta"]["rejected"]
    assert (rejected["source"], rejected["why"]) == ("counter-call", wrong.why)
    (tool_call,) = pair["rejected"][0]["tool_calls"]
    assert json.loads(tool_call["function"]["arguments"]) == dict(wrong.call.arguments)
    assert manifest.counts["rejected_counter_call"] == 1


def test_a_plan_blueprints_reference_is_no_single_call_gold(store: Store, tmp_path: Path) -> None:
    bp = next(b for b in store.blueprints.get_many(["bp-002"]))
    plan = Plan((PlanStep(rg_call("handler_2")), PlanStep(bp.reference_call, True)))
    store.blueprints.upsert(dataclasses.replace(bp, plan=plan))
    out = tmp_path / "xlam.jsonl"
    manifest = export(store, ExportFormat.XLAM, out, include_reference=True, with_meta=True)
    assert "bp-002" not in {r["meta"]["blueprint_id"] for r in _read(out)}
    # Skipped, and the manifest says how many and why.
    assert manifest.counts["skipped_plan"] == 1
    skipped = manifest.extra["skipped"]["plan"]
    assert skipped["blueprints"] == 1 and "xlam holds one call per answer" in skipped["reason"]
    on_disk = json.loads(manifest_path(out).read_text(encoding="utf-8"))
    assert on_disk["extra"]["skipped"]["plan"] == skipped
    # Without the reference calls nothing of the plan is asked for: nothing is skipped.
    assert "skipped_plan" not in export(store, ExportFormat.XLAM, out).counts


def test_the_skipped_blueprints_are_counted_under_the_exports_own_filters(
    store: Store, tmp_path: Path
) -> None:
    # bp-002 a plan, bp-003 held out: each filter below reads rows of some blueprints only, and
    # the manifest may count as skipped only those.
    bp = next(b for b in store.blueprints.get_many(["bp-002"]))
    plan = Plan((PlanStep(rg_call("handler_2")), PlanStep(bp.reference_call, True)))
    store.blueprints.upsert(dataclasses.replace(bp, plan=plan))
    assert store.blueprints.set_split(["bp-003"], "eval") == 1
    out = tmp_path / "xlam.jsonl"

    def skipped(include_reference: bool = True, **filters: Any) -> dict[str, int]:
        manifest = export(store, ExportFormat.XLAM, out, filters=QueueFilters(**filters),
                          include_reference=include_reference)  # fmt: skip
        names = {"skipped_plan": "plan", "held_out_eval": "eval_split"}  # counts -> extra.skipped
        counts = {k: manifest.counts.get(k, 0) for k in names}
        found = {k: v["blueprints"] for k, v in manifest.extra["skipped"].items()}
        assert found == {names[k]: n for k, n in counts.items() if n}
        return counts

    assert skipped() == {"skipped_plan": 1, "held_out_eval": 1}
    assert skipped(blueprint_id="bp-000") == {"skipped_plan": 0, "held_out_eval": 0}
    assert skipped(blueprint_id="no-such-blueprint") == {"skipped_plan": 0, "held_out_eval": 0}
    assert skipped(blueprint_id="bp-002") == {"skipped_plan": 1, "held_out_eval": 0}
    assert skipped(blueprint_id="bp-003") == {"skipped_plan": 0, "held_out_eval": 1}
    assert skipped(tag="pcre2") == {"skipped_plan": 0, "held_out_eval": 0}
    # The reference rows are the blueprint's, whoever proposed: an engine filter keeps them all.
    assert skipped(engine="vllm") == {"skipped_plan": 1, "held_out_eval": 1}
    # Without them the export reads the engine's proposals only, and bp-003 has none from vllm.
    assert skipped(False, engine="vllm") == {"skipped_plan": 0, "held_out_eval": 0}
    assert skipped(False, engine="mutations") == {"skipped_plan": 0, "held_out_eval": 1}
    # The answer's tool: the reference calls are ast-grep's, bp-003's one proposal ripgrep's.
    assert skipped(tool="ripgrep_search") == {"skipped_plan": 0, "held_out_eval": 1}
    assert skipped(tool="ast_grep_search") == {"skipped_plan": 1, "held_out_eval": 1}


def test_the_eval_split_is_held_out_of_exports_unless_asked(store: Store, tmp_path: Path) -> None:
    assert store.blueprints.set_split(["bp-000"], "eval") == 1
    out = tmp_path / "xlam.jsonl"
    held = export(store, ExportFormat.XLAM, out, include_reference=True, with_meta=True)
    assert "bp-000" not in {r["meta"]["blueprint_id"] for r in _read(out)}
    assert held.counts["held_out_eval"] == 1 and "split" not in held.filters
    assert "split: eval" in held.extra["skipped"]["eval_split"]["reason"]
    assert all(r["meta"]["blueprint_id"] != "bp-000" for r in preview(store, "xlam", limit=50,
                                                                       with_meta=True))  # fmt: skip
    every = export(store, ExportFormat.XLAM, out, include_reference=True, with_meta=True,
                   include_eval=True)  # fmt: skip
    assert "bp-000" in {r["meta"]["blueprint_id"] for r in _read(out)}
    assert every.rows == held.rows + 3  # its two accepted answers and its reference call
    assert "held_out_eval" not in every.counts and every.extra["include_eval"] is True
    # Asking for the eval split alone needs include_eval: held out means held out.
    with pytest.raises(InputFileError, match="--include-eval"):
        export(store, ExportFormat.XLAM, out, filters=QueueFilters(split="eval"))
    only = export(store, ExportFormat.XLAM, out, filters=QueueFilters(split="eval"),
                  include_eval=True, with_meta=True)  # fmt: skip
    assert {r["meta"]["blueprint_id"] for r in _read(out)} == {"bp-000"} and only.rows == 2
