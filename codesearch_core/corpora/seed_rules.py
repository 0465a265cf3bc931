"""The rules a shipped seed file keeps beyond those of any blueprint file.

Tags come from a fixed vocabulary, so counts by category mean something:

- category tags, chosen by the author (`CATEGORY_TAGS`): the trap the seed is about;
- derived tags, which must say exactly what the reference call does: `lang:<language>`,
  `tool:ripgrep` or `tool:ast-grep`, and one `flag:<name>` per option the call sets (`FLAG_TAGS`).

Other rules: an adversarial seed carries counter-calls (the natural wrong calls its category is
about); a seed expects nothing exactly when it is tagged `empty-answer`; a seed is tagged `plan`
exactly when its reference is a plan; every expected span ends
within its file; every expected file is pinned by the sha256 of its bytes (`codesearch seeds pin`
writes the pins), so editing a corpus file under a seed is an error that names the seed, not a
silently shifted span.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from codesearch_core import config
from codesearch_core.corpora.blueprints import read_blueprints_jsonl, write_blueprints_jsonl
from codesearch_core.corpora.snapshot import check_folder
from codesearch_core.errors import CorpusError, InputFileError
from codesearch_core.models import Blueprint, ToolCall, ToolName
from codesearch_core.tools import resolve_in_corpus

ADVERSARIAL: Final = "adversarial:"

#: What `codesearch seeds audit` holds a seed to: a counter-call (or one step of a plan) scoring
#: above WEAK_ABOVE makes the seed weak; a keyword rg call may reach KEYWORD_HIT on at most
#: KEYWORD_SHARE of the ast-grep seeds; first lines only may score at most FIRST_LINE_MAX on a
#: seed whose spans are mostly multi-line constructs.
WEAK_ABOVE: Final = 0.7
KEYWORD_HIT: Final = 0.9
KEYWORD_SHARE: Final = 0.10
FIRST_LINE_MAX: Final = 0.6

#: Category tag -> what a seed with it is about (docs/corpora.md's table is built from the same words).
CATEGORY_TAGS: Final[Mapping[str, str]] = {
    "adversarial:structure-vs-text": "only a structural search finds the construct; text over- or under-matches",
    "adversarial:pcre2": "the regex needs PCRE2 (look-around, back-reference)",
    "adversarial:type-filter": "the file-type filter decides what counts",
    "adversarial:unicode": "non-ASCII text that an ASCII spelling misses",
    "adversarial:comment-string": "comments and strings mention the thing; only code counts",
    "adversarial:scope": "vendored, generated or ignored files must be scoped out (paths, globs)",
    "adversarial:multiline": "a match spans lines",
    "adversarial:case": "case decides the match",
    "adversarial:fixed-strings": "regex metacharacters in a literal",
    "empty-answer": "nothing in the corpus fits: the right call finds nothing",
    "plan": "two or three steps",
}  # fmt: skip

#: Derived flag tag -> the reference-call option it stands for.
FLAG_TAGS: Final[Mapping[str, str]] = {
    "flag:pcre2": "pcre2",
    "flag:type": "file_types",
    "flag:glob": "globs",
    "flag:paths": "paths",
    "flag:ignore-case": "case_sensitive=false",
    "flag:smart-case": "smart_case",
    "flag:word": "word",
    "flag:fixed-strings": "fixed_strings",
    "flag:multiline": "multiline",
    "flag:rule": "rule (the ast-grep rule form)",
}
TOOL_TAGS: Final[Mapping[ToolName, str]] = {
    ToolName.RIPGREP: "tool:ripgrep",
    ToolName.AST_GREP: "tool:ast-grep",
}


def flag_tags(call: ToolCall) -> set[str]:
    """The `flag:` tags a call's options give it."""
    args = call.arguments
    tags = {
        tag
        for tag, key in (
            ("flag:pcre2", "pcre2"),
            ("flag:type", "file_types"),
            ("flag:glob", "globs"),
            ("flag:paths", "paths"),
            ("flag:smart-case", "smart_case"),
            ("flag:word", "word"),
            ("flag:fixed-strings", "fixed_strings"),
            ("flag:multiline", "multiline"),
            ("flag:rule", "rule"),
        )
        if args.get(key)
    }
    if args.get("case_sensitive") is False:
        tags.add("flag:ignore-case")
    return tags


def derived_tags(bp: Blueprint) -> set[str]:
    """The `lang:`, `tool:` and `flag:` tags the blueprint's language and reference give it (every
    step's, for a plan, and then `plan` too)."""
    tags = {f"lang:{bp.language}"} | ({"plan"} if bp.plan else set())
    for call in bp.reference_calls:
        tags |= {TOOL_TAGS[call.name]} | flag_tags(call)
    return tags


