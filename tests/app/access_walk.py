"""One team's walk through a shared studio, in two real browsers: an annotator and a lead.

The proxy-mode and the OIDC-login tests log the two in their own way, then walk the same path:
the annotator reviews and is refused final decisions, exports and the audit; the lead settles a
conflict, exports and reads the audit. The store is checked after the server stops.
"""

from __future__ import annotations

import re
from pathlib import Path

from browser_support import SCREENSHOTS, Studio, settle
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from codesearch_core import ingest, studio
from codesearch_core.models import Proposal
from codesearch_core.store import PROPOSAL, AuditFilters, BlueprintFilters, ReviewSettings, Store
from codesearch_core.verify import verify_pending

ANN = "ann@example.com"
LEE = "lee@example.com"
CARD = re.compile(r"Proposal `?([0-9a-f]{10})`? \(#")


def team_store(db: Path) -> str:
    """Six reference-call items that ran, two reviews each; the first in conflict (by two people
    who reviewed before logins). Returns the conflict's item id."""
    with Store(db) as store:
        ingest.ensure_seeded(store)
        blueprints = studio.all_blueprints(store, BlueprintFilters(), limit=1000)[:6]
        ids = store.add_proposals(
            [
                Proposal(bp.id, "import", "reference", bp.reference_call.to_json(),
                         bp.reference_call, True)
                for bp in blueprints
            ]
        )  # fmt: skip
        verify_pending(store, workers=1)
        store.set_review_settings(ReviewSettings(reviews_per_item=2))
        store.queue(PROPOSAL).decide(ids[0], "accept", "early-1")
        store.queue(PROPOSAL).decide(ids[0], "reject", "early-2")
        return ids[0]


def main_text(page: Page) -> str:
    return str(page.inner_text('[data-testid="stMain"]'))


def sidebar_text(page: Page) -> str:
    return str(page.inner_text('[data-testid="stSidebar"]'))


def goto(page: Page, url: str, wait_text: str) -> None:
    page.goto(url)
    try:
        page.wait_for_selector(f"text={wait_text}")
    except PlaywrightError as err:  # say what the page showed instead
        raise AssertionError(f"{url}: no {wait_text!r} in:\n{main_text(page)[:2000]}") from err
    settle(page)


def walk(server: Studio, ann: Page, lee: Page, conflict: str) -> str:
    """The annotator's and the lead's walk; returns the item the annotator accepted."""
    # The sidebar names who is logged in, and their role; there is no name field to type into.
    assert f"{ANN} · annotator" in sidebar_text(ann)  # innerText drops the code style
    assert not ann.get_by_label("Reviewer").count()

    # A forged reviewer in the address changes nothing: the decision is the login's.
    # (Item 1 is the conflict, which waits for a lead: the annotator's queue starts at item 2.)
    goto(ann, f"{server.url}/review?reviewer={LEE}", "Item 2 of 6")
    assert "reviewer=" not in ann.url
    card = CARD.search(main_text(ann))
    assert card is not None
    accepted = card.group(1)
    ann.get_by_role("button", name=re.compile("^Accept")).click()
    ann.wait_for_selector("text=Item 3 of 6")
    settle(ann)

    # Conflicts: the annotator sees why the final decisions are not theirs.
    goto(ann, f"{server.url}/review?decision=conflict", "Reviewers disagree on this item")
    assert "needs the lead role to make final decisions" in main_text(ann)
    assert ann.get_by_role("button", name="Final: reject").is_disabled()
    # Bulk actions are a lead's: an annotator is not shown them at all.
    assert "Bulk actions" not in main_text(ann)

    goto(ann, f"{server.url}/export", "Export")
    ann.wait_for_selector("text=needs the lead role to export")
    assert ann.get_by_role("button", name="Write").is_disabled()
    goto(ann, f"{server.url}/audit", "Team & audit")
    ann.wait_for_selector("text=needs the lead role to read the audit trail")
    assert "People" not in main_text(ann)

    # The lead settles the conflict, writes an export and reads the audit trail.
    assert f"{LEE} · lead" in sidebar_text(lee)
    goto(lee, f"{server.url}/review?decision=conflict", "Reviewers disagree on this item")
    assert "Bulk actions (lead)" in main_text(lee)
    lee.get_by_role("button", name="Final: reject").click()
    lee.wait_for_selector("text=Nothing to review with these filters")
    goto(lee, f"{server.url}/export", "Write")
    lee.get_by_role("button", name="Write").click()
    lee.wait_for_selector("text=Wrote")
    goto(lee, f"{server.url}/audit", "Audit trail")
    # The trail is a dataframe (drawn on a canvas): its cells are in the page for screen readers.
    lee.wait_for_selector("td:has-text('export.write')", state="attached")
    audit = " ".join(lee.eval_on_selector_all("td", "cells => cells.map(c => c.textContent)"))
    for action in ("decision.final.reject", "decision.accept", "export.write", "user.join"):
        assert action in audit, action
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    lee.screenshot(path=str(SCREENSHOTS / "team_audit.png"))  # the README's team section shows it
    del conflict
    return accepted


def check_store(
    db: Path, accepted_prefix: str, conflict: str, mode: str, *, ann_role: str = "annotator"
) -> None:
    """Every decision carries the login that made it; the audit names who, how and what."""
    with Store(db) as store:
        (item,) = [i for i in store.review_queue(limit=100).items
                   if i.proposal_id.startswith(accepted_prefix)]  # fmt: skip
        history = store.queue(PROPOSAL).history(item.proposal_id)
        assert [(e.reviewer, e.action) for e in history] == [(ANN, "accept")]
        final = store.queue(PROPOSAL).history(conflict)[-1]
        assert (final.reviewer, final.action, final.final) == (LEE, "reject", True)
        log = store.audit_log(AuditFilters(), limit=1000)
        by_action = {(e.actor, e.action): e for e in log}
        assert by_action[(ANN, "decision.accept")].mode == mode
        assert by_action[(ANN, "decision.accept")].role == "annotator"
        assert by_action[(LEE, "decision.final.reject")].role == "lead"
        assert by_action[(LEE, "export.write")].detail["format"] == "xlam"
        assert {u.name: str(u.role) for u in store.users()} == {ANN: ann_role, LEE: "lead"}
        # Nothing ann clicked after her access was removed was written.
        assert [e.action for e in log if e.actor == ANN and e.action.startswith("decision")] == [
            "decision.accept"
        ]
