"""A tool's answer as a model is shown it: one `path:line: text` line per match, clipped and
cut after a count, and the closing sentence that names what a search found.

One definition for every place a model reads a tool's output: the gym's observations, the
exports' observation turns and the studio's trajectory view. It sits with the tools, below both
the gym and the exports, so neither depends on the other for it (issue 38).
"""

from __future__ import annotations

from typing import Final

from codesearch_core.models import RunResult

#: What an observation turn shows: a model trained on it learns what the tool returns, and a
#: search that matched 10,000 lines must not put 10,000 lines into one training row.
OBSERVATION_MAX_MATCHES: Final = 20
OBSERVATION_MAX_LINE: Final = 200
#: How many locations the closing answer names.
SUMMARY_MAX_LOCATIONS: Final = 10


def _clip(text: str, limit: int = OBSERVATION_MAX_LINE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _location(path: str, start: int, end: int) -> str:
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def observation_text(run: RunResult) -> str:
    """The tool's answer as the model sees it: one `path:line: text` line per match (the first
    line of a multi-line match), cut after `OBSERVATION_MAX_MATCHES` with a count of the rest."""
    if not run.ok:
        kind = run.error_kind.value if run.error_kind is not None else "error"
        return f"error ({kind}): {run.error}"
    if not run.findings:
        return "no matches"
    lines = []
    for finding in run.findings[:OBSERVATION_MAX_MATCHES]:
        first = finding.text.splitlines()[0] if finding.text else ""
        where = _location(finding.path, finding.start_line, finding.end_line)
        lines.append(f"{where}: {_clip(first.strip())}")
    rest = len(run.findings) - OBSERVATION_MAX_MATCHES
    if rest > 0:
        lines.append(f"... {rest} more matches")
    if run.truncated:
        lines.append("... (output truncated by the tool runner)")
    return "\n".join(lines)


def summary_text(run: RunResult) -> str:
    """The closing assistant turn after the observation: what the search found, by location.

    Matches are counted as the observation counts them, one per finding (ripgrep reports each
    match on a line, so a line can hold several); the locations named are distinct, and said how
    many when fewer than the matches, so that the row's two turns agree."""
    if not run.ok:
        return f"The search failed: {run.error}"
    spans = sorted({(f.path, f.start_line, f.end_line) for f in run.findings})
    if not spans:
        return "The search found no matches."
    files = len({path for path, _, _ in spans})
    shown = ", ".join(_location(*span) for span in spans[:SUMMARY_MAX_LOCATIONS])
    rest = len(spans) - SUMMARY_MAX_LOCATIONS
    more = f", and {rest} more" if rest > 0 else ""
    found = len(run.findings)
    matches = "match" if found == 1 else "matches"
    at = f" at {len(spans)} locations" if len(spans) < found else ""
    in_files = "file" if files == 1 else "files"
    return f"Found {found} {matches}{at} in {files} {in_files}: {shown}{more}."
