"""`build_dataset`: a recipe's stages, synthesize → verify → second opinion → filter → split → export →
card, each writing
its output under `DIR/.work/<stage>` and only then marking it done, so a stop (Ctrl-C, a kill,
a full disk) and a second run resume from the last finished stage.

A stage is built in `DIR/.work/.<stage>.partial` and renamed to `DIR/.work/<stage>` when
complete: the rename is the mark. Synthesis keeps each corpus's drafts as it finishes them, so a
stop midway loses one corpus at most. Each stage's folder holds the key of what it was made from
(`stage_keys`: its recipe tables and the stage before it): an edited recipe reruns the first stage
it touches and those after it (new mix caps: filter to card; new corpora: all). The files a user reads (`data/`, `exports/`, `card.json`, `README.md`)
are put in DIR only after every stage finished, each by an atomic rename: nothing half-written.

Deterministic: every order is sorted or a seeded hash, the seeds are the recipe's, no time is
written, so the same recipe on the same pins gives the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import read_seed_file
from codesearch_core.dataset.card import (
    CARD_JSON,
    CARD_README,
    card_json_text,
    card_markdown,
    diversity,
    funnel,
    mix,
    wordings,
)
from codesearch_core.dataset.items import (
    PLAN_TOOL,
    Item,
    export_row,
    item_from_blueprint,
    item_from_draft,
    item_line,
    read_items,
    read_runs,
    spans_of,
    verify_items,
    write_runs,
)
from codesearch_core.dataset.recipe import Recipe
from codesearch_core.dataset.select import read_drop_list, rules_too_wrong, select
from codesearch_core.errors import InputFileError, StoreError
from codesearch_core.export import (
    Observer,
    code_version,
    single_call_records,
    tool_versions,
    write_jsonl_atomic,
)
from codesearch_core.models import RunResult, sha256_hex
from codesearch_core.store import Draft
from codesearch_core.synthesis import (
    Judge,
    NothingToMineError,
    TemplateWriter,
    subject_of,
    synthesize,
)
from codesearch_core.tools import parse_tool_call

STAGES: Final = ("synthesize", "verify", "second_opinion", "filter", "split", "export", "card")
#: The verify stage's runs of single calls, by item id (`_observer`).
RUNS: Final = "runs.jsonl"
WORK: Final = ".work"
KEY: Final = ".key"
SPLITS: Final = ("train", "eval")


class BuildInterrupted(Exception):
    """A stop was asked for: the stages finished so far are kept for the next run."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


@dataclass(frozen=True, slots=True)
class Hooks:
    """How a build reports and is stopped: `on_stage(stage, resumed)` when a stage starts (or is
    found done), `on_progress(stage, done, total)` within one, `should_stop()` between units."""

    on_stage: Callable[[str, bool], None] = lambda stage, resumed: None
    on_progress: Callable[[str, int, int | None], None] = lambda stage, done, total: None
    should_stop: Callable[[], bool] = lambda: False


@dataclass(frozen=True, slots=True)
class BuildResult:
    out: Path
    card: dict[str, Any]
    resumed: tuple[str, ...]  # stages found done by an earlier run


class _DraftList:
    """A `DraftSink` that keeps a run's drafts in memory (a build writes files, not a store)."""

    def __init__(self) -> None:
        self.drafts: list[Draft] = []

    def add(self, draft: Draft) -> bool:
        self.drafts.append(draft)
        return True


#: The recipe tables each stage reads (beyond what the stages before it read).
STAGE_INPUTS: Final[dict[str, tuple[str, ...]]] = {
    "synthesize": ("corpora", "synthesis"),  # and the seed files' bytes, wherever they are
    "verify": ("verify",),
    "second_opinion": (),  # the rules' checks: the code's version, in every key
    "filter": ("filters", "mix"),
    "split": ("split",),
    "export": ("export",),
    "card": ("dataset",),
}


def _file_text(path: Path | None) -> str:
    return path.read_text(encoding="utf-8") if path is not None and path.is_file() else ""


def stage_keys(recipe: Recipe) -> dict[str, str]:
    """What each stage's output was made from: its tables of the recipe, and the key of the
    stage before it (so an edit reruns that stage and those after it, never those before). The
    corpora's snapshots, the seed files' and the drop list's bytes count, as does the code's
    version; the card's key is the whole recipe's text, which it embeds."""
    tables = tomllib.loads(recipe.text)
    extra = {
        "synthesize": "\n".join(
            [*(f"{c.name} {c.snapshot}" for c in recipe.corpora),
             *(_file_text(f) for f in recipe.seed_files)]),
        "filter": _file_text(recipe.filters.drop) + _file_text(recipe.filters.rule_errors),
        "card": recipe.text,
    }  # fmt: skip
    keys: dict[str, str] = {}
    previous = code_version()
    for stage in STAGES:
        read = {t: tables.get(t) for t in STAGE_INPUTS[stage]}
        previous = sha256_hex(
            f"{previous}\n{json.dumps(read, sort_keys=True, default=str)}\n{extra.get(stage, '')}"
        )
        keys[stage] = previous
    return keys


