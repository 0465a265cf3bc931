"""Code as the studio shows it: a file tree, windows of lines around a span, and lines marked as
hit / miss / extra, rendered to self-contained HTML (escaped; no script, no external styles).

`st.code` highlights syntax but cannot mark lines, so marked views are rendered here; the app shows
plain files with `st.code` and marked ones with this HTML.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Final

from codesearch_core import corpora
from codesearch_core.tools import resolve_in_corpus


class Tone(StrEnum):
    """Why a line is marked; each tone has its own colour and a word for screen readers."""

    MATCH = "match"  # an ad-hoc search's hit
    HIT = "hit"  # expected and found
    MISS = "miss"  # expected, not found
    EXTRA = "extra"  # found, not expected


_COLOURS: Final[dict[Tone, tuple[str, str]]] = {
    # (line background, gutter accent); light enough for dark text, distinct without colour vision.
    Tone.MATCH: ("#fff3bf", "#f59f00"),
    Tone.HIT: ("#d3f9d8", "#2f9e44"),
    Tone.MISS: ("#ffe3e3", "#e03131"),
    Tone.EXTRA: ("#fff3bf", "#f08c00"),
}


# Inline styles only: st.html sanitizes its input, and a page may hold many blocks.
_GUTTER_STYLE: Final = (
    "display:inline-block;min-width:3.5em;padding:0 10px 0 6px;color:#868e96;"
    "text-align:right;user-select:none"
)
_MARK_STYLE: Final = "background:#ffd43b;color:inherit;padding:0;border-radius:2px"


@dataclass(frozen=True, slots=True)
class Mark:
    """Lines `start_line..end_line` (1-based, inclusive) marked with `tone`.

    `start_col`/`end_col` (1-based, end exclusive) narrow the mark to the matched text within the
    first and last line; 0 means the whole line.
    """

    start_line: int
    end_line: int
    tone: Tone
    start_col: int = 0
    end_col: int = 0


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One row of a file tree in depth-first order: a directory (path ends with "/") or a file."""

    path: str
    name: str
    depth: int
    is_dir: bool


def _tree_order(p: PurePosixPath) -> tuple[tuple[int, str], ...]:
    # A directory part sorts before any file part at the same level: folders first, as in editors.
    return (*((0, part) for part in p.parts[:-1]), (1, p.name))


def file_tree(paths: Iterable[str]) -> tuple[TreeEntry, ...]:
    """Directories and files in depth-first order, directories before files at each level.

    A directory whose only entry is another directory is folded into it, as editors do
    (`src/main/java/com/example/` is one row), so deep package paths do not push names off screen.
    """
    files = sorted({PurePosixPath(p) for p in paths}, key=_tree_order)
    children: dict[PurePosixPath, set[PurePosixPath]] = {}
    for p in files:
        chain = [p, *p.parents[:-1]]  # the file, then its directories up to the top one
        for child, parent in itertools.pairwise(chain):
            children.setdefault(parent, set()).add(child)

    def folded(d: PurePosixPath) -> bool:
        # `d` is shown inside its only child directory's row.
        kids = children.get(d, set())
        return len(kids) == 1 and next(iter(kids)) in children

    entries: list[TreeEntry] = []
    seen_dirs: set[PurePosixPath] = set()
    for p in files:
        depth = 0
        shown_from: PurePosixPath | None = None  # the first directory of a folded chain
        for parent in reversed(p.parents[:-1]):
            shown_from = shown_from or parent
            if folded(parent):
                continue
            if parent not in seen_dirs:
                seen_dirs.add(parent)
                name = parent.relative_to(shown_from.parent).as_posix()
                entries.append(TreeEntry(f"{parent.as_posix()}/", name, depth, True))
            shown_from = None
            depth += 1
        entries.append(TreeEntry(p.as_posix(), p.name, depth, False))
    return tuple(entries)


def line_window(
    n_lines: int, start_line: int, end_line: int, *, context: int = 2, max_lines: int = 40
) -> tuple[int, int]:
    """The 1-based inclusive line range to show for a span: the span plus `context` lines each side,
    at most `max_lines` long (a long span is cut at its end), clamped to the file."""
    first = max(1, start_line - context)
    last = min(max(n_lines, 1), end_line + context, first + max_lines - 1)
    return first, max(first, last)


