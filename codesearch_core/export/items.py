"""The one-call records of rows that come from no store: a data set build's verified items, each a
gold reference call with its expected spans (`dataset`), in the layouts the store's export writes
(`records`). Apart from `records` because nothing here is filtered, ranked or reviewed."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from codesearch_core.errors import InputFileError
from codesearch_core.export.formats import chat_record, xlam_record
from codesearch_core.export.observe import Observer, observed_ahead
from codesearch_core.export.records import ExportFormat
from codesearch_core.export.targets import (
    hf_chat_record,
    hf_prompts_record,
    openai_sft_record,
    sharegpt_record,
)
from codesearch_core.models import Span
from codesearch_core.store import ExportRow


def single_call_records(
    fmt: ExportFormat | str,
    rows: Iterable[tuple[ExportRow, Sequence[Span]]],
    *,
    with_meta: bool,
    observer: Observer | None = None,
) -> Iterator[dict[str, Any]]:
    """The records of rows that come from no store (a data set build's verified items, each a
    gold reference call with its expected spans), in the rows' order, for the one-call-per-answer
    layouts. The observed layouts run each call on its corpus, as `records` does; one `observer`
    shared by several calls runs each call once for all of them."""
    fmt = ExportFormat(fmt)
    observer = observer or Observer()
    observed_builders = {
        ExportFormat.HF_CHAT: hf_chat_record,
        ExportFormat.OPENAI_SFT: openai_sft_record,
        ExportFormat.SHAREGPT: sharegpt_record,
    }
    if fmt in observed_builders:
        build = observed_builders[fmt]
        for row, observed in observed_ahead(
            ((row, row.call_json or "", row.corpus, expected) for row, expected in rows), observer
        ):
            yield build(row, observed, with_meta=with_meta)
        return
    for index, (row, _) in enumerate(rows):
        if fmt is ExportFormat.XLAM:
            yield xlam_record(index, row, with_meta=with_meta)
        elif fmt is ExportFormat.HF_PROMPTS:
            yield hf_prompts_record(row, with_meta=with_meta)
        elif fmt is ExportFormat.CHAT:
            yield chat_record(row, with_meta=with_meta)
        else:
            raise InputFileError(
                f"{fmt.value} pairs answers with rejected ones; rows without reviews have none"
            )
