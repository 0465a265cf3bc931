"""Synthesis end to end: mining passes → reference runs → text baselines → verify →
de-duplicate → write intents → store, a batch at a time.

The mining passes (one rg run per rule and language, `synthesis.mine.candidate_groups`) name every
candidate up front; candidates already drafted in the store are skipped before any tool runs, so a
re-run costs the passes and the candidates not drafted (new ones, and those dropped before, which
are measured again). A batch's reference runs and re-runs go
through `map_fn` (threads here: it is the tools' processes that work; Ray tasks on a cluster), its
baselines share a few rg passes (`synthesis.baselines`), its intents are written in one call of
the writer (a model: one generate call for the whole batch). The reference runs are scoped to the
files each mining pass named, so the first verified target of each (tool, language) is also run on
the whole corpus within `timeout_s`, as users run it (`mine.whole_corpus_check`): when it times out
there, no reference of that tool and language gives a draft (each costs about the same: a parse of
every file of the language); when it finds other spans, its rule gives none.

Each draft is written on its own (`DraftSink.add`: one transaction), so a run stopped midway
(Ctrl-C, the Stop button, `--limit`) keeps every draft made so far and none half-written.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Final, Protocol

from codesearch_core.models import sha256_hex
from codesearch_core.store import BlueprintFilters, Draft, Store
from codesearch_core.synthesis.baselines import measure_baselines
from codesearch_core.synthesis.intents import IntentWriter
from codesearch_core.synthesis.mine import (
    MIN_MARGIN,
    Candidate,
    Target,
    candidate_groups,
    measure,
    ordered,
    verify_target,
    whole_corpus_check,
)
from codesearch_core.tools import DEFAULT_TIMEOUT_S

#: Two intents whose normalized texts are at least this similar (rapidfuzz ratio, 0-100) are one
#: intent twice: a second draft with it would teach two answers to the same request.
INTENT_SIMILARITY: Final = 95.0
#: Candidates per batch: enough that a batch's shared baseline passes serve many targets, few
#: enough that progress (and Stop) comes every second or so.
DEFAULT_BATCH: Final = 128
STAGES: Final = ("candidates", "mined", "verified", "deduplicated", "kept")


class DraftSink(Protocol):
    """Where drafts go (`Store.drafts` is one): True when the draft was new."""

    def add(self, draft: Draft) -> bool: ...


@dataclass(slots=True)
class SynthesisCounts:
    """How many targets reached each stage, and why the others were dropped."""

    candidates: int = 0  # subjects the mining passes named (those already drafted included)
    mined: int = 0  # reference in size bounds and clearly above the text baselines
    verified: int = 0  # the reference reproduced, and its tool and language's whole-corpus probe
    deduplicated: int = 0  # left after dropping same-findings and too-close intents
    kept: int = 0  # drafts written (new to the store)
    already_drafted: int = 0  # candidates whose draft the store holds already (not run again)
    dropped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            **{s: getattr(self, s) for s in STAGES},
            "already_drafted": self.already_drafted,
            "dropped": dict(sorted(self.dropped.items())),
        }


@dataclass(slots=True)
class SynthesisReport:
    corpus: str
    engine: str
    model: str
    counts: SynthesisCounts
    draft_ids: list[str] = field(default_factory=list)
    #: "tool/language" whose probe reference did not finish on the whole corpus in time.
    too_slow: list[str] = field(default_factory=list)
    stopped: bool = False
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus, "engine": self.engine, "model": self.model,
            **self.counts.to_dict(), "drafts": list(self.draft_ids),
            "too_slow": list(self.too_slow), "stopped": self.stopped,
            "elapsed_s": round(self.elapsed_s, 3),
            "drafts_per_minute": round(self.counts.kept * 60 / self.elapsed_s, 1)
            if self.elapsed_s > 0 else None,
        }  # fmt: skip


def normalize_intent(text: str) -> str:
    return " ".join(re.sub(r"[^\w$.@]+", " ", text.casefold()).split())


class IntentIndex:
    """Normalized intents by length, to find one too close to a new intent without comparing it
    with all: a rapidfuzz ratio of at least r between lengths a <= b needs b <= a * (200 - r) / r
    (the matched characters can be at most a), so only lengths that near are compared. A run
    making 10k+ drafts against a store's 10k+ intents stays linear in practice, where comparing
    each new intent with every one before was quadratic."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._by_length: dict[int, list[str]] = {}
        self._spread = (200 - INTENT_SIMILARITY) / INTENT_SIMILARITY
        for text in texts:
            self.add(text)

    def add(self, norm: str) -> None:
        self._by_length.setdefault(len(norm), []).append(norm)

    def close(self, norm: str) -> bool:
        """Whether an intent already in the index is at least INTENT_SIMILARITY close to `norm`."""
        # Loaded here, not at import: the model writers run in vLLM's own venv, which lacks it.
        from rapidfuzz import fuzz, process

        n = len(norm)
        for length in range(int(n / self._spread), int(n * self._spread) + 1):
            near = self._by_length.get(length)
            if near and process.extractOne(
                norm, near, scorer=fuzz.ratio, score_cutoff=INTENT_SIMILARITY
            ):
                return True
        return False


