"""The Review page: one item at a time, decisions as append-only events, undo, resume, filters, and
edit-and-re-run."""

from __future__ import annotations

from pathlib import Path

from app_support import (
    open_app,
    seed_reviewable,
    stored,
    texts,
)

from codesearch_core.models import DecisionAction, Proposal, ToolCall, ToolName
from codesearch_core.store import PROPOSAL, ReviewSettings
from codesearch_core.verify.pending import verify_pending

REVIEW = "pages/review.py"


def heading(at: object) -> str:
    return next(t for t in texts(at, "markdown") if t.startswith("#### Item"))


def test_accept_then_undo_appends_two_events_and_brings_the_item_back(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    at = open_app(REVIEW, reviewer="ann")
    assert heading(at).startswith(f"#### Item 1 of {len(queue)}")
    at.button(key="accept").click().run()
    assert heading(at).startswith("#### Item 2 of")
    at.button(key="undo").click().run()
    assert heading(at).startswith("#### Item 1 of")
    assert not at.exception
    with stored(studio_db) as store:
        history = store.queue(PROPOSAL).history(queue[0])
        assert [(e.action, e.reviewer, e.undone) for e in history] == [
            (DecisionAction.ACCEPT, "ann", True),
            (DecisionAction.UNDO, "ann", False),
        ]
        assert history[1].undoes == history[0].event_id
        assert store.current_decision(queue[0]) is None


def test_a_reject_records_its_reason_and_note(studio_db: Path, reviewable_template: Path) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    at = open_app(REVIEW, reviewer="ann")
    at.text_input(key=f"note:{queue[0]}").input("hits the comments too").run()
    at.selectbox(key=f"reason:{queue[0]}").set_value("finds too much").run()
    at.button(key="reject").click().run()
    with stored(studio_db) as store:
        decision = store.current_decision(queue[0])
    assert decision is not None
    assert (decision.action, decision.reason, decision.note) == (
        DecisionAction.REJECT, "finds too much", "hits the comments too",
    )  # fmt: skip


def test_without_a_reviewer_name_nothing_can_be_decided_until_one_is_typed_in_the_page(
    studio_db: Path, reviewable_template: Path
) -> None:
    seed_reviewable(studio_db, reviewable_template)
    at = open_app(REVIEW)
    assert all(at.button(key=k).disabled for k in ("accept", "reject", "skip", "undo"))
    # The name is asked for in the page (the sidebar is folded in a narrow window), not pointed at.
    asked = at.text_input(key="reviewer:asked")
    assert asked.label == "Your name"
    assert any("to record decisions" in c for c in texts(at, "caption"))
    asked.input("ann").run()
    assert not at.exception, at.exception
    # It is the sidebar's name: the sidebar's box, the address, and the card all have it.
    assert at.text_input(key="reviewer").value == "ann"
    assert at.query_params.get("reviewer") == "ann"
    assert not any(t.key == "reviewer:asked" for t in at.text_input)
    assert not any(at.button(key=k).disabled for k in ("reject", "skip"))


def test_a_new_session_resumes_at_the_first_undecided_item(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    first = open_app(REVIEW, reviewer="ann")
    first.button(key="accept").click().run()
    first.button(key="skip").click().run()
    again = open_app(REVIEW, reviewer="ann")  # a refresh: new session, nothing in session state
    assert heading(again).startswith(f"#### Item 3 of {len(queue)} · {len(queue) - 2} undecided")


def test_two_sessions_deciding_the_same_item_both_land_in_the_log(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    ann = open_app(REVIEW, reviewer="ann")
    bob = open_app(REVIEW, reviewer="bob")  # both look at item 1
    ann.button(key="accept").click().run()
    bob.button(key="reject").click().run()
    with stored(studio_db) as store:
        history = store.queue(PROPOSAL).history(queue[0])
    assert [(e.action, e.reviewer) for e in history] == [
        (DecisionAction.ACCEPT, "ann"),
        (DecisionAction.REJECT, "bob"),
    ]


def test_the_decision_filter_shows_only_matching_items(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        ran = next(i for i in queue[3:] if (r := store.review_item(i)) and r.execution.ok)  # type: ignore[union-attr]
        store.queue(PROPOSAL).decide(ran, DecisionAction.ACCEPT, "bob")
    at = open_app(REVIEW, reviewer="ann")
    at.selectbox(key="rf:decision").set_value("accepted").run()
    assert heading(at).startswith(f"#### Item {queue.index(ran) + 1} of")
    assert "1 accepted" in heading(at)
    assert any("bob **accept**" in c for c in texts(at, "caption"))


def test_an_empty_queue_says_so(studio_db: Path) -> None:
    at = open_app(REVIEW, reviewer="ann")
    assert any("Nothing to review" in s for s in texts(at, "success"))


def test_an_edited_call_is_stored_with_its_parent_and_shown_next(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    at = open_app(REVIEW, reviewer="ann")
    assert not [b for b in at.button if b.key == "rerun_edited"]  # built only when asked for
    next(t for t in at.toggle if str(t.key).startswith("edit_open:")).set_value(True).run()
    at.segmented_control(key="review_edit:mode").set_value("JSON").run()
    editor = next(t for t in at.text_area if t.key.endswith(":json"))
    editor.input(
        '{"name": "ripgrep_search", "arguments": {"pattern": "ledger\\\\.datasource"}}'
    ).run()
    at.button(key="rerun_edited").click().run()
    assert not at.exception and not texts(at, "error")
    assert any("edited from" in c for c in texts(at, "caption"))
    with stored(studio_db) as store:
        children = [
            p
            for p in store.proposals_for_blueprint(store.review_item(queue[0]).blueprint.id)  # type: ignore[union-attr]
            if p.proposal.parent_id == queue[0]
        ]
        assert len(children) == 1
        child = store.review_item(children[0].id)
    assert child is not None and child.execution is not None and child.grade is not None
    assert child.proposal.proposal.call is not None
    assert child.proposal.proposal.call.arguments == {"pattern": "ledger\\.datasource"}


def test_an_invalid_proposal_shows_its_raw_output_and_error_and_cannot_be_accepted(
    studio_db: Path,
) -> None:
    open_app()  # first start: the seeds are loaded
    with stored(studio_db) as store:
        bp = store.blueprints.list(limit=1).items[0]
        (pid,) = store.add_proposals(
            [
                Proposal(
                    blueprint_id=bp.id, engine="vllm", model="tiny", raw_text='{"name": "rg", ',
                    call=None, valid=False, error="not valid JSON: the output stops mid-object",
                    finish_reason="length",
                )
            ]
        )  # fmt: skip
        verify_pending(store, workers=1)
    at = open_app(REVIEW, reviewer="ann")
    assert any('{"name": "rg", ' in c.value for c in at.code)
    assert any("stops mid-object" in e for e in texts(at, "error"))
    assert at.button(key="accept").disabled and not at.button(key="reject").disabled
    at.button(key="reject").click().run()
    with stored(studio_db) as store:
        decision = store.current_decision(pid)
    assert decision is not None and decision.action is DecisionAction.REJECT


def test_a_text_hit_on_the_first_line_of_a_call_is_shown_as_a_partial_hit(
    studio_db: Path,
) -> None:
    open_app()  # first start: the seeds are loaded
    call = ToolCall(ToolName.RIPGREP, {"pattern": r"useEffect\(", "file_types": ["ts"]})
    with stored(studio_db) as store:
        store.add_proposals(
            [
                Proposal(
                    blueprint_id="webshop-useeffect-calls-tsx", engine="import", model="-",
                    raw_text=call.to_json(), call=call, valid=True,
                )
            ]
        )  # fmt: skip
        verify_pending(store, workers=1)
    at = open_app(REVIEW, reviewer="ann")
    assert not at.exception
    findings = next(t for t in texts(at, "markdown") if t.startswith("**Findings**"))
    # Every expected call is hit, but only on its first line: the card says how much of each.
    assert "of them partial]" in findings and ":violet-badge[" in findings
    shown = " ".join(str(getattr(e, "proto", e)) for e in at.main)
    assert "covers 1 of" in shown


def test_a_bulk_reject_needs_a_reason_and_a_confirmation_and_is_undone_as_one_batch(
    studio_db: Path, reviewable_template: Path
) -> None:
    queue = seed_reviewable(studio_db, reviewable_template)
    at = open_app(REVIEW, reviewer="lee")  # local mode: the one person is an admin, so a lead
    at.toggle(key="bulk:open").set_value(True).run()
    assert at.button(key="bulk:reject").disabled  # no reason, no confirmation yet
    at.selectbox(key="bulk:reason").set_value("wrong tool").run()
    at.checkbox(key="bulk:ok:reject").check().run()
    assert at.button(key="bulk:reject").label == f"Reject {len(queue)} items"
    at.button(key="bulk:reject").click().run()
    assert not at.exception
    assert f"Rejected {len(queue)} items as one batch." in texts(at, "success")
    at.button(key="bulk:undo").click().run()
    assert "Batch undone: its items are as they were." in texts(at, "success")
    with stored(studio_db) as store:
        history = store.queue(PROPOSAL).history(queue[-1])
        assert [(e.action, e.reason, e.final, e.undone) for e in history] == [
            (DecisionAction.REJECT, "wrong tool", True, True),
            (DecisionAction.UNDO, "", False, False),
        ]
        assert history[0].batch_id is not None
        assert all(store.current_decision(i) is None for i in queue)


def test_review_is_blind_until_ones_own_vote_then_the_others_show(
    studio_db: Path, reviewable_template: Path
) -> None:
    # Issue 39: with two reviews per item, the second reviewer saw "Reviews: bob accept" before
    # deciding, so agreement measured anchored votes.
    queue = seed_reviewable(studio_db, reviewable_template)
    with stored(studio_db) as store:
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        first = queue[0]
        store.queue(PROPOSAL).decide(
            first, DecisionAction.SKIP, "bob"
        )  # bob's, on ann's first card
        store.queue(PROPOSAL).decide(first, DecisionAction.REJECT, "cid")
    at = open_app(REVIEW, reviewer="ann")
    assert heading(at).startswith("#### Item 1 of")
    captions = texts(at, "caption")
    assert any("Reviews: 2 hidden until you give yours" in c for c in captions), captions
    assert not any("cid" in c or "bob" in c for c in captions)
    at.button(key="skip").click().run()  # ann's own vote: the item is no longer to do for her
    at.button(key="review:previous").click().run()
    assert heading(at).startswith("#### Item 1 of")
    assert any("bob **skip** · cid **reject** · ann **skip**" in c for c in texts(at, "caption"))
