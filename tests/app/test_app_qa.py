"""The QA queue on the Review page, drawn by Streamlit (AppTest) over a real store: a data set's
sampled item shows its intent, call, expected spans in the corpus, facts and data set; an address
naming no item says so; Incorrect with a note records a reject with the note; an empty queue says
the commands that fill it."""

from __future__ import annotations

import json
from pathlib import Path

from app_support import (
    open_app,
    stored,
    texts,
)
from streamlit.testing.v1 import AppTest

from codesearch_core import ingest, studio
from codesearch_core.dataset.items import item_from_blueprint
from codesearch_core.store import QA, BlueprintFilters, QADataset, Store

REVIEW = "pages/review.py"


def _qa_queue(reviewer: str = "ann") -> AppTest:
    at = open_app(REVIEW, reviewer=reviewer)
    at.segmented_control(key="review:queue").set_value("QA").run()
    assert not at.exception, at.exception
    return at


def test_the_qa_card_shows_the_item_and_a_reject_keeps_its_note(studio_db: Path) -> None:
    with Store(studio_db) as store:
        ingest.ensure_seeded(store)
        ledger = studio.all_blueprints(store, BlueprintFilters(corpus="ledger"), limit=1000)
        bp = next(b for b in ledger if b.plan is None and b.expected)
        item = {**item_from_blueprint(bp), "split": "eval"}
        dataset = QADataset("0123456789abcdef", "small", "/data/ds", "cafe" * 16)
        store.qa.import_sample(dataset, [("ledger/python", item)])
    at = _qa_queue()
    qa_id = f"0123456789abcdef.{bp.id}"
    assert at.query_params.get("queue") == "qa" and at.query_params.get("item") == qa_id
    assert any(bp.intent in s for s in texts(at, "subheader"))
    assert any(
        "**small** `0123456789abcdef`" in c and "/data/ds" in c for c in texts(at, "caption")
    )
    facts = next(m for m in texts(at, "markdown") if "stratum **ledger/python**" in m)
    assert "corpus **ledger**" in facts and "split **eval**" in facts
    assert json.dumps(item["reference"], indent=2) in [c.value for c in at.code]
    span = bp.expected[0]
    # The expected span's lines, from the corpus, marked.
    blocks = [h.proto.body for h in at.get("html") if span.path in h.proto.body]
    assert blocks and f">{span.start_line}</span>" in blocks[0]

    # An address naming no QA item (a stale link): said, and the next item to do instead.
    at.query_params["item"] = "no-such-item"
    at.run()
    assert any("No item `no-such-item` in this store (sampled again since?)" in w
               for w in texts(at, "warning"))  # fmt: skip
    assert at.query_params.get("item") == qa_id

    at.text_input(key=f"qa:note:{qa_id}").input("misses a call site").run()
    at.selectbox(key=f"qa:reason:{qa_id}").set_value("misses spans the intent asks for").run()
    next(b for b in at.button if b.key == "qa:reject").click().run()
    assert not at.exception, at.exception
    said = texts(at, "success")
    assert any("Incorrect: item" in s and "(misses spans the intent asks for) with the note "
               "“misses a call site”" in s for s in said), said  # fmt: skip
    assert any(studio.QA_SAMPLE_COMMAND in i for i in texts(at, "info"))
    with stored(studio_db) as store:
        (event,) = store.queue(QA).history(qa_id)
        assert (event.action.value, event.reviewer, event.note) == (
            "reject",
            "ann",
            "misses a call site",
        )
        assert store.queue(QA).counts()["reject"] == 1
