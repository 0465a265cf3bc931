"""Which rows each export format writes, in order: the export rule applied, gold reference calls
joined, preference pairs chosen, and each row turned into its format's record.

Records are numbered and ordered by blueprint id, then the reference call, then proposal id, so the
same store and filters give the same bytes.

Pairs (`pairs`, the older layout): for every rejected proposal, the blueprint's best accepted
proposal (highest span F1, then lowest id) or else its reference call is `chosen`.

Ranked pairs (`hf-preference`, `openai-dpo`): chosen is the best accepted proposal (highest reward)
or else the reference call, run again and graded (it must still reproduce its expected findings);
rejected are the items reviewers rejected or whose run failed, and, without any review, the
proposals graded at least `MIN_MARGIN` below the chosen answer and the blueprint's counter-calls
(graded the same way). Each pair carries both rewards and their margin. Plan blueprints are left
out whole (one call cannot answer a plan); the manifest counts each blueprint once: paired, or
under the first reason it gave none.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from dataclasses import replace
from enum import StrEnum
from itertools import groupby
from pathlib import Path
from typing import Any, Final

from codesearch_core import config
from codesearch_core.corpora import corpus_root
from codesearch_core.errors import CodesearchError, InputFileError
from codesearch_core.export import episodes
from codesearch_core.export.episode_rows import (
    ExportCounts,
    episode_filter,
    episode_records,
    step_pair_records,
)
from codesearch_core.export.formats import chat_record, pair_record, xlam_record
from codesearch_core.export.observe import Observed, Observer, observed_ahead
from codesearch_core.export.targets import (
    hf_chat_record,
    hf_preference_record,
    hf_prompts_record,
    openai_dpo_record,
    openai_sft_record,
    sharegpt_record,
)
from codesearch_core.models import Blueprint, Span, Split, ToolCall, ToolName
from codesearch_core.store import DecisionState, ExportRow, QueueFilters, Store, StoredEpisode
from codesearch_core.tools import check_runnable, parse_tool_call

#: How much lower than the chosen answer an unreviewed proposal or a counter-call must be graded
#: to be a rejected answer: a near-equivalent call is no lesson in what not to do.
MIN_MARGIN: Final = 0.2
#: A reference call that no longer earns this much (its corpus changed under it) is no gold.
GOLD_MIN_REWARD: Final = 0.9


class ExportFormat(StrEnum):
    XLAM = "xlam"
    HF_CHAT = "hf-chat"
    HF_PREFERENCE = "hf-preference"
    HF_PROMPTS = "hf-prompts"
    OPENAI_SFT = "openai-sft"
    OPENAI_DPO = "openai-dpo"
    SHAREGPT = "sharegpt"
    #: The older layouts, kept for those who read them: `chat` is `openai-sft` without the tool
    #: result and closing answer, `pairs` `hf-preference` with string arguments and reviewed
    #: rejections only.
    CHAT = "chat"
    PAIRS = "pairs"
    #: A reviewer's corrected call over the original's, the conversation before it as the prompt
    #: (`export.episodes.step_pair`): step-level preference pairs for TRL's `DPOTrainer`.
    DPO_STEPS = episodes.DPO_STEPS
    #: The gym's episodes, multi-turn (`export.episodes`): the layouts of hf-chat, openai-sft and
    #: sharegpt with one assistant turn per gym turn.
    HF_AGENT = episodes.HF_AGENT
    OPENAI_SFT_AGENT = episodes.OPENAI_SFT_AGENT
    SHAREGPT_AGENT = episodes.SHAREGPT_AGENT


#: Formats whose rows end with the tool's output (the call is run at export time).
OBSERVED: Final = frozenset({ExportFormat.HF_CHAT, ExportFormat.OPENAI_SFT, ExportFormat.SHAREGPT})
#: Formats of the gym's stored episodes (the rest are one call per record).
EPISODE_FORMATS: Final = frozenset(
    {ExportFormat.HF_AGENT, ExportFormat.OPENAI_SFT_AGENT, ExportFormat.SHAREGPT_AGENT}
)
#: Formats written with the gym's `EpisodeFrame` (its opening messages and tools): the episodes'
#: and the step-level pairs of corrected episodes.
GYM_FORMATS: Final = EPISODE_FORMATS | {ExportFormat.DPO_STEPS}
#: Formats of preference pairs ranked by graded reward.
RANKED: Final = frozenset({ExportFormat.HF_PREFERENCE, ExportFormat.OPENAI_DPO})
#: Formats that take the gold reference calls whether or not `include_reference` is given.
ALWAYS_REFERENCE: Final = frozenset({ExportFormat.PAIRS, *RANKED, ExportFormat.HF_PROMPTS})


class _GoldCheck:
    """Whether a reference call can be a gold answer: it must be able to run on its corpus (a
    blueprint stored before imports checked that may name a path outside it). Where the corpus is
    not on this machine the paths are still checked as written (no `..`, not absolute). Corpus
    roots are looked up once per export, not once per row."""

    def __init__(self) -> None:
        self._roots: dict[str, Path] = {}

    def __call__(self, row: ExportRow) -> bool:
        if row.call_json is None:
            return False
        if row.corpus not in self._roots:
            try:
                self._roots[row.corpus] = corpus_root(row.corpus)
            except CodesearchError:
                self._roots[row.corpus] = config.corpora_dir() / row.corpus
        try:
            check_runnable(parse_tool_call(json.loads(row.call_json)), self._roots[row.corpus])
        except (CodesearchError, ValueError):
            return False
        return True


def _accepted_rows(
    store: Store,
    filters: QueueFilters,
    include_reference: bool,
    with_meta: bool,
    counter: ExportCounts,
) -> Iterator[ExportRow]:
    rows = store.export_rows(
        filters, kind="accepted", include_reference=include_reference, with_meta=with_meta
    )
    gold = _GoldCheck()
    for _, group in groupby(rows, key=lambda r: r.blueprint_id):
        items = list(group)
        accepted_calls = {r.call_hash for r in items if r.proposal_id is not None}
        for row in items:
            if row.proposal_id is None and row.call_hash in accepted_calls:
                continue  # the same call is exported with its review provenance instead
            if row.proposal_id is None and not gold(row):
                counter.add("reference_outside_corpus")
                continue
            yield row


def _f1(row: ExportRow) -> float:
    return (
        -1.0 if row.grade is None or row.grade["span_f1"] is None else float(row.grade["span_f1"])
    )


def _counter_rows(rows: list[ExportRow]) -> list[ExportRow]:
    """The blueprint's counter-calls as rejected rows (they come on its reference row)."""
    ref = next((r for r in rows if r.proposal_id is None and r.counter_calls_json), None)
    if ref is None or ref.counter_calls_json is None:
        return []
    out = []
    for counter in json.loads(ref.counter_calls_json):
        call = ToolCall(ToolName(counter["call"]["name"]), counter["call"]["arguments"])
        out.append(
            replace(
                ref,
                call_json=call.to_json(),
                call_hash=call.call_hash,
                raw_text=call.to_json(),
                tool=call.name.value,
                action="reject",
                counter_calls_json=None,
                counter_why=str(counter["why"]),
            )
        )
    return out