def sha256_file(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def seed_problems(bp: Blueprint, corpora_dir: Path) -> list[str]:
    """What is wrong with one seed against the vocabulary and its corpus (empty when nothing)."""
    problems: list[str] = []
    tags = set(bp.tags)
    derived = derived_tags(bp)
    for tag in sorted(tags - derived - set(CATEGORY_TAGS)):
        if tag.startswith(("lang:", "tool:", "flag:")):
            problems.append(f"tag {tag!r} does not match the reference call (its tags: "
                            f"{', '.join(sorted(derived))})")  # fmt: skip
        else:
            problems.append(f"unknown tag {tag!r} (category tags: {', '.join(CATEGORY_TAGS)})")
    for tag in sorted(derived - tags):
        problems.append(f"missing tag {tag!r} (derived from the language and reference call)")
    if not bp.expected and "empty-answer" not in tags:
        problems.append("expects no finding but is not tagged 'empty-answer'")
    if bp.expected and "empty-answer" in tags:
        problems.append("is tagged 'empty-answer' but expects findings")
    if "plan" in tags and bp.plan is None:
        problems.append("is tagged 'plan' but its reference is a single call")
    if any(t.startswith(ADVERSARIAL) for t in tags) and not bp.counter_calls:
        problems.append("an adversarial seed needs counter_calls (the natural wrong calls)")
    root = corpora_dir / bp.corpus
    pins = dict(bp.pins)
    for path in sorted({s.path for s in bp.expected}):
        try:
            file = resolve_in_corpus(root, path)
            data = file.read_bytes()
        except (CorpusError, OSError):
            problems.append(f"expected file {path} is not in corpus {bp.corpus}")
            continue
        last = max(s.end_line for s in bp.expected if s.path == path)
        if last > _line_count(data):
            problems.append(f"an expected span of {path} ends at line {last}, past the end of the "
                            f"file ({_line_count(data)} lines)")  # fmt: skip
        digest = hashlib.sha256(data).hexdigest()
        if path not in pins:
            problems.append(f"{path} is not pinned (run `codesearch seeds pin`)")
        elif pins[path] != digest:
            problems.append(f"{path} changed since the seed was written (pinned sha256 "
                            f"{pins[path][:12]}…, now {digest[:12]}…): re-check its expected spans, "
                            "then run `codesearch seeds pin`")  # fmt: skip
    for path in sorted(set(pins) - {s.path for s in bp.expected}):
        problems.append(f"pins {path}, which no expected span is in")
    return problems


def _line_numbers(path: Path) -> dict[str, int]:
    """Seed id -> its line in the file (the file has already been read whole without error)."""
    numbers: dict[str, int] = {}
    with path.open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                obj: Any = json.loads(line)
                numbers.setdefault(str(obj["id"]), number)
    return numbers


def check_seed_file(
    path: Path, corpora_dir: Path | None = None
) -> tuple[list[Blueprint], list[InputFileError]]:
    """Every seed of a file and every rule it breaks, each error naming the seed and its line.

    A line that is not a valid blueprint at all raises InputFileError (from the blueprint reader).
    """
    blueprints, _ = read_blueprints_jsonl(path)
    lines = _line_numbers(path)
    where = corpora_dir if corpora_dir is not None else config.corpora_dir()
    errors = [
        InputFileError(f"seed {bp.id}: {problem}", source=str(path), line=lines.get(bp.id, 0))
        for bp in blueprints
        for problem in seed_problems(bp, where)
    ]
    return blueprints, errors


def read_seed_file(path: Path, corpora_dir: Path | None = None) -> list[Blueprint]:
    """The seeds of a file; the first broken rule raises InputFileError naming seed and line."""
    blueprints, errors = check_seed_file(path, corpora_dir)
    if errors:
        raise errors[0]
    return blueprints


def pin_seed_file(path: Path, corpora_dir: Path | None = None) -> int:
    """Rewrite the file with each seed's expected files pinned to their current sha256, and the
    corpus's snapshot id.

    Returns how many seeds changed. Only run it after checking the expected spans still hold.
    """
    blueprints, _ = read_blueprints_jsonl(path)
    where = corpora_dir if corpora_dir is not None else config.corpora_dir()
    out: list[Blueprint] = []
    changed = 0
    for bp in blueprints:
        root = where / bp.corpus
        pins = tuple(
            sorted(
                (p, sha256_file(resolve_in_corpus(root, p))) for p in {s.path for s in bp.expected}
            )
        )
        snapshot = check_folder(root).content_id
        changed += pins != bp.pins or snapshot != bp.snapshot
        out.append(replace(bp, pins=pins, snapshot=snapshot))
    write_blueprints_jsonl(path, out)
    return changed