def draft_id(target: Target) -> str:
    return _draft_id(target.corpus, target.rule, target.subject, target.language, target.call)


def candidate_draft_id(corpus: str, candidate: Candidate) -> str:
    """The id the candidate's draft gets (as `draft_id` of its target)."""
    c = candidate
    return _draft_id(corpus, c.template.id, c.subject, c.language, c.call)


def _draft_id(corpus: str, rule: str, subject: str, language: str, call: Any) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{rule}-{subject}-{language}")
    digest = sha256_hex(f"{corpus}\n{call.to_json()}")[:8]
    return f"syn-{corpus}-{slug.strip('-').lower()}"[:110] + f"-{digest}"


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


def _next_batch(
    corpus: str,
    queue: Iterator[Candidate],
    size: int,
    drafted: set[str],
    counts: SynthesisCounts,
) -> list[Candidate]:
    """The next `size` candidates not drafted yet (those drafted are counted and skipped)."""
    batch: list[Candidate] = []
    for candidate in queue:
        if candidate_draft_id(corpus, candidate) in drafted:
            counts.already_drafted += 1
            continue
        batch.append(candidate)
        if len(batch) >= size:
            break
    return batch


ProbeKey = tuple[str, str]
"""(tool, language): the references whose whole-corpus runs cost about the same."""


@dataclass(slots=True)
class _WholeCorpus:
    """Whether references run where users run them: the whole corpus, within `timeout_s`.

    A whole-corpus search costs about what parsing (ast-grep) or reading (rg) every file of its
    language costs, whatever the rule, so one probe per (tool, language) decides for all its
    rules: the first reference of that kind to reach this point, run once. One run per rule cost
    four times the rest of synthesis on a 20k-file corpus (each a parse of every Python file). A
    probe that finds other spans than it found on the mined files drops its own (rule, language):
    that rule's pass missed a file.
    """

    timeout_s: float
    slow: dict[ProbeKey, bool] = field(default_factory=dict)
    differs: set[tuple[str, str]] = field(default_factory=set)

    def check(self, targets: Sequence[Target]) -> None:
        """Probe each (tool, language) of `targets` not probed yet."""
        for t in targets:
            key = (t.call.name.value, t.language)
            if key in self.slow:
                continue
            # Between batches, when the pool is idle: the probe has the machine to itself, as a
            # user's `codesearch run` has.
            why = whole_corpus_check(t, self.timeout_s)
            self.slow[key] = why == "too_slow_whole_corpus"
            if why and not self.slow[key]:
                self.differs.add((t.rule, t.language))

    def too_slow(self) -> list[str]:
        """The probes that did not finish in time, as tool/language, in the order probed."""
        return [f"{tool}/{language}" for (tool, language), slow in self.slow.items() if slow]

    def why(self, tool: str, rule: str, language: str) -> str:
        """Why a reference of this kind gives no draft ("" for none, or not probed yet)."""
        if self.slow.get((tool, language)):
            return "too_slow_whole_corpus"
        return "whole_corpus_differs" if (rule, language) in self.differs else ""