def _pairs(
    store: Store, filters: QueueFilters, counter: ExportCounts
) -> Iterator[tuple[ExportRow, ExportRow]]:
    rows = store.export_rows(filters, kind="pairs", include_reference=True)
    gold = _GoldCheck()
    for _, group in groupby(rows, key=lambda r: r.blueprint_id):
        items = list(group)
        accepted = [r for r in items if r.action == "accept"]
        reference = [r for r in items if r.proposal_id is None and gold(r)]
        if accepted:
            chosen = min(accepted, key=lambda r: (-_f1(r), r.proposal_id or ""))
        elif reference:
            chosen = reference[0]
        else:
            continue
        for row in [*items, *_counter_rows(items)]:
            if row.action != "reject":
                continue
            if row.call_hash is not None and row.call_hash == chosen.call_hash:
                counter.add("skipped_same_call")
                continue
            counter.add("chosen_reference" if chosen.proposal_id is None else "chosen_accepted")
            if row.counter_why:
                counter.add("rejected_counter_call")
            elif row.call_json is None:
                counter.add("rejected_invalid")
            elif row.run_ok is False:
                counter.add("rejected_run_failed")
            yield chosen, row


def _ranked_pairs(
    store: Store, filters: QueueFilters, counter: ExportCounts, observer: Observer
) -> Iterator[tuple[ExportRow, ExportRow, tuple[float, float]]]:
    # Meta is read for the stored rewards; the record builders leave it out unless asked.
    rows = store.export_rows(filters, kind="ranked", include_reference=True, with_meta=True)
    gold = _GoldCheck()
    for blueprint_id, group in groupby(rows, key=lambda r: r.blueprint_id):
        items = list(group)
        found = store.blueprints.get_many([blueprint_id])
        if not found:
            continue
        bp = found[0]
        if bp.plan is not None:
            # One call cannot answer a plan (its reference is no gold, its single-call proposals
            # no answer): left out whole, and counted once, as skipped_plan (`writers._skipped`).
            continue
        picked = _chosen(items, bp, gold, observer, counter)
        if picked is None:
            continue
        chosen, chosen_reward = picked
        seen = {chosen.call_hash}
        paired = False
        for row in [*items, *_counter_rows(items)]:
            if (row.proposal_id is None and not row.counter_why) or row.action == "accept":
                continue
            if row.call_hash is not None and row.call_hash in seen:
                counter.add("skipped_same_call")
                continue
            reward = _reward(row, bp, observer)
            reviewed = row.action == "reject" and not row.counter_why
            if not reviewed and chosen_reward - reward < MIN_MARGIN:
                counter.add("skipped_not_worse")
                continue
            seen.add(row.call_hash)
            counter.add(_rejected_kind(row))
            counter.add("chosen_reference" if chosen.proposal_id is None else "chosen_accepted")
            paired = True
            yield chosen, row, (chosen_reward, reward)
        # Per blueprint, so that the manifest's blueprint counts add up to the blueprints read.
        counter.add("paired_blueprints" if paired else "skipped_no_rejected")


