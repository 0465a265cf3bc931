"""The text baselines of a batch of targets, measured together: one rg pass per kind of search.

A target's baselines are the plain text searches a model would fall back on: for ast-grep targets
the seed audit's keyword searches (each literal piece of the pattern as `rg -F`, with the
language's type filter), and each template's naive searches. Run one by one, each is a whole-corpus
rg run (a corpus read: 0.3-1 s on 20k files); measured here, every baseline of a batch that is a
literal (`-F`, or a regex without metacharacters) with the same flags shares one `rg_occurrences`
pass with all their literals, and each literal's lines are read back from it: a line holds the
literal when some match printed on it contains it (rg prints, at each position, the longest of
the literals, so `DB.query` on a line also gives it to `query`). A literal that only overlaps
another one's match is not seen on that line; baselines decide which targets are kept, they are
not data, and a baseline that errs this way only scores lower. Any other baseline runs alone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from codesearch_core.corpora import corpus_root
from codesearch_core.grading import score
from codesearch_core.models import Finding, RunResult, ToolCall, ToolName
from codesearch_core.synthesis.mine import Target
from codesearch_core.tools import parse_tool_call, rg_occurrences, run_tool_call
from codesearch_core.verify import baseline_calls

#: The arguments a shared pass can serve: the literal, its case, the file filter.
_SHAREABLE: Final = frozenset({"pattern", "fixed_strings", "case_sensitive", "file_types", "globs"})
_META: Final = re.compile(r"[\\.+*?()|\[\]{}^$]")

Shape = tuple[bool, tuple[str, ...], tuple[str, ...]]
"""(ignore case, file types, globs): the flags of a shared pass."""


def baselines_of(target: Target) -> list[tuple[str, ToolCall]]:
    """(label, call) of each text baseline of a target."""
    out: list[tuple[str, ToolCall]] = []
    if target.call.name is ToolName.AST_GREP:
        blueprint = target.as_blueprint()
        out += [(label, c) for kind, label, c, _ in baseline_calls(blueprint) if kind == "keyword"]
    for arguments in target.template.naive(target.subject):
        try:
            call = parse_tool_call({"name": ToolName.RIPGREP.value, "arguments": dict(arguments)})
        except Exception:  # a naive search the schema refuses is not run
            continue
        out.append((f"rg {arguments['pattern']!r}", call))
    return out


def _shape(call: ToolCall) -> Shape | None:
    args: Mapping[str, Any] = call.arguments
    if not set(args) <= _SHAREABLE:
        return None
    if not args.get("fixed_strings") and _META.search(str(args["pattern"])):
        return None
    return (
        args.get("case_sensitive") is False,
        tuple(str(t) for t in args.get("file_types", ())),
        tuple(str(g) for g in args.get("globs", ())),
    )


def _shared_pass(
    root: Any, shape: Shape, literals: Sequence[str]
) -> dict[str, list[tuple[str, int]]]:
    """literal -> the lines holding it, from one rg pass with all of them."""
    ignore_case, file_types, globs = shape
    # Longest first: at a position where several literals start, rg prints the first that
    # matches, and the longer one contains the shorter.
    ordered = sorted(set(literals), key=lambda s: (-len(s), s))
    found = rg_occurrences(ordered, root, fixed_strings=True, ignore_case=ignore_case,
                           file_types=file_types, globs=globs)  # fmt: skip
    by_text: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for path, line, text in found:
        by_text[text.casefold() if ignore_case else text].add((path, line))
    out: dict[str, list[tuple[str, int]]] = {}
    for literal in ordered:
        key = literal.casefold() if ignore_case else literal
        lines: set[tuple[str, int]] = set()
        for text, where in by_text.items():
            if key in text:
                lines |= where
        out[literal] = sorted(lines)
    return out


def _run_of(lines: Sequence[tuple[str, int]]) -> RunResult:
    """The run a line-level text search with these matching lines gives, for grading (lines are
    all the grade reads when the expected spans carry no byte ranges)."""
    findings = tuple(Finding(path, line, 1, line, 1, 0, 0, "", None) for path, line in lines)
    return RunResult(ok=True, findings=findings)


def measure_baselines(corpus: str, targets: Sequence[Target]) -> list[tuple[float | None, str]]:
    """(the best baseline's total reward, its label) of each target; (None, "") when a target has
    no baseline."""
    root = corpus_root(corpus)
    plans = [baselines_of(t) for t in targets]
    shared: dict[Shape, set[str]] = defaultdict(set)
    for plan in plans:
        for _, call in plan:
            shape = _shape(call)
            if shape is not None:
                shared[shape].add(str(call.arguments["pattern"]))
    passes = {shape: _shared_pass(root, shape, sorted(lits)) for shape, lits in shared.items()}
    out: list[tuple[float | None, str]] = []
    for target, plan in zip(targets, plans, strict=True):
        best: float | None = None
        label = ""
        for name, call in plan:
            shape = _shape(call)
            if shape is None:
                run = run_tool_call(call, root)
            else:
                run = _run_of(passes[shape][str(call.arguments["pattern"])])
            total = score(run, call, target.expected)[1].total
            if best is None or total > best:
                best, label = total, name
        out.append((best, label))
    return out
