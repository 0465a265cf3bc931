"""The domain's data types, defined once, validated at the edges and trusted inside.

Flow (see STYLE.md): ToolCall -> argv -> process -> stream parser -> Finding -> Grade -> store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

import msgspec

from codesearch_core.errors import ErrorKind


class ToolName(StrEnum):
    AST_GREP = "ast_grep_search"
    RIPGREP = "ripgrep_search"


def canonical_json(value: Any) -> str:
    """One text per value: sorted keys, no whitespace, UTF-8 kept. Hashes are taken over this."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    # "surrogatepass": a lone surrogate (valid JSON `"\ud800"`, so possible in model text) would
    # make plain UTF-8 raise; valid text encodes exactly as UTF-8, so no existing hash changes.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One validated tool call. Build it with `schemas.parse_tool_call` so it is always schema-valid."""

    name: ToolName
    arguments: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name.value, "arguments": dict(self.arguments)}

    def to_json(self) -> str:
        return canonical_json(self.to_dict())

    @property
    def call_hash(self) -> str:
        return sha256_hex(self.to_json())

    def __hash__(self) -> int:
        return hash(self.to_json())


@dataclass(frozen=True, slots=True)
class PlanStep:
    call: ToolCall
    # When true the step only searches the files that the previous step found (rg narrows, ast-grep confirms).
    restrict_to_previous: bool = False


@dataclass(frozen=True, slots=True)
class Plan:
    steps: tuple[PlanStep, ...]


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """An expected finding: a file and an inclusive, 1-based line range.

    `supporting` marks a blueprint's expected span as context rather than the answer (Prime's
    essential / supporting gold spans): the grade neither requires it nor penalises submitting it
    (`grading.spans`). Not part of equality: it says how a span is graded, not which span it is.
    """

    path: str
    start_line: int
    end_line: int
    supporting: bool = field(default=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
        }
        if self.supporting:  # only when marked: an unmarked span's JSON is what it always was
            d["supporting"] = True
        return d


class Finding(msgspec.Struct, frozen=True, order=True, gc=False):
    """One match, normalized across tools.

    `path` is POSIX and relative to the corpus root. Lines are 1-based and inclusive; columns are
    1-based character columns; `byte_start`/`byte_end` are offsets in the file (end exclusive).

    A msgspec Struct rather than a dataclass because a search can yield 100k of them: a frozen
    dataclass costs ~1.3 us to build (one `object.__setattr__` per field) and is GC-tracked, a
    Struct ~0.1 us and untracked. It behaves the same (frozen, ordered, hashable, keyword or
    positional construction); use `msgspec.structs.replace`/`to_dict` instead of `dataclasses.*`.
    """

    path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    byte_start: int
    byte_end: int
    text: str
    language: str | None = None
    #: Never marked: only a blueprint's expected `Span` is (a Finding may stand for one when
    #: graded). A class constant, not a field: nothing encodes or compares it.
    supporting: ClassVar[bool] = False

    @property
    def span(self) -> Span:
        return Span(self.path, self.start_line, self.end_line)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "start_col": self.start_col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "byte_start": self.byte_start,
            "byte_end": self.byte_end,
            "text": self.text,
            "language": self.language,
        }

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Finding:
        return Finding(
            path=str(d["path"]),
            start_line=int(d["start_line"]),
            start_col=int(d["start_col"]),
            end_line=int(d["end_line"]),
            end_col=int(d["end_col"]),
            byte_start=int(d["byte_start"]),
            byte_end=int(d["byte_end"]),
            text=str(d["text"]),
            language=None if d.get("language") is None else str(d["language"]),
        )


@dataclass(frozen=True, slots=True)
class RunResult:
    """What executing a call (or a plan) produced. `ok` is false exactly when `error_kind` is set."""

    ok: bool
    findings: tuple[Finding, ...]
    stderr: str = ""
    return_code: int | None = None
    elapsed_s: float = 0.0
    truncated: bool = False
    error_kind: ErrorKind | None = None
    error: str = ""
    argv: tuple[str, ...] = ()
    steps: tuple[RunResult, ...] = ()  # one per plan step; empty for a single call
    #: What the caller should know about an ok run, e.g. a pattern ast-grep read as another
    #: construct (`tools.pattern_check`), so that its 0 findings say nothing.
    warnings: tuple[str, ...] = ()


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class Split(StrEnum):
    """Which side of the held-out line a blueprint is on: `eval` blueprints are left out of every
    export unless asked (a model is not scored on what it trained on)."""

    TRAIN = "train"
    EVAL = "eval"


@dataclass(frozen=True, slots=True)
class CounterCall:
    """A natural wrong call for a blueprint's intent, written by its author as the strongest wrong
    call they could find (`codesearch seeds audit` runs it; the preference export rejects it)."""

    call: ToolCall
    why: str