def _chosen(
    items: list[ExportRow],
    bp: Blueprint,
    gold: _GoldCheck,
    observer: Observer,
    counter: ExportCounts,
) -> tuple[ExportRow, float] | None:
    accepted = [r for r in items if r.action == "accept" and r.reward is not None]
    if accepted:
        best = min(accepted, key=lambda r: (-(r.reward or 0.0), -_f1(r), r.proposal_id or ""))
        return best, float(best.reward or 0.0)
    reference = next((r for r in items if r.proposal_id is None), None)
    if reference is None or not gold(reference) or reference.call_json is None:
        counter.add("skipped_no_gold")
        return None
    observed = observer.observe(reference.call_json, bp.corpus, bp.expected)
    if observed.reward < GOLD_MIN_REWARD:
        counter.add("skipped_reference_not_reproduced")
        return None
    return reference, observed.reward


def _reward(row: ExportRow, bp: Blueprint, observer: Observer) -> float:
    """The rejected answer's graded reward: stored for a proposal, graded now for a counter-call
    (or a proposal whose run left no grade); the parse-failure reward for a proposal without a
    valid call."""
    if row.call_json is None:
        return 0.0
    if row.reward is not None and not row.counter_why:
        return float(row.reward)
    try:
        return observer.observe(row.call_json, bp.corpus, bp.expected).reward
    except (CodesearchError, ValueError):
        return 0.0


def _rejected_kind(row: ExportRow) -> str:
    if row.counter_why:
        return "rejected_counter_call"
    if row.call_json is None:
        return "rejected_invalid"
    if row.run_ok is False:
        return "rejected_run_failed"
    if row.action == "reject":
        return "rejected_reviewed"
    return "rejected_graded_worse"


def _prompt_rows(store: Store, filters: QueueFilters, counter: ExportCounts) -> Iterator[ExportRow]:
    rows = store.export_rows(filters, kind="ranked", include_reference=True, with_meta=False)
    for _, group in groupby(rows, key=lambda r: r.blueprint_id):
        items = list(group)
        if items[0].proposal_id is not None:
            # A plan blueprint has no single reference call: one call cannot answer it (the
            # manifest counts plan blueprints as skipped: `export_filters`).
            continue
        yield items[0]


def _counted(rows: Iterator[ExportRow], counter: ExportCounts) -> Iterator[ExportRow]:
    for row in rows:
        counter.add("reference" if row.proposal_id is None else "proposal")
        counter.add(f"tool:{row.tool}")
        counter.corpora.add(row.corpus)
        yield row


def _observed(
    store: Store, rows: Iterator[ExportRow], observer: Observer
) -> Iterator[tuple[ExportRow, Observed]]:
    """Each row with its call run on its blueprint's corpus, in order (`observed_ahead`)."""

    def calls() -> Iterator[tuple[ExportRow, str, str, Sequence[Span]]]:
        blueprint: Blueprint | None = None
        for row in rows:
            if blueprint is None or blueprint.id != row.blueprint_id:
                # Rows come grouped by blueprint: one lookup per blueprint.
                blueprint = store.blueprints.get_many([row.blueprint_id])[0]
            assert row.call_json is not None
            yield row, row.call_json, blueprint.corpus, blueprint.expected

    return observed_ahead(calls(), observer)