def hit_windows(
    n_lines: int, marks: Sequence[Mark], *, context: int = 3, max_lines: int = 40
) -> list[tuple[int, int]]:
    """Line ranges that show every mark with `context` lines around it; ranges that touch or overlap
    are merged, so two hits three lines apart are one block, not two."""
    windows: list[tuple[int, int]] = []
    for mark in sorted(marks, key=lambda m: (m.start_line, m.end_line)):
        first, last = line_window(
            n_lines, mark.start_line, mark.end_line, context=context, max_lines=max_lines
        )
        if windows and first <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], max(windows[-1][1], last))
        else:
            windows.append((first, last))
    return windows


def _marked_line(text: str, line_no: int, marks: Sequence[Mark]) -> tuple[str, Tone | None]:
    """The escaped line with the matched columns wrapped in <mark>, and the tone of the line."""
    covering = [m for m in marks if m.start_line <= line_no <= m.end_line]
    if not covering:
        return html.escape(text), None
    mark = covering[0]
    if not mark.start_col:
        return html.escape(text), mark.tone
    lo = mark.start_col - 1 if line_no == mark.start_line else 0
    hi = mark.end_col - 1 if line_no == mark.end_line and mark.end_col else len(text)
    lo, hi = max(0, min(lo, len(text))), max(0, min(hi, len(text)))
    if hi <= lo:
        return html.escape(text), mark.tone
    matched = f'<mark style="{_MARK_STYLE}">{html.escape(text[lo:hi])}</mark>'
    return f"{html.escape(text[:lo])}{matched}{html.escape(text[hi:])}", mark.tone


def render_lines_html(
    lines: Sequence[str],
    *,
    first_line: int = 1,
    marks: Sequence[Mark] = (),
    title: str = "",
    max_height_px: int | None = None,
) -> str:
    """`lines` (numbered from `first_line`) as an HTML code block with marked lines highlighted."""
    rows: list[str] = []
    for offset, text in enumerate(lines):
        line_no = first_line + offset
        body, tone = _marked_line(text.rstrip("\n"), line_no, marks)
        if tone is None:
            style, label = "", ""
        else:
            background, accent = _COLOURS[tone]
            style = f' style="background:{background};box-shadow:inset 3px 0 0 {accent}"'
            label = f' title="{tone.value}"'
        rows.append(
            f'<div{style}{label}><span style="{_GUTTER_STYLE}">{line_no}</span>{body or " "}</div>'
        )
    scroll = f"max-height:{max_height_px}px;overflow:auto;" if max_height_px else ""
    header = (
        f'<div style="font:600 12px sans-serif;color:#495057;padding:4px 8px;'
        f'border-bottom:1px solid #e9ecef">{html.escape(title)}</div>'
        if title
        else ""
    )
    return (
        '<div style="border:1px solid #dee2e6;border-radius:6px;background:#f8f9fa;'
        'margin:2px 0 10px 0">'
        f"{header}"
        f'<div style="{scroll}font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;'
        'white-space:pre;overflow-x:auto;padding:4px 0;color:#212529">'
        f"{''.join(rows)}</div></div>"
    )


def marked_window_html(
    lines: Sequence[str], mark: Mark, *, context: int = 2, max_lines: int = 40, title: str = ""
) -> str:
    """The lines around one mark, numbered as in the file."""
    first, last = line_window(
        len(lines), mark.start_line, mark.end_line, context=context, max_lines=max_lines
    )
    return render_lines_html(lines[first - 1 : last], first_line=first, marks=[mark], title=title)


def file_mtime_ns(corpus_name: str, rel: str) -> int:
    """The modification time of a corpus file (a cache key for its text); CorpusError if outside."""
    path = resolve_in_corpus(corpora.corpus_root(corpus_name), rel)
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def file_size(corpus_name: str, rel: str) -> int:
    """A corpus file's size in bytes (0 when it cannot be read); CorpusError if outside."""
    path = resolve_in_corpus(corpora.corpus_root(corpus_name), rel)
    try:
        return path.stat().st_size
    except OSError:
        return 0