@dataclass(frozen=True, slots=True)
class Check:
    """One search of a second opinion (`verify.second_opinion`): what a reader of the intent would
    also count, or would leave out, found by other means than the reference call. A synthesis rule
    declares its checks per subject (`synthesis.rule_kinds.RuleTemplate.second`); a seed declares
    its own (`Blueprint.second_opinion`).

    `mode="covers"`: every line this search finds must lie inside one of the expected spans (a line
    outside is an in-scope match the reference missed: `missed:<why>`). `mode="excludes"`: no
    expected span may hold a line this search finds (a comment, a definition: `included:<why>`).
    It runs on the whole corpus, as the intent asks, with the real tool (`tool`: "ripgrep_search"
    or "ast_grep_search"; `arguments` its arguments, schema-checked when it runs)."""

    tool: str
    arguments: Mapping[str, Any]
    mode: Literal["covers", "excludes"]
    why: str


@dataclass(frozen=True, slots=True)
class Blueprint:
    """A verifiable task: an intent, the right call for it, and what that call must find.

    `pins` maps each expected file to the sha256 of its bytes when the expected spans were written,
    so a later edit of the corpus file is caught instead of silently moving the spans.
    """

    id: str
    intent: str
    reference_call: ToolCall
    corpus: str
    expected: tuple[Span, ...]
    language: str
    tags: tuple[str, ...] = ()
    difficulty: Difficulty = Difficulty.MEDIUM
    notes: str = ""
    counter_calls: tuple[CounterCall, ...] = ()
    pins: tuple[tuple[str, str], ...] = ()
    #: A plan seed's reference: two or three steps; `reference_call` is then its last step (the
    #: step whose findings are the plan's), so single-call consumers still see a call.
    plan: Plan | None = None
    #: The corpus snapshot id (`corpora.snapshot`) the expected spans were computed on; None when
    #: not known (written before pinning). Not part of equality: the same task on the same corpus
    #: is the same blueprint whichever snapshot checked it last.
    snapshot: str | None = field(default=None, compare=False)
    split: Split = Split.TRAIN
    #: The seed's second opinion (`codesearch seeds audit` runs it): searches a reader would also
    #: count (`covers`) or would leave out (`excludes`). Kept in the seed file only, not in the
    #: store (a stored blueprint has none), so not part of equality.
    second_opinion: tuple[Check, ...] = field(default=(), compare=False)

    @property
    def essential(self) -> tuple[Span, ...]:
        """The expected spans that are the answer: all but those marked supporting."""
        return tuple(s for s in self.expected if not s.supporting)

    @property
    def reference(self) -> ToolCall | Plan:
        """What to run to reproduce the expected findings: the plan when there is one."""
        return self.plan if self.plan is not None else self.reference_call

    @property
    def reference_calls(self) -> tuple[ToolCall, ...]:
        """Every call of the reference, in order (one, or each step of the plan)."""
        if self.plan is None:
            return (self.reference_call,)
        return tuple(step.call for step in self.plan.steps)

    def reference_dict(self) -> dict[str, Any]:
        """The reference as JSON: a call object, or a plan's `{"steps": [...]}`."""
        if self.plan is None:
            return self.reference_call.to_dict()
        return {
            "steps": [
                {"call": s.call.to_dict(), "restrict_to_previous": s.restrict_to_previous}
                for s in self.plan.steps
            ]
        }

    @property
    def intent_hash(self) -> str:
        return sha256_hex(" ".join(self.intent.split()).casefold())

    @property
    def content_hash(self) -> str:
        """Same intent (modulo case and whitespace) + same call + same corpus = same blueprint."""
        reference = (
            canonical_json(self.reference_dict()) if self.plan else self.reference_call.to_json()
        )
        return sha256_hex(f"{self.intent_hash}\n{self.corpus}\n{reference}")

    @property
    def tool(self) -> ToolName:
        return self.reference_call.name


@dataclass(frozen=True, slots=True)
class Proposal:
    """A tool call a model (or a mutation) suggested for a blueprint's intent, with its provenance."""

    blueprint_id: str
    engine: str
    model: str
    raw_text: str
    call: ToolCall | None
    valid: bool
    error: str = ""
    repairs: tuple[str, ...] = ()
    sampling: Mapping[str, Any] = field(default_factory=dict)
    prompt: str = ""
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    mutation_kind: str | None = None
    parent_id: str | None = None


@dataclass(frozen=True, slots=True)
class Grade:
    """How well predicted findings match the expected spans (see grader.py for the matching rule)."""

    file_iou: float
    span_precision: float
    span_recall: float
    span_f1: float
    n_predicted: int
    n_expected: int
    n_matched: int


@dataclass(frozen=True, slots=True)
class Reward:
    """A scalar reward and the named components it was summed from (R_parse, R_find, ...)."""

    total: float
    components: Mapping[str, float]


class DecisionAction(StrEnum):
    ACCEPT = "accept"
    REJECT = "reject"
    SKIP = "skip"
    UNDO = "undo"
