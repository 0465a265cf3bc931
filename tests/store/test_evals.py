"""Schema v10 in the real DuckDB store: the held-out split of blueprints (set, filtered, kept
through an upgrade from v9) and eval runs (stored once, listed, read back, deleted by a lead)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from store_helpers import blueprint, finding

from codesearch_core.access import AccessDenied, Actor, Mode
from codesearch_core.errors import InputFileError
from codesearch_core.models import Split
from codesearch_core.store import BlueprintFilters, EvalAnswer, EvalItem, EvalRun, Store
from codesearch_core.store.schema import SCHEMA_VERSION, apply_migrations


def a_run(run_id: str = "20261125-101010-000001-mutations") -> EvalRun:
    answer = EvalAnswer(
        raw_text='{"name": "ripgrep_search"}',
        call={"name": "ripgrep_search", "arguments": {"pattern": "h0"}},
        repaired=True,
        reward=0.42,
        span_f1=0.5,
        tool_ok=False,
        pcre2_violation=False,
        findings=(finding(line=2),),
    )
    items = (
        EvalItem("bp-000", ("structure",), "python", "ast_grep_search", (answer,), "fixtures"),
        EvalItem("bp-001", (), "go", "ripgrep_search", (), "fixtures"),
    )
    summary = {"overall": {"blueprints": 2, "mean_reward": 0.42}, "by_tag": {}, "by_language": {}}
    return EvalRun(run_id, "mutations", "m1", 1, "seeds", "2026-11-25T10:10:10", items, summary)


def test_split_is_train_by_default_and_marking_eval_is_an_audited_edit(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.blueprints.add([blueprint(0), blueprint(1), blueprint(2)])
        assert {bp.split for bp in store.blueprints.list().items} == {Split.TRAIN}
        assert store.blueprints.set_split(["bp-000", "bp-001", "bp-000"], "eval") == 2
        assert store.blueprints.set_split(["bp-000"], Split.EVAL) == 0  # already there
        held = store.blueprints.list(BlueprintFilters(split="eval"))
        assert [bp.id for bp in held.items] == ["bp-000", "bp-001"]
        # The split filter sits beside the text search (which also matches ids).
        found = store.blueprints.list(BlueprintFilters(split="eval", text="bp-001"))
        assert [bp.id for bp in found.items] == ["bp-001"]
        revisions = store.blueprints.revisions("bp-000")
        assert len(revisions) == 2 and revisions[-1].data["split"] == "eval"
        assert "blueprints.split" in [e.action for e in store.audit_log()]
        with pytest.raises(InputFileError, match="no blueprint with id 'nope'"):
            store.blueprints.set_split(["bp-002", "nope"], "eval")
        assert store.blueprints.get("bp-002").split is Split.TRAIN  # type: ignore[union-attr]
        assert store.blueprints.set_split(["bp-000"], "train") == 1


def test_an_annotator_may_not_move_blueprints_between_splits(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.blueprints.add([blueprint(0)])
        store.set_role("ann@example.com", "annotator")
        ann = store.acting_as(Actor("ann@example.com", Mode.OIDC))
        with pytest.raises(AccessDenied):
            ann.blueprints.set_split(["bp-000"], "eval")


def test_a_v9_store_is_upgraded_with_every_blueprint_in_train(tmp_path: Path) -> None:
    path, current = tmp_path / "v9.duckdb", tmp_path / "current.duckdb"
    with Store(current) as store:
        store.blueprints.add([blueprint(0)])
    conn = duckdb.connect(str(path))
    apply_migrations(conn, current=0, upto=9)
    # The blueprint as a v9 build stored it: the columns v9 has, copied from a current store.
    columns = ", ".join(c[0] for c in conn.execute("DESCRIBE blueprints").fetchall())
    conn.execute(f"ATTACH '{current}' AS cur (READ_ONLY)")
    conn.execute(f"INSERT INTO blueprints SELECT {columns} FROM cur.blueprints")
    conn.close()
    with Store(path) as store:
        assert (store.found_version, store.schema_version) == (9, SCHEMA_VERSION)
        assert store.blueprints.get("bp-000").split is Split.TRAIN  # type: ignore[union-attr]
        assert store.evals.list() == []


def test_an_eval_run_is_stored_once_read_back_whole_and_deleted_by_a_lead(
    tmp_path: Path,
) -> None:
    run = a_run()
    with Store(tmp_path / "s.duckdb") as store:
        assert store.evals.save(run) is True
        assert store.evals.save(run) is False
        (listed,) = store.evals.list()
        assert listed.items == () and listed.summary == run.summary
        assert (
            listed.created_by and listed.label == "m1 (mutations) n=1 · seeds · 2026-11-25 10:10:10"
        )
        back = store.evals.get(run.run_id)
        assert back is not None and back.items == run.items
        assert back.items[0].best_reward == 0.42 and back.items[1].best_reward == 0.0
        assert store.evals.get("nope") is None
        store.set_role("ann@example.com", "annotator")
        ann = store.acting_as(Actor("ann@example.com", Mode.OIDC))
        assert ann.evals.save(a_run("20261125-101011-000001-x"))  # annotators evaluate
        with pytest.raises(AccessDenied):
            ann.evals.delete(run.run_id)
        assert store.evals.delete(run.run_id) and not store.evals.delete(run.run_id)
        assert [r.run_id for r in store.evals.list()] == ["20261125-101011-000001-x"]


def test_a_run_being_made_is_replaced_by_its_next_checkpoint_and_a_finished_one_never(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    from codesearch_core.errors import CodesearchError
    from codesearch_core.store import UNFINISHED

    full = a_run()
    begun = replace(full, items=full.items[:1],
                    summary={**full.summary, UNFINISHED: {"episodes": 1, "of": 2}})  # fmt: skip
    with Store(tmp_path / "s.duckdb") as store:
        store.evals.checkpoint(begun)
        store.evals.checkpoint(begun)  # saved again as it goes: still one run
        (listed,) = store.evals.list()
        assert listed.summary[UNFINISHED] == {"episodes": 1, "of": 2}
        assert listed.label.endswith(" · unfinished: 1 of 2")  # how lists name it
        store.evals.checkpoint(full)  # its end takes its place, under the same id
        (listed,) = store.evals.list()
        assert UNFINISHED not in listed.summary and "unfinished" not in listed.label
        assert store.evals.get(full.run_id) == replace(full, created_by=listed.created_by)
        assert [e.action for e in store.audit_log()].count("eval.run") == 1
        with pytest.raises(CodesearchError, match="is finished"):
            store.evals.checkpoint(begun)
        assert len(store.evals.get(full.run_id).items) == 2  # type: ignore[union-attr]