class _Work:
    """The stages' folders under DIR/.work, each with the key it was made for."""

    def __init__(self, out: Path, keys: dict[str, str]) -> None:
        self.root = out / WORK
        self.keys = keys
        self.root.mkdir(parents=True, exist_ok=True)
        stale = False
        for stage in STAGES:
            for path in (self.root / stage, self.root / f".{stage}.partial"):
                stale = stale or (path.is_dir() and _key(path) != keys[stage])
                if stale and path.exists():
                    shutil.rmtree(path)  # made for another recipe: this stage and the later ones

    def done(self, stage: str) -> Path | None:
        path = self.root / stage
        return path if path.is_dir() else None

    def partial(self, stage: str) -> Path:
        path = self.root / f".{stage}.partial"
        path.mkdir(exist_ok=True)
        (path / KEY).write_text(self.keys[stage])
        return path

    def finish(self, stage: str) -> Path:
        os.replace(self.root / f".{stage}.partial", self.root / stage)
        return self.root / stage


def _key(path: Path) -> str | None:
    try:
        return (path / KEY).read_text()
    except OSError:
        return None


def _write_lines(path: Path, items: Sequence[Item]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        for item in items:
            fh.write(item_line(item))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def build_dataset(recipe: Recipe, out: Path, hooks: Hooks | None = None) -> BuildResult:
    """Run the recipe's stages into `out` (resuming finished ones); raises BuildInterrupted when
    stopped, StoreError when a file cannot be written (DIR keeps what it had)."""
    hooks = hooks or Hooks()
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputFileError(f"{out} is a file; give a folder for the data set")
    try:
        work = _Work(out, stage_keys(recipe))
        resumed: list[str] = []
        for stage in STAGES:
            found = work.done(stage)
            hooks.on_stage(stage, found is not None)
            if found is None:
                if hooks.should_stop():
                    raise BuildInterrupted(stage)
                partial = work.partial(stage)
                _RUN[stage](recipe, work, partial, hooks)
                work.finish(stage)
            else:
                resumed.append(stage)
        card = json.loads((work.root / "card" / CARD_JSON).read_text(encoding="utf-8"))
        _put_in_place(work, out)
    except OSError as err:
        raise StoreError(
            f"could not write the data set in {out}: {err.strerror or err}; the stages finished "
            "so far are kept, run the build again to go on"
        ) from err
    return BuildResult(out, card, tuple(resumed))


# --- the stages --------------------------------------------------------------------------------


def _synthesize(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    s = recipe.synthesis
    for n, pin in enumerate(recipe.corpora):
        path = part / f"{pin.name}.jsonl"
        if path.is_file():
            continue  # made by an earlier run that was stopped on a later corpus
        if hooks.should_stop():
            raise BuildInterrupted("synthesize")
        sink = _DraftList()
        try:
            report = synthesize(
                pin.name, writer=TemplateWriter(), sink=sink, limit=s.limit, seed=s.seed,
                workers=s.workers, should_stop=hooks.should_stop, rules=s.rules or None,
            )  # fmt: skip
        except NothingToMineError:
            report = None
        if report is not None and report.stopped:
            raise BuildInterrupted("synthesize")
        items = sorted((item_from_draft(d) for d in sink.drafts), key=lambda i: i["id"])
        # The counts first: the drafts' file is what marks the corpus done.
        (part / f"{pin.name}.counts.json").write_text(
            json.dumps(report.counts.to_dict() if report else {"nothing_to_mine": True},
                       sort_keys=True) + "\n")  # fmt: skip
        _write_lines(path, items)
        hooks.on_progress("synthesize", n + 1, len(recipe.corpora))
    names = set(recipe.corpus_names)
    seeds = [
        item_from_blueprint(bp)
        for file in recipe.seed_files
        for bp in read_seed_file(file)
        if bp.corpus in names
    ]
    _write_lines(part / "seeds.jsonl", sorted(seeds, key=lambda i: i["id"]))


def _drafted(work: _Work, recipe: Recipe) -> list[Item]:
    stage = work.root / "synthesize"
    items: list[Item] = read_items(stage / "seeds.jsonl")
    for name in recipe.corpus_names:
        items += read_items(stage / f"{name}.jsonl")
    unique = {i["id"]: i for i in items}  # a seed and a draft never share an id; a repeat is one
    return sorted(unique.values(), key=lambda i: i["id"])


def _verify(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    items = _drafted(work, recipe)
    v = recipe.verification
    runs: dict[str, RunResult] = {}
    verified = verify_items(
        items, timeout_s=v.timeout_s, workers=v.workers, should_stop=hooks.should_stop,
        on_progress=lambda done: hooks.on_progress("verify", done, len(items)), runs=runs,
    )  # fmt: skip
    if verified is None:
        raise BuildInterrupted("verify")
    _write_lines(part / "items.jsonl", verified)
    write_runs(part / RUNS, runs)  # the export's observations are these runs'


def _second_opinion(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    """Each verified synthesized item judged by its rule's checks (`synthesis.second_opinion`):
    those whose expected spans leave out what the intent asks, or hold what it leaves out, are
    dropped with the reason, counted for the card's funnel and listed in `dropped.jsonl`. Seeds
    are hand-written and checked (`seeds audit`): they pass as they are."""
    items = read_items(work.root / "verify" / "items.jsonl")
    judged = [i for i in items if i["source"] == "synthesis" and i["verified"]["ok"]]
    verdicts = Judge(timeout_s=recipe.verification.timeout_s).judge_all(
        [subject_of(i) for i in judged], workers=recipe.verification.workers,
        on_progress=lambda done: hooks.on_progress("second_opinion", done, len(judged)),
        should_stop=hooks.should_stop,
    )  # fmt: skip
    if verdicts is None:
        raise BuildInterrupted("second_opinion")
    dropped = {i["id"]: why for i, why in zip(judged, verdicts, strict=True) if why}
    _write_lines(part / "items.jsonl", [i for i in items if i["id"] not in dropped])
    with (part / "dropped.jsonl").open("w", encoding="utf-8") as fh:
        for item_id, why in sorted(dropped.items()):
            fh.write(json.dumps({"id": item_id, "why": why}) + "\n")
    counts = {"judged": len(judged), "dropped": dict(sorted(Counter(dropped.values()).items()))}
    (part / "counts.json").write_text(json.dumps(counts, sort_keys=True) + "\n")


def _filter(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    items = read_items(work.root / "second_opinion" / "items.jsonl")
    drop_path = recipe.filters.drop
    drop = set()
    if drop_path is not None and drop_path.is_file():
        drop = read_drop_list(drop_path.read_text(encoding="utf-8").splitlines())
    chosen = select(items, recipe.filters, recipe.mix, drop, recipe.synthesis.seed,
                    too_wrong=rules_too_wrong(recipe.filters))  # fmt: skip
    if not chosen.kept:
        raise InputFileError(
            f"{recipe.path}: no item is left after the filters and mix caps (dropped: "
            f"{dict(sorted(chosen.dropped.items()))}); loosen [filters] or [mix]"
        )
    _write_lines(part / "items.jsonl", chosen.kept)
    (part / "dropped.json").write_text(json.dumps(dict(sorted(chosen.dropped.items()))) + "\n")


def _split(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    items = read_items(work.root / "filter" / "items.jsonl")
    for side in SPLITS:
        _write_lines(
            part / f"{side}.jsonl", [i for i in items if recipe.split.side(i["corpus"]) == side]
        )


def _observer(work: _Work, items: Iterable[Item]) -> Observer:
    """The verify stage's runs of `items`, handed to the observed layouts (running every call
    again cost export as much as verification): they ran on the same pinned corpora."""
    runs = read_runs(work.root / "verify" / RUNS)
    return Observer(
        (parse_tool_call(i["reference"]), i["corpus"], runs[i["id"]])
        for i in items
        if i["id"] in runs
    )


def _export(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    files: dict[str, dict[str, Any]] = {}
    sides = {side: read_items(work.root / "split" / f"{side}.jsonl") for side in SPLITS}
    # The observed layouts share each call's run.
    observer = _observer(work, (i for items in sides.values() for i in items))
    for side, items in sides.items():
        # A plan is several calls; every layout here holds one call per answer (as exports do).
        rows = [(export_row(i), spans_of(i)) for i in items if i["tool"] != PLAN_TOOL]

        def stoppable(rows: list[Any] = rows) -> Iterator[Any]:
            # An observed layout runs every call: a stop is heard between rows, not after the file.
            for row in rows:
                if hooks.should_stop():
                    raise BuildInterrupted("export")
                yield row

        for fmt in recipe.exports.formats:
            if hooks.should_stop():
                raise BuildInterrupted("export")
            rel = f"exports/{fmt.value}/{side}.jsonl"
            (part / rel).parent.mkdir(parents=True, exist_ok=True)
            result = write_jsonl_atomic(
                part / rel,
                single_call_records(
                    fmt, stoppable(), with_meta=recipe.exports.with_meta, observer=observer
                ),
            )
            files.setdefault(fmt.value, {})[side] = {"path": rel, "rows": result.rows,
                                                     "sha256": result.sha256}  # fmt: skip
    (part / "files.json").write_text(json.dumps(files, sort_keys=True) + "\n")


def _card(recipe: Recipe, work: _Work, part: Path, hooks: Hooks) -> None:
    synth = {}
    for name in recipe.corpus_names:
        path = work.root / "synthesize" / f"{name}.counts.json"
        synth[name] = json.loads(path.read_text(encoding="utf-8"))
    drafted = _drafted(work, recipe)
    verified = read_items(work.root / "verify" / "items.jsonl")
    kept = read_items(work.root / "filter" / "items.jsonl")
    splits = {side: read_items(work.root / "split" / f"{side}.jsonl") for side in SPLITS}
    second = json.loads((work.root / "second_opinion" / "counts.json").read_text())
    filtered = json.loads((work.root / "filter" / "dropped.json").read_text())
    card = {
        "name": recipe.name,
        "license": recipe.license,
        "recipe": {
            "path": recipe.path.name,
            "sha256": sha256_hex(recipe.text),
            "text": recipe.text,
        },
        "corpora": {c.name: c.snapshot for c in recipe.corpora},
        "tools": {**tool_versions(), "codesearch-gym": code_version()},
        "stages": {
            "drafted": len(drafted),
            "seeds": sum(1 for i in drafted if i["source"] == "seed"),
            "verified_ok": sum(1 for i in verified if i["verified"]["ok"]),
            "kept": len(kept),
            "dropped": filtered,
            "synthesis": synth,
        },
        "funnel": funnel(drafted, verified, second, filtered, len(kept)),
        "splits": {
            side: {
                "items": len(items),
                "corpora": sorted({i["corpus"] for i in items}),
                "file": f"data/{side}.jsonl",
            }
            for side, items in splits.items()
        },
        "mix": mix(kept),
        "diversity": diversity(i["intent"] for i in kept),
        "wordings": wordings(kept),
        "exports": json.loads((work.root / "export" / "files.json").read_text()),
    }
    (part / CARD_JSON).write_text(card_json_text(card), encoding="utf-8")
    (part / CARD_README).write_text(card_markdown(card), encoding="utf-8")


_RUN: Final[dict[str, Callable[[Recipe, _Work, Path, Hooks], None]]] = {
    "synthesize": _synthesize, "verify": _verify, "second_opinion": _second_opinion,
    "filter": _filter, "split": _split,
    "export": _export, "card": _card,
}  # fmt: skip


def final_files(work_root: Path) -> list[tuple[Path, str]]:
    """(file under .work, its path in DIR) for every file a user reads."""
    pairs = [(work_root / "split" / f"{side}.jsonl", f"data/{side}.jsonl") for side in SPLITS]
    exports = work_root / "export" / "exports"
    pairs += [
        (p, str(p.relative_to(work_root / "export"))) for p in sorted(exports.rglob("*.jsonl"))
    ]
    pairs += [
        (work_root / "card" / CARD_JSON, CARD_JSON),
        (work_root / "card" / CARD_README, CARD_README),
    ]
    return pairs


def _put_in_place(work: _Work, out: Path) -> None:
    """Copy every final file beside its place, synced, then rename each over its final name: a
    reader never sees a half-written file, and a failed copy leaves DIR as it was."""
    staged: list[tuple[Path, Path]] = []
    tmp: Path | None = None
    try:
        for source, rel in final_files(work.root):
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            shutil.copyfile(source, tmp)
            with tmp.open("rb") as fh:
                os.fsync(fh.fileno())
            staged.append((tmp, target))
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        for done, _ in staged:
            done.unlink(missing_ok=True)
        raise
    for done, target in staged:
        os.replace(done, target)
    # A format the recipe no longer exports: its files from an earlier build would pass for this
    # build's.
    kept = {target for _, target in staged}
    for old in sorted((out / "exports").rglob("*.jsonl")):
        if old not in kept:
            old.unlink()
    for folder in sorted((out / "exports").glob("*/"), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
