"""Every occurrence of many patterns in one `rg` pass, lean: (path, line, text) triples, no
`Finding`s, no JSON.

For work that asks one question of a whole corpus many times over (synthesis: which files call
each of 5,000 functions, which lines hold each of 2,000 keywords), one rg process with every
pattern costs about what one search costs, where a process per pattern costs the corpus read each
time. rg prints `-o` matches as `path NUL line:text`; each match's text is closed by a record
separator (`-r '$0<RS>'`), so a multi-line match (`-U`) is still one record. The flags that make a
result depend on the corpus alone are the runner's (`--no-config --no-ignore`); this is not a
graded call and has no schema: callers build the patterns.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from codesearch_core.errors import CodesearchError
from codesearch_core.tools.argv import RG_COMMON_FLAGS
from codesearch_core.tools.binaries import rg_path
from codesearch_core.tools.parsers import strip_dot_slash

_RS: Final = "\x1e"
_END: Final = "\x1e\n"

Occurrence = tuple[str, int, str]
"""(corpus-relative path, 1-based line of the match's start, the printed text)."""


def rg_occurrences(
    patterns: Sequence[str],
    corpus_root: Path,
    *,
    replace: str = "$0",
    fixed_strings: bool = False,
    ignore_case: bool = False,
    multiline: bool = False,
    file_types: Sequence[str] = (),
    globs: Sequence[str] = (),
    timeout_s: float = 300.0,
) -> list[Occurrence]:
    """Each match of any of `patterns` (rg's leftmost-first among them) over the corpus, its text
    replaced by `replace` (rg's `-r`: `$1` prints the first group). CodesearchError when rg
    fails."""
    if not patterns:
        return []
    argv = [rg_path(), *RG_COMMON_FLAGS, "--only-matching", "--line-number", "--null",
            "--with-filename", "--no-heading", "--color=never", f"--replace={replace}{_RS}"]  # fmt: skip
    if fixed_strings:
        argv.append("--fixed-strings")
    if ignore_case:
        argv.append("--ignore-case")
    if multiline:
        argv.append("--multiline")
    for name in file_types:
        argv += ["--type", name]
    for glob in globs:
        argv += ["--glob", glob]
    for pattern in patterns:
        argv += ["--regexp", pattern]
    argv += ["--", "."]
    try:
        done = subprocess.run(
            argv, cwd=corpus_root, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=timeout_s, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise CodesearchError(f"rg took longer than {timeout_s:.0f} s") from None
    if done.returncode not in (0, 1):  # 1: nothing matched
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise CodesearchError(f"rg exited {done.returncode}: {detail[0]}")
    return parse_occurrences(done.stdout.decode("utf-8", "replace"))


def parse_occurrences(output: str) -> list[Occurrence]:
    """The records of `rg -o -n --null --with-filename -r '...<RS>'`: each line of a multi-line
    match repeats the `path NUL line:` prefix, which is taken off again."""
    out: list[Occurrence] = []
    append = out.append
    paths: dict[str, str] = {}  # rg prints each file's path once per match: strip it once
    for record in output.split(_END):
        if not record:
            continue
        path, _, rest = record.partition("\0")
        line, _, text = rest.partition(":")
        if "\n" in text:
            first, *more = text.split("\n")
            text = "\n".join([first, *(m.partition("\0")[2].partition(":")[2] for m in more)])
        rel = paths.get(path)
        if rel is None:
            rel = paths[path] = strip_dot_slash(path)
        append((rel, int(line), text))
    return out
