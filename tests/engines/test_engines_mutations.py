"""Mutations: schema-valid, labelled, different from the reference — and wrong when executed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codesearch_core.engines.mutations import MutationEngine, MutationKind, mutate
from codesearch_core.errors import ErrorKind
from codesearch_core.models import Blueprint, Span, ToolCall
from codesearch_core.tools.pcre2 import requires_pcre2
from codesearch_core.tools.runner import run_tool_call
from codesearch_core.tools.schemas import parse_tool_call, validate_tool_call


def call(name: str, **arguments: Any) -> ToolCall:
    return parse_tool_call({"name": name, "arguments": arguments})


def rg(**arguments: Any) -> ToolCall:
    return call("ripgrep_search", **arguments)


def sg(**arguments: Any) -> ToolCall:
    return call("ast_grep_search", **arguments)


def by_kind(reference: ToolCall) -> dict[MutationKind, ToolCall]:
    return dict(mutate(reference))


def blueprint(reference: ToolCall, blueprint_id: str = "bp") -> Blueprint:
    return Blueprint(
        id=blueprint_id,
        intent="an intent",
        reference_call=reference,
        corpus="tmp",
        expected=(Span("a.c", 1, 1),),
        language="c",
    )


PASSWORD = rg(pattern=r"(?<=password=)\S+", pcre2=True, paths=["config/app"])
PRINTF_C = rg(pattern=r"\bprintf\(", file_types=["c"], word=True, case_sensitive=True)
DB_QUERY = sg(pattern="DB.query($$$ARGS)", language="javascript", paths=["src/server"])


@pytest.mark.parametrize(
    ("reference", "kind", "expected"),
    [
        (PASSWORD, MutationKind.DROP_PCRE2, {"pattern": r"(?<=password=)\S+", "paths": ["config/app"]}),
        (PASSWORD, MutationKind.BROADEN_PATH, {"pattern": r"(?<=password=)\S+", "pcre2": True, "paths": ["config"]}),
        (PRINTF_C, MutationKind.SWAP_TYPE_FILTER, {"pattern": r"\bprintf\(", "file_types": ["go"], "word": True, "case_sensitive": True}),
        (PRINTF_C, MutationKind.DROP_TYPE_FILTER, {"pattern": r"\bprintf\(", "word": True, "case_sensitive": True}),
        (PRINTF_C, MutationKind.DROP_WORD, {"pattern": r"\bprintf\(", "file_types": ["c"], "case_sensitive": True}),
        (PRINTF_C, MutationKind.CASE_FLIP, {"pattern": r"\bprintf\(", "file_types": ["c"], "word": True, "case_sensitive": False}),
        (PRINTF_C, MutationKind.OVERMATCH_REGEX, {"pattern": "printf", "file_types": ["c"], "case_sensitive": True}),
        (DB_QUERY, MutationKind.AST_TO_REGEX, {"pattern": r"DB\.query\(.*\)", "file_types": ["js"], "paths": ["src/server"]}),
        (DB_QUERY, MutationKind.OVERMATCH_REGEX, {"pattern": r"DB\.query", "file_types": ["js"], "paths": ["src/server"]}),
        (DB_QUERY, MutationKind.WRONG_LANGUAGE, {"pattern": "DB.query($$$ARGS)", "language": "typescript", "paths": ["src/server"]}),
        (DB_QUERY, MutationKind.BROADEN_PATH, {"pattern": "DB.query($$$ARGS)", "language": "javascript", "paths": ["src"]}),
    ],
)  # fmt: skip
def test_each_kind_appears_on_a_suitable_reference(
    reference: ToolCall, kind: MutationKind, expected: dict[str, Any]
) -> None:
    mutated = by_kind(reference)[kind]
    assert dict(mutated.arguments) == expected


def test_every_kind_is_produced_by_some_reference() -> None:
    kinds = {k for ref in (PASSWORD, PRINTF_C, DB_QUERY) for k, _ in mutate(ref)}
    assert kinds == set(MutationKind)


@pytest.mark.parametrize("reference", [PASSWORD, PRINTF_C, DB_QUERY])
def test_mutations_are_schema_valid_distinct_and_differ_from_the_reference(
    reference: ToolCall,
) -> None:
    mutations = mutate(reference)
    assert mutations
    jsons = [m.to_json() for _, m in mutations]
    assert len(set(jsons)) == len(jsons)
    assert reference.to_json() not in jsons
    for _, mutated in mutations:
        assert validate_tool_call(mutated.to_dict()) is None


def test_drop_pcre2_keeps_the_look_around_that_needs_it() -> None:
    mutated = by_kind(PASSWORD)[MutationKind.DROP_PCRE2]
    assert requires_pcre2(mutated.arguments["pattern"])
    assert "pcre2" not in mutated.arguments


def test_drop_pcre2_does_not_apply_when_pcre2_was_not_needed() -> None:
    assert MutationKind.DROP_PCRE2 not in by_kind(rg(pattern="TODO", pcre2=True))


def test_broaden_path_of_a_top_level_path_searches_everything() -> None:
    mutated = by_kind(rg(pattern="TODO", paths=["src"]))[MutationKind.BROADEN_PATH]
    assert dict(mutated.arguments) == {"pattern": "TODO"}


def test_case_flip_makes_an_insensitive_search_sensitive() -> None:
    mutated = by_kind(rg(pattern="todo", smart_case=True))[MutationKind.CASE_FLIP]
    assert dict(mutated.arguments) == {"pattern": "todo"}


def test_case_flip_needs_letters_in_the_pattern() -> None:
    assert MutationKind.CASE_FLIP not in by_kind(rg(pattern=r"\d+\.\d+"))


def test_nothing_applies_to_a_bare_literal_search() -> None:
    assert mutate(rg(pattern="TODO")) == [
        (MutationKind.CASE_FLIP, rg(pattern="TODO", case_sensitive=False))
    ]


def test_ast_rule_form_overmatches_on_its_inner_pattern() -> None:
    reference = sg(
        rule={"kind": "function_declaration", "has": {"pattern": "await $X.query($$$)"}},
        language="typescript",
    )
    mutated = by_kind(reference)[MutationKind.OVERMATCH_REGEX]
    assert dict(mutated.arguments) == {"pattern": "query", "file_types": ["ts"]}
    assert MutationKind.AST_TO_REGEX not in by_kind(reference)


def test_ast_to_regex_escapes_for_rusts_regex_syntax() -> None:
    mutated = by_kind(sg(pattern="if ($A) { return $B; }", language="c"))[MutationKind.AST_TO_REGEX]
    assert mutated.arguments["pattern"] == r"if\s*\(\w+\)\s*\{\s*return\s*\w+;\s*\}"


def test_engine_caps_mutations_per_blueprint_and_labels_them() -> None:
    engine = MutationEngine()
    proposals = engine.propose([blueprint(PRINTF_C, "a"), blueprint(DB_QUERY, "b")], n=2)
    assert [(p.blueprint_id, p.mutation_kind) for p in proposals] == [
        ("a", "swap_type_filter"),
        ("a", "overmatch_regex"),
        ("b", "ast_to_regex"),
        ("b", "overmatch_regex"),
    ]
    for p in proposals:
        assert p.valid and p.call is not None and p.error == ""
        assert (p.engine, p.model) == ("mutations", "mutations-v1")
        assert p.raw_text == p.call.to_json()


def test_engine_reports_progress_and_stops_when_asked() -> None:
    seen: list[tuple[int, int]] = []
    blueprints = [blueprint(PRINTF_C, str(i)) for i in range(5)]
    proposals = MutationEngine().propose(
        blueprints,
        n=1,
        on_progress=lambda d, t: seen.append((d, t)),
        should_stop=lambda: len(seen) >= 2,
    )
    assert seen == [(1, 5), (2, 5)]
    assert [p.blueprint_id for p in proposals] == ["0", "1"]


# --- executed with the real runner: the mutations really are wrong -----------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    files = {
        "probe/cli.c": '#include <stdio.h>\nint main(void) {\n    printf("ready\\n");\n    return 0;\n}\n',
        "agent/main.go": 'package main\n\nimport "fmt"\n\nfunc label() string {\n\treturn fmt.Sprintf("agent-%d", 1)\n}\n',
        "config/app/settings.env": "user=admin\npassword=hunter2\n",
        "src/db.js": (
            "// DB.query is slow: batch calls\n"
            "const note = 'DB.query(sql)';\n"
            "async function load(id) {\n"
            "  return DB.query('SELECT 1', [id]);\n"
            "}\n"
        ),
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_drop_pcre2_fails_with_pcre2_required(corpus: Path) -> None:
    reference = rg(pattern=r"(?<=password=)\S+", pcre2=True)
    assert [f.text for f in run_tool_call(reference, corpus).findings] == ["hunter2"]
    result = run_tool_call(by_kind(reference)[MutationKind.DROP_PCRE2], corpus)
    assert not result.ok
    assert result.error_kind is ErrorKind.PCRE2_REQUIRED


def test_swap_type_filter_finds_go_instead_of_c(corpus: Path) -> None:
    reference = rg(pattern=r"printf\(", file_types=["c"])
    assert {f.path for f in run_tool_call(reference, corpus).findings} == {"probe/cli.c"}
    mutated = by_kind(reference)[MutationKind.SWAP_TYPE_FILTER]
    assert mutated.arguments["file_types"] == ["go"]
    assert {f.path for f in run_tool_call(mutated, corpus).findings} == {"agent/main.go"}


def test_overmatch_regex_also_hits_the_comment_and_the_string(corpus: Path) -> None:
    reference = sg(pattern="DB.query($$$ARGS)", language="javascript")
    assert [f.start_line for f in run_tool_call(reference, corpus).findings] == [4]
    mutated = by_kind(reference)[MutationKind.OVERMATCH_REGEX]
    assert sorted(f.start_line for f in run_tool_call(mutated, corpus).findings) == [1, 2, 4]


def test_ast_to_regex_runs_and_also_matches_inside_the_string(corpus: Path) -> None:
    reference = sg(pattern="DB.query($$$ARGS)", language="javascript")
    mutated = by_kind(reference)[MutationKind.AST_TO_REGEX]
    result = run_tool_call(mutated, corpus)
    assert result.ok
    assert sorted(f.start_line for f in result.findings) == [2, 4]
