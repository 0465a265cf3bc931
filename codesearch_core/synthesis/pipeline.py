"""Synthesis end to end: mine → measure against the baselines → verify → de-duplicate → write
intents → store, a batch at a time.

Each draft is written on its own (`DraftSink.add_draft`: one transaction), so a run stopped midway
(Ctrl-C, the Stop button, `--limit`) keeps every draft made so far and none half-written. Work on
a batch runs in threads: it is the tools' processes that work. A batch's intents are written in
one call of the writer (a model: one generate call for the whole batch).
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final, Protocol

from codesearch_core.models import sha256_hex
from codesearch_core.store import BlueprintFilters, Draft, Store
from codesearch_core.synthesis.intents import IntentWriter
from codesearch_core.synthesis.mine import Candidate, Target, candidates, measure, verify_target

#: Two intents whose normalized texts are at least this similar (rapidfuzz ratio, 0-100) are one
#: intent twice: a second draft with it would teach two answers to the same request.
INTENT_SIMILARITY: Final = 95.0
DEFAULT_BATCH: Final = 16
STAGES: Final = ("candidates", "mined", "verified", "deduplicated", "kept")


class DraftSink(Protocol):
    """Where drafts go (`Store` is one): True when the draft was new."""

    def add_draft(self, draft: Draft) -> bool: ...


@dataclass(slots=True)
class SynthesisCounts:
    """How many targets reached each stage, and why the others were dropped."""

    candidates: int = 0  # reference calls tried
    mined: int = 0  # in size bounds and clearly above the text baseline
    verified: int = 0  # the reference reproduced its findings
    deduplicated: int = 0  # left after dropping same-findings and too-close intents
    kept: int = 0  # drafts written (new to the store)
    dropped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            **{s: getattr(self, s) for s in STAGES},
            "dropped": dict(sorted(self.dropped.items())),
        }


@dataclass(slots=True)
class SynthesisReport:
    corpus: str
    engine: str
    model: str
    counts: SynthesisCounts
    draft_ids: list[str] = field(default_factory=list)
    stopped: bool = False
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus, "engine": self.engine, "model": self.model,
            **self.counts.to_dict(), "drafts": list(self.draft_ids), "stopped": self.stopped,
            "elapsed_s": round(self.elapsed_s, 3),
            "drafts_per_minute": round(self.counts.kept * 60 / self.elapsed_s, 1)
            if self.elapsed_s > 0 else None,
        }  # fmt: skip


def normalize_intent(text: str) -> str:
    return " ".join(re.sub(r"[^\w$.@]+", " ", text.casefold()).split())


def draft_id(target: Target) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{target.rule}-{target.subject}-{target.language}")
    digest = sha256_hex(f"{target.corpus}\n{target.call.to_json()}")[:8]
    return f"syn-{target.corpus}-{slug.strip('-').lower()}"[:110] + f"-{digest}"


def _draft(target: Target, intent: str, written: Any, writer: IntentWriter) -> Draft:
    return Draft(
        id=draft_id(target), corpus=target.corpus, language=target.language, intent=intent,
        reference_call=target.call, expected=target.expected, rule=target.rule,
        engine=writer.engine, model=writer.model, prompt=written.prompt,
        sample={"samples": list(written.samples), "dropped": dict(written.dropped),
                "subject": target.subject, "baseline": target.baseline_label},
        difficulty=written.difficulty, tags=(f"synth:{target.rule}", *target.template.tags),
        reference_reward=target.reference_reward, baseline_reward=target.baseline_reward,
    )  # fmt: skip


MapFn = Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]
"""`map_fn(fn, items)`: `fn` applied to each item, the results in the items' order."""


def evaluate(corpus: str, candidate: Candidate) -> tuple[Target | None, str]:
    """Measure one candidate and verify it: (the target, "") or (None, why it was dropped).
    Plain data in and out, so it runs in a thread here or as a Ray task elsewhere."""
    target, why = measure(corpus, *candidate)
    if target is not None and not verify_target(target):
        return None, "not_reproduced"
    return target, why