def export_filters(filters: QueueFilters | None, *, include_eval: bool) -> QueueFilters:
    """The filters an export applies: accepted items, and the held-out (`split: eval`) blueprints
    left out unless `include_eval` (then `filters.split` chooses, if set)."""
    filters = replace(filters or QueueFilters(), decision=DecisionState.ACCEPTED)
    if include_eval:
        return filters
    if filters.split == Split.EVAL:
        raise InputFileError(
            "the eval split is held out of exports: ask for it with --include-eval "
            "(include_eval=True)"
        )
    return replace(filters, split=Split.TRAIN.value)


def records(
    store: Store,
    fmt: ExportFormat | str,
    filters: QueueFilters | None = None,
    *,
    with_meta: bool = False,
    include_reference: bool = False,
    include_eval: bool = False,
    counter: ExportCounts | None = None,
    frame: episodes.EpisodeFrame | None = None,
    stored: Sequence[StoredEpisode] | None = None,
) -> Generator[dict[str, Any], None, None]:
    """The export's records in order, streamed (what `export` writes and the app previews).
    Blueprints of the eval split are left out unless `include_eval`. The agent formats need the
    gym's `frame` and take `stored` episodes (default: those the store lets out)."""
    fmt = ExportFormat(fmt)
    filters = export_filters(filters, include_eval=include_eval)
    counter = counter or ExportCounts()
    if fmt in EPISODE_FORMATS:
        yield from episode_records(store, fmt.value, filters, with_meta, counter, frame, stored)
        return
    if fmt is ExportFormat.DPO_STEPS:
        yield from step_pair_records(store, filters, with_meta, counter, frame)
        return
    observer = Observer()
    if fmt is ExportFormat.PAIRS:
        for chosen, rejected in _pairs(store, filters, counter):
            counter.add("pairs")
            counter.corpora.add(chosen.corpus)
            yield pair_record(chosen, rejected, with_meta=with_meta)
        return
    if fmt in RANKED:
        build = hf_preference_record if fmt is ExportFormat.HF_PREFERENCE else openai_dpo_record
        for chosen, rejected, rewards in _ranked_pairs(store, filters, counter, observer):
            counter.add("pairs")
            counter.corpora.add(chosen.corpus)
            yield build(chosen, rejected, rewards, with_meta=with_meta)
        counter.counts["tool_runs"] = observer.runs
        return
    if fmt is ExportFormat.HF_PROMPTS:
        for row in _prompt_rows(store, filters, counter):
            counter.add("prompts")
            counter.corpora.add(row.corpus)
            yield hf_prompts_record(row, with_meta=with_meta)
        return
    observed_builders = {
        ExportFormat.HF_CHAT: hf_chat_record,
        ExportFormat.OPENAI_SFT: openai_sft_record,
        ExportFormat.SHAREGPT: sharegpt_record,
    }
    rows = _accepted_rows(store, filters, include_reference, with_meta, counter)
    if fmt in OBSERVED:
        for row, observed in _observed(store, _counted(rows, counter), observer):
            yield observed_builders[fmt](row, observed, with_meta=with_meta)
    else:
        for index, row in enumerate(_counted(rows, counter)):
            if fmt is ExportFormat.XLAM:
                yield xlam_record(index, row, with_meta=with_meta)
            else:
                yield chat_record(row, with_meta=with_meta)
    counter.counts["tool_runs"] = observer.runs


def episode_counts(
    store: Store,
    filters: QueueFilters | None,
    frame: episodes.EpisodeFrame,
    *,
    include_eval: bool = False,
    stored: Sequence[StoredEpisode] | None = None,
) -> dict[str, int]:
    """What an agent export of `stored` (default: the store's accepted episodes) would hold,
    without writing it: `episodes` going out, and the reasons the rest are left out, counted."""
    counter = ExportCounts()
    counter.counts["episodes"] = 0
    chosen = store.episodes.accepted() if stored is None else stored
    keep = episode_filter(export_filters(filters, include_eval=include_eval))
    for found in episodes.agent_rows(store, chosen, frame, keep):
        counter.add(found if isinstance(found, str) else "episodes")
    return counter.counts
