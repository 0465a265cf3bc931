"""The second opinion: do an item's expected spans hold what its intent asks, found by other means
than its own reference call?

Verification proves only that a reference call reproduces its own spans; it cannot see an intent
that asks for more (a call of `click.echo` when the reference looked for `echo(...)` only) or for
less (a quote inside a comment counted as a string literal). The searches a reader of the intent
would also count are declared as `Check`s (`models.Check`: a synthesis rule declares them per
subject, a seed in its own line), and a `Judge` runs them on the whole corpus, as the intent asks:

- a `covers` check finds what must be in the answer: a line it finds outside every expected span
  is an in-scope match the reference missed (`missed:<why>`);
- an `excludes` check finds what must not be: an expected span holding a line it finds is a match
  the intent leaves out (`included:<why>`).

A check that cannot run (a language the tool cannot parse, a timeout, a truncated run) is a
disagreement too (`second_opinion_failed:<why>`), and so is an item whose checks source declares
none (`no_second_opinion`): an item nobody could check is not kept unchecked. (`codesearch seeds
audit` asks `judge_by` with a seed's own checks, and reports a seed that declares none apart.)

An ast-grep check of an item with a subject matches code that holds the subject's last name (a
call of `echo`, the string `'utf-8'`), so it runs only on the files that hold that text: a parse
of every file of a language costs a second a run on the large corpora, and a data set has
thousands of items. Runs are cached by (corpus, tool, arguments), since the items of one subject
share their checks.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

from codesearch_core.corpora import corpus_root
from codesearch_core.models import Check, RunResult, Span
from codesearch_core.tools import DEFAULT_TIMEOUT_S, parse_tool_call, rg_occurrences, run_tool_call

#: A check may find this many lines at most: more is a search too broad to judge an item by.
MAX_CHECK_FINDINGS: Final = 5_000
NO_SECOND_OPINION: Final = "no_second_opinion"

#: Where a judge finds an item's checks: `(rule, language, subject) -> checks`, None for none.
CheckSource = Callable[[str, str, str], tuple[Check, ...] | None]


@dataclass(frozen=True, slots=True)
class Subject:
    """What an item is about: its rule, the language its rule ran for ("" for a rule with no
    language), its subject ("" for a fixed rule or a seed) and its expected spans."""

    corpus: str
    rule: str
    language: str
    subject: str
    expected: tuple[Span, ...]


def no_checks(_rule: str, _language: str, _subject: str) -> tuple[Check, ...] | None:
    """The default checks source: none declared, for every item."""
    return None


class Judge:
    """Runs checks (each once per corpus and arguments: items of one subject share them) and
    judges items by them. Thread-safe: `judge_all` runs items on a few threads, since the work is
    the tools' processes."""

    def __init__(
        self, timeout_s: float = DEFAULT_TIMEOUT_S, checks: CheckSource = no_checks
    ) -> None:
        self.timeout_s = timeout_s
        self.checks = checks
        self._runs: dict[tuple[str, str, str], RunResult | str] = {}
        self._files: dict[tuple[str, str], tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def _holding(self, corpus: str, text: str) -> tuple[str, ...]:
        """The corpus's files that hold `text` (one lean rg pass, cached)."""
        key = (corpus, text)
        with self._lock:
            found = self._files.get(key)
        if found is None:
            hits = rg_occurrences([text], corpus_root(corpus), fixed_strings=True)
            found = tuple(sorted({path for path, _, _ in hits}))
            with self._lock:
                self._files[key] = found
        return found

    def run(self, corpus: str, check: Check, subject: str) -> RunResult | str:
        """The check's run on the corpus, or why it could not run."""
        args_json = json.dumps(check.arguments, sort_keys=True)
        key = (corpus, check.tool, args_json)
        with self._lock:
            cached = self._runs.get(key)
        if cached is not None:
            return cached
        result = self._run(corpus, check, subject)
        with self._lock:
            self._runs[key] = result
        return result

    def _run(self, corpus: str, check: Check, subject: str) -> RunResult | str:
        try:
            call = parse_tool_call({"name": check.tool, "arguments": dict(check.arguments)})
        except Exception as err:  # a check the schema refuses is its author's bug: say which
            return f"bad_check:{check.why}:{type(err).__name__}"
        files: tuple[str, ...] | None = None
        if check.tool == "ast_grep_search" and subject:
            files = self._holding(corpus, subject.rsplit(".", 1)[-1])
            if not files:
                return RunResult(ok=True, findings=())
        run = run_tool_call(call, corpus_root(corpus), restrict_files=files,
                            timeout_s=self.timeout_s, max_findings=MAX_CHECK_FINDINGS)  # fmt: skip
        if not run.ok:
            kind = run.error_kind.value if run.error_kind is not None else "error"
            return f"second_opinion_failed:{kind}"
        if run.truncated:
            return "second_opinion_failed:too_many"
        return run

    def judge(self, item: Subject) -> str:
        """ "" when every check of the item's checks source agrees with its expected spans, else
        why not (`no_second_opinion` when the source declares none)."""
        checks = self.checks(item.rule, item.language, item.subject)
        if checks is None:
            return NO_SECOND_OPINION
        return self.judge_by(item, checks)

    def judge_by(self, item: Subject, checks: Sequence[Check]) -> str:
        """ "" when every one of `checks` agrees with the item's expected spans, else why not."""
        by_path: dict[str, list[Span]] = {}
        for span in item.expected:
            by_path.setdefault(span.path, []).append(span)
        for check in checks:
            run = self.run(item.corpus, check, item.subject)
            if isinstance(run, str):
                return run
            why = _disagreement(check, run, by_path)
            if why:
                return why
        return ""

    def judge_all(
        self,
        items: Sequence[Subject],
        workers: int = 2,
        on_progress: Callable[[int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> list[str] | None:
        """Each item's verdict, in order; None when `should_stop` cut the run short."""
        out: list[str] = []
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for verdict in pool.map(self.judge, items):
                if should_stop is not None and should_stop():
                    pool.shutdown(wait=True, cancel_futures=True)
                    return None
                out.append(verdict)
                if on_progress is not None:
                    on_progress(len(out))
        return out


def _inside(path: str, line: int, by_path: Mapping[str, Iterable[Span]]) -> bool:
    return any(s.start_line <= line <= s.end_line for s in by_path.get(path, ()))


def _disagreement(check: Check, run: RunResult, by_path: Mapping[str, Sequence[Span]]) -> str:
    if check.mode == "covers":
        for f in run.findings:
            if not _inside(f.path, f.start_line, by_path):
                return f"missed:{check.why}"
        return ""
    lines = {(f.path, line) for f in run.findings for line in range(f.start_line, f.end_line + 1)}
    for path, spans in by_path.items():
        for s in spans:
            if any((path, line) in lines for line in range(s.start_line, s.end_line + 1)):
                return f"included:{check.why}"
    return ""