def synthesize(
    corpus: str,
    *,
    writer: IntentWriter,
    sink: DraftSink,
    limit: int | None = None,
    seed: int = 0,
    workers: int = 2,
    batch_size: int = DEFAULT_BATCH,
    known_intents: Iterable[str] = (),
    on_progress: Callable[[SynthesisCounts], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    map_fn: MapFn | None = None,
) -> SynthesisReport:
    """Make up to `limit` new drafts of `corpus` (None: all it gives). `known_intents`: intents
    already stored (drafts, blueprints), which a new draft must not repeat. `map_fn(fn, items)`
    runs a batch's measuring and verifying (default: `workers` threads here; `ray_map` fans it out
    on a Ray cluster). Raises `NothingToMineError` for a corpus without files of a language the
    rules know."""
    started = time.perf_counter()
    counts = SynthesisCounts()
    report = SynthesisReport(corpus, writer.engine, writer.model, counts)
    todo = list(candidates(corpus))
    # Seeded order: a --limit run samples every rule, not the first rule's subjects only.
    random.Random(seed).shuffle(todo)
    seen_findings: set[tuple[Any, ...]] = set()
    intents = [normalize_intent(t) for t in known_intents]

    def stop() -> bool:
        return (should_stop is not None and should_stop()) or (
            limit is not None and counts.kept >= limit
        )

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        run_batch = map_fn or pool.map
        for start in range(0, len(todo), batch_size):
            if stop():
                report.stopped = should_stop is not None and should_stop()
                break
            batch = todo[start : start + batch_size]
            counts.candidates += len(batch)
            verified = []
            for target, why in run_batch(partial(evaluate, corpus), batch):
                counts.mined += why in ("", "not_reproduced")
                if target is None:
                    counts.dropped[why] += 1
                else:
                    verified.append(target)
            counts.verified += len(verified)
            fresh = []
            for target in verified:
                key = (target.corpus, target.expected)
                if key in seen_findings:
                    counts.dropped["same_findings"] += 1
                else:
                    seen_findings.add(key)
                    fresh.append(target)
            _write(fresh, writer, sink, seed, intents, counts, report, stop)
            if on_progress is not None:
                on_progress(counts)
    counts.dropped = Counter({k: v for k, v in counts.dropped.items() if v})
    report.elapsed_s = time.perf_counter() - started
    return report


def _write(
    targets: Sequence[Target],
    writer: IntentWriter,
    sink: DraftSink,
    seed: int,
    intents: list[str],
    counts: SynthesisCounts,
    report: SynthesisReport,
    stop: Callable[[], bool],
) -> None:
    if not targets:
        return
    # Loaded here, not at import: the model writers run in vLLM's own venv, which lacks it.
    from rapidfuzz import fuzz, process

    for target, written in zip(targets, writer.write(targets, seed=seed), strict=True):
        counts.dropped.update({f"sample_{k}": v for k, v in written.dropped.items()})
        if written.intent is None:
            counts.dropped["no_usable_intent"] += 1
            continue
        norm = normalize_intent(written.intent)
        if intents and process.extractOne(
            norm, intents, scorer=fuzz.ratio, score_cutoff=INTENT_SIMILARITY
        ):
            counts.dropped["close_intent"] += 1
            continue
        if stop():
            return  # the limit is reached or a stop was asked for: nothing half-done is left
        intents.append(norm)
        counts.deduplicated += 1
        if sink.add_draft(_draft(target, written.intent, written, writer)):
            counts.kept += 1
            report.draft_ids.append(draft_id(target))
        else:
            counts.dropped["already_stored"] += 1


def stored_intents(store: Store, corpus: str) -> list[str]:
    """The intents the store holds for a corpus (drafts of any status, blueprints): a new draft
    must not repeat one."""
    drafts, _ = store.list_drafts(status=None, corpus=corpus, limit=1_000_000)
    page = store.list_blueprints(BlueprintFilters(corpus=corpus), limit=1_000_000)
    return [d.intent for d in drafts] + [b.intent for b in page.items]