def _measure_batch(
    corpus: str,
    batch: Sequence[Candidate],
    run_batch: MapFn,
    counts: SynthesisCounts,
    whole: _WholeCorpus,
) -> list[Target]:
    """The batch's targets that are in bounds, clearly above their text baselines, reproduce, and
    whose tool and language's probe ran on the whole corpus in time (`_WholeCorpus`)."""
    runnable = []
    for candidate in batch:
        # A group that failed its whole-corpus check gives no draft: its candidates are not run.
        if why := whole.why(candidate.template.tool, candidate.template.id, candidate.language):
            counts.dropped[why] += 1
        else:
            runnable.append(candidate)
    measured = []
    for target, why in run_batch(partial(measure, corpus), runnable):
        if target is None:
            counts.dropped[why] += 1
        else:
            measured.append(target)
    mined = []
    for target, (best, label) in zip(measured, measure_baselines(corpus, measured), strict=True):
        if best is not None and best > target.reference_reward - MIN_MARGIN:
            counts.dropped["baseline_close"] += 1
        else:
            mined.append(replace(target, baseline_reward=best, baseline_label=label))
    counts.mined += len(mined)
    reproduced = []
    for target, same in zip(mined, run_batch(verify_target, mined), strict=True):
        if same:
            reproduced.append(target)
        else:
            counts.dropped["not_reproduced"] += 1
    whole.check(reproduced)
    verified = []
    for target in reproduced:
        if why := whole.why(target.call.name.value, target.rule, target.language):
            counts.dropped[why] += 1
        else:
            verified.append(target)
    counts.verified += len(verified)
    return verified


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
    known_drafts: Iterable[str] = (),
    on_progress: Callable[[SynthesisCounts], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    map_fn: MapFn | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    rules: Collection[str] | None = None,
) -> SynthesisReport:
    """Make up to `limit` new drafts of `corpus` (None: all it gives). `known_intents`: intents
    already stored (drafts, blueprints), which a new draft must not repeat; `known_drafts`: the ids
    of drafts already stored, whose candidates are skipped. `map_fn(fn, items)` runs a batch's
    reference runs and re-runs (default: `workers` threads here; `ray_map` fans them out on a Ray
    cluster). `timeout_s`: the time a reference may take on the whole corpus (users' default).
    `rules`: the rule templates to mine with (ids; None: all).
    Raises `NothingToMineError` for a corpus without files of a language the rules know."""
    started = time.perf_counter()
    counts = SynthesisCounts()
    report = SynthesisReport(corpus, writer.engine, writer.model, counts)
    groups = [g for g in candidate_groups(corpus) if rules is None or g.template.id in rules]
    counts.candidates = sum(len(g.subjects) for g in groups)
    drafted = set(known_drafts)
    queue = ordered(groups, seed)
    seen_findings: set[tuple[Any, ...]] = set()
    intents = IntentIndex(normalize_intent(t) for t in known_intents)
    whole = _WholeCorpus(timeout_s)

    def stop() -> bool:
        return (should_stop is not None and should_stop()) or (
            limit is not None and counts.kept >= limit
        )

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        run_batch = map_fn or pool.map
        while batch := _next_batch(corpus, queue, batch_size, drafted, counts):
            if stop():
                report.stopped = should_stop is not None and should_stop()
                break
            verified = _measure_batch(corpus, batch, run_batch, counts, whole)
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
    # A stop asked for during the last batch cut its writes short as well.
    report.stopped = report.stopped or (should_stop is not None and should_stop())
    report.too_slow = whole.too_slow()
    counts.dropped = Counter({k: v for k, v in counts.dropped.items() if v})
    report.elapsed_s = time.perf_counter() - started
    return report


def _write(
    targets: Sequence[Target],
    writer: IntentWriter,
    sink: DraftSink,
    seed: int,
    intents: IntentIndex,
    counts: SynthesisCounts,
    report: SynthesisReport,
    stop: Callable[[], bool],
) -> None:
    if not targets:
        return
    for target, written in zip(targets, writer.write(targets, seed=seed), strict=True):
        counts.dropped.update({f"sample_{k}": v for k, v in written.dropped.items()})
        if written.intent is None:
            counts.dropped["no_usable_intent"] += 1
            continue
        norm = normalize_intent(written.intent)
        if intents.close(norm):
            counts.dropped["close_intent"] += 1
            continue
        if stop():
            return  # the limit is reached or a stop was asked for: nothing half-done is left
        intents.add(norm)
        counts.deduplicated += 1
        if sink.add(_draft(target, written.intent, written, writer)):
            counts.kept += 1
            report.draft_ids.append(draft_id(target))
        else:
            counts.dropped["already_stored"] += 1


def stored_intents(store: Store, corpus: str) -> list[str]:
    """The intents the store holds for a corpus (drafts of any status, blueprints): a new draft
    must not repeat one."""
    drafts, _ = store.drafts.list(status=None, corpus=corpus, limit=1_000_000)
    page = store.blueprints.list(BlueprintFilters(corpus=corpus), limit=1_000_000)
    return [d.intent for d in drafts] + [b.intent for b in page.items]


def stored_draft_ids(store: Store, corpus: str) -> set[str]:
    """The ids of the corpus's drafts the store holds (any status): their candidates are not run
    again."""
    drafts, _ = store.drafts.list(status=None, corpus=corpus, limit=1_000_000)
    return {d.id for d in drafts}
