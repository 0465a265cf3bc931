"""Exporting takes the lead role, in the core: a page or command that forgot to check is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import blueprint, executed, proposal

from codesearch_core.access import AccessDenied, Actor, Mode, load_settings
from codesearch_core.export.writers import export, preview
from codesearch_core.store import PROPOSAL, AuditFilters, Store


def test_an_annotator_cannot_export_or_preview_a_lead_can_and_it_is_audited(
    tmp_path: Path,
) -> None:
    settings = load_settings({}, {"auth": "proxy", "proxy_header": "X-User", "leads": ["lee"]})
    with Store(tmp_path / "studio.duckdb") as store:
        bp = blueprint(0)
        store.blueprints.add([bp])
        ids = store.add_proposals([proposal(bp, "a")])
        executed(store, ids)
        store.queue(PROPOSAL).decide(ids[0], "accept", "someone")
        ann = store.acting_as(Actor("ann", Mode.PROXY))
        ann.sign_in(settings)
        out = tmp_path / "exports" / "x.jsonl"
        with pytest.raises(AccessDenied, match="needs the lead role to export"):
            export(ann, "xlam", out)
        with pytest.raises(AccessDenied):
            preview(ann, "xlam")
        assert not out.exists() and not out.parent.exists()
        lee = store.acting_as(Actor("lee", Mode.PROXY))
        lee.sign_in(settings)
        manifest = export(lee, "xlam", out)
        assert manifest.rows == 1 and out.is_file()
        (entry,) = store.audit_log(AuditFilters(action="export"))
        assert (entry.actor, entry.mode, entry.role, entry.target) == (
            "lee",
            "proxy",
            "lead",
            str(out),
        )
        assert entry.detail["rows"] == 1 and entry.detail["sha256"] == manifest.sha256
