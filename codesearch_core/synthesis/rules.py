"""The rule templates synthesis mines a corpus with: one row per kind of fact, per language family.

A template is either *fixed* (one reference call, e.g. "catch blocks that log nothing") or
*discovered*: a discovery call lists the corpus's own subjects (the functions it calls, the
decorators it uses, the owners its TODOs name) and each subject gives one reference call. The
templates say nothing about a corpus; what they find there is the mining's job (`synthesis.mine`).

Each template carries its intent wordings (several, so drafts do not all read alike), a difficulty
and, for text (rg) templates, the naive text searches a model would fall back on: the baselines the
reference must beat clearly (ast-grep templates get the seed audit's keyword baselines).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core.models import Difficulty

Arguments = dict[str, Any]

#: A callee, decorator or owner we can put into a pattern verbatim: dotted identifiers only.
SUBJECT_RE: Final = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*){0,3}$")
_CALLEE_RE: Final = re.compile(r"^\s*(?:await\s+)?(?:new\s+)?([A-Za-z_$][\w$.]*)\s*\(", re.S)

JS_FAMILY: Final = ("javascript", "typescript", "tsx")
#: Languages whose call syntax is `name(args)` for ast-grep's pattern parser.
CALL_LANGUAGES: Final = (
    *JS_FAMILY, "python", "java", "kotlin", "rust", "c", "cpp", "csharp", "ruby", "php", "scala",
    "swift", "lua",
)  # fmt: skip
LANGUAGE_LABELS: Final[Mapping[str, str]] = {
    "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TSX", "python": "Python",
    "java": "Java", "kotlin": "Kotlin", "rust": "Rust", "c": "C", "cpp": "C++", "csharp": "C#",
    "ruby": "Ruby", "php": "PHP", "scala": "Scala", "swift": "Swift", "lua": "Lua", "go": "Go",
}  # fmt: skip
#: Text files config keys live in (rg globs).
CONFIG_GLOBS: Final = ("*.env", "*.ini", "*.properties", "*.cfg", "*.conf", "*.toml")


def callee_of(text: str) -> str | None:
    """`DB.query` from the text of a call finding `DB.query(sql, ...)`; None when not a plain name."""
    m = _CALLEE_RE.match(text)
    return m.group(1) if m and SUBJECT_RE.match(m.group(1)) else None


def decorator_of(text: str) -> str | None:
    name = text.strip().removeprefix("@").split("(", 1)[0].strip()
    return name if SUBJECT_RE.match(name) else None


def first_group(text: str, regex: re.Pattern[str]) -> str | None:
    m = regex.search(text)
    return m.group(1) if m and SUBJECT_RE.match(m.group(1)) else None


_FUNCTION_KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    "javascript": ("function_declaration", "method_definition", "arrow_function"),
    "typescript": ("function_declaration", "method_definition", "arrow_function"),
    "tsx": ("function_declaration", "method_definition", "arrow_function"),
    "python": ("function_definition",),
}
_LOGGING: Final[Mapping[str, tuple[str, ...]]] = {
    "javascript": ("console.$M($$$A)", "logger.$M($$$A)", "log.$M($$$A)"),
    "typescript": ("console.$M($$$A)", "logger.$M($$$A)", "log.$M($$$A)"),
    "tsx": ("console.$M($$$A)", "logger.$M($$$A)"),
    "python": ("logger.$M($$$A)", "logging.$M($$$A)", "log.$M($$$A)", "print($$$A)"),
}
_CATCH_KIND: Final[Mapping[str, str]] = {
    "javascript": "catch_clause", "typescript": "catch_clause", "tsx": "catch_clause",
    "python": "except_clause",
}  # fmt: skip


def _functions(language: str) -> dict[str, Any]:
    kinds = _FUNCTION_KINDS[language]
    return {"kind": kinds[0]} if len(kinds) == 1 else {"any": [{"kind": k} for k in kinds]}


@dataclass(frozen=True, slots=True)
class RuleTemplate:
    """One kind of fact. `reference(language, subject)` builds the call's arguments."""

    id: str
    tool: str  # "ast_grep_search" | "ripgrep_search"
    languages: tuple[str, ...]  # ast-grep languages; () for text rules (any corpus)
    reference: Callable[[str, str], Arguments]
    intents: tuple[str, ...]  # wordings: {subject}, {lang}, {what}
    difficulty: Difficulty = Difficulty.MEDIUM
    #: Discovery: a call's arguments (by language) and how a finding's text names its subject.
    discover: Callable[[str], Arguments] | None = None
    subject_of: Callable[[str], str | None] | None = None
    #: Naive text searches (rg arguments) for text rules: the baseline the reference must beat.
    naive: Callable[[str], tuple[Arguments, ...]] = lambda _subject: ()
    tags: tuple[str, ...] = ()
    #: What the subject is, for wordings ("the function", "the owner").
    what: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


def _call_ref(language: str, subject: str) -> Arguments:
    return {"pattern": f"{subject}($$$ARGS)", "language": language}


def _await_ref(language: str, subject: str) -> Arguments:
    return {"pattern": f"await {subject}($$$ARGS)", "language": language}


def _new_ref(language: str, subject: str) -> Arguments:
    return {"pattern": f"new {subject}($$$ARGS)", "language": language}


def _fn_calling_ref(language: str, subject: str) -> Arguments:
    rule = {**_functions(language), "has": {"pattern": f"{subject}($$$ARGS)", "stopBy": "end"}}
    return {"rule": rule, "language": language}


def _async_awaiting_ref(language: str, subject: str) -> Arguments:
    rule = {
        **_functions(language),
        "regex": "^async",
        "has": {"pattern": f"await {subject}($$$ARGS)", "stopBy": "end"},
    }
    return {"rule": rule, "language": language}


def _catch_silent_ref(language: str, _subject: str) -> Arguments:
    logging = [{"pattern": p} for p in _LOGGING[language]]
    rule = {"kind": _CATCH_KIND[language], "not": {"has": {"any": logging, "stopBy": "end"}}}
    return {"rule": rule, "language": language}


def _catch_logging_ref(language: str, _subject: str) -> Arguments:
    logging = [{"pattern": p} for p in _LOGGING[language]]
    rule = {"kind": _CATCH_KIND[language], "has": {"any": logging, "stopBy": "end"}}
    return {"rule": rule, "language": language}


def _decorated_ref(language: str, subject: str) -> Arguments:
    decorator = {"kind": "decorator", "regex": f"^@{re.escape(subject)}\\b"}
    return {"rule": {"kind": "decorated_definition", "has": decorator}, "language": language}


def _todo_ref(_language: str, owner: str) -> Arguments:
    return {"pattern": rf"\b(?:TODO|FIXME)\({re.escape(owner)}\)"}


_SECRET_WORDS: Final = ("password", "secret", "token", "api_key")


def _secret_ref(_language: str, word: str) -> Arguments:
    # An assignment with a value: `password=...`, `db_password: "..."`; an empty value is not one.
    return {"pattern": rf"(?i)\b\w*{word}\w*\s*[:=]\s*['\"]?[^\s'\"]"}


def _config_key_ref(_language: str, prefix: str) -> Arguments:
    return {"pattern": rf"^\s*{re.escape(prefix)}_[A-Z0-9_]*\s*=", "globs": list(CONFIG_GLOBS)}


def _log_level_ref(_language: str, level: str) -> Arguments:
    return {"pattern": rf"^\S+\s+{level}\b", "globs": ["*.log"]}


_TODO_DISCOVERY: Final = re.compile(r"\b(?:TODO|FIXME)\(([\w.-]+)\)")
_CONFIG_DISCOVERY: Final = re.compile(r"^\s*([A-Z][A-Z0-9]*)_[A-Z0-9_]*\s*=")
_LOG_DISCOVERY: Final = re.compile(r"^\S+\s+([A-Z]{4,5})\b")

_CALL_WORDS: Final = (
    "Find every call to {subject} in the {lang} code",
    "Where is {subject} called? Only the {lang} sources",
    "List the {lang} call sites of {subject}, with their arguments",
    "Show me each place the {lang} code invokes {subject}",
    "Every invocation of {subject} in {lang} files, not mentions in comments or strings",
)

TEMPLATES: Final[tuple[RuleTemplate, ...]] = (
    RuleTemplate(
        "call", "ast_grep_search", CALL_LANGUAGES, _call_ref, _CALL_WORDS, Difficulty.EASY,
        discover=lambda lang: {"pattern": "$F($$$ARGS)", "language": lang}, subject_of=callee_of,
        tags=("adversarial:structure-vs-text",), what="function",
    ),
    RuleTemplate(
        "await-call", "ast_grep_search", (*JS_FAMILY, "python"), _await_ref,
        ("Find the awaited calls to {subject} in the {lang} code",
         "Where does the {lang} code await {subject}?",
         "List every `await` of {subject} ({lang})"),
        Difficulty.MEDIUM,
        discover=lambda lang: {"pattern": "await $F($$$ARGS)", "language": lang},
        subject_of=callee_of, tags=("adversarial:structure-vs-text",), what="function",
    ),
    RuleTemplate(
        "new", "ast_grep_search", (*JS_FAMILY, "java", "kotlin", "csharp", "php"), _new_ref,
        ("Find where {subject} objects are constructed in the {lang} code",
         "Every `new {subject}(...)` expression in {lang} files",
         "Where does the {lang} code instantiate {subject}?"),
        Difficulty.EASY,
        discover=lambda lang: {"pattern": "new $C($$$ARGS)", "language": lang},
        subject_of=callee_of, tags=("adversarial:structure-vs-text",), what="class",
    ),
    RuleTemplate(
        "function-calling", "ast_grep_search", (*JS_FAMILY, "python"), _fn_calling_ref,
        ("Find the whole {lang} functions that call {subject}",
         "Which {lang} functions call {subject} somewhere in their body? Give the functions",
         "List every {lang} function or method whose body calls {subject}"),
        Difficulty.MEDIUM,
        discover=lambda lang: {"pattern": "$F($$$ARGS)", "language": lang}, subject_of=callee_of,
        tags=("adversarial:structure-vs-text",), what="function",
    ),
    RuleTemplate(
        "async-awaiting", "ast_grep_search", (*JS_FAMILY, "python"), _async_awaiting_ref,
        ("Find the async {lang} functions that await {subject}",
         "Which async functions in the {lang} code wait on {subject}? The whole functions",
         "List the {lang} async functions with an `await {subject}(...)` in them"),
        Difficulty.HARD,
        discover=lambda lang: {"pattern": "await $F($$$ARGS)", "language": lang},
        subject_of=callee_of, tags=("adversarial:structure-vs-text",), what="function",
    ),
    RuleTemplate(
        "catch-silent", "ast_grep_search", (*JS_FAMILY, "python"), _catch_silent_ref,
        ("Find the {lang} error handlers that swallow the error without logging it",
         "Which catch/except blocks in the {lang} code log nothing?",
         "List the {lang} exception handlers with no logging call in them"),
        Difficulty.HARD, tags=("adversarial:structure-vs-text",),
    ),
    RuleTemplate(
        "catch-logging", "ast_grep_search", (*JS_FAMILY, "python"), _catch_logging_ref,
        ("Find the {lang} error handlers that log the error",
         "Which catch/except blocks in the {lang} code write to a logger or the console?"),
        Difficulty.MEDIUM, tags=("adversarial:structure-vs-text",),
    ),
    RuleTemplate(
        "decorated", "ast_grep_search", ("python",), _decorated_ref,
        ("Find the Python definitions decorated with @{subject}",
         "Which functions or classes carry the @{subject} decorator? The whole definitions",
         "List everything decorated with @{subject} in the Python code"),
        Difficulty.MEDIUM,
        discover=lambda lang: {"rule": {"kind": "decorator"}, "language": lang},
        subject_of=decorator_of, tags=("adversarial:structure-vs-text",), what="decorator",
        naive=lambda name: ({"pattern": f"@{name}", "fixed_strings": True, "file_types": ["py"]},),
    ),
    RuleTemplate(
        "todo-owner", "ripgrep_search", (), _todo_ref,
        ("Find the TODO and FIXME notes assigned to {subject}",
         "What work is {subject} down for? Their TODO(...) markers",
         "List every TODO({subject}) or FIXME({subject}) in the repository"),
        Difficulty.EASY,
        discover=lambda _lang: {"pattern": _TODO_DISCOVERY.pattern},
        subject_of=lambda text: first_group(text, _TODO_DISCOVERY),
        naive=lambda owner: ({"pattern": owner, "fixed_strings": True},
                             {"pattern": "TODO", "fixed_strings": True}),
        tags=("adversarial:decoys",), what="owner",
    ),
    *(
        RuleTemplate(
            f"secret-{word}", "ripgrep_search", (), _secret_ref,
            ("Find assignments that set a {subject} to a value (secrets in the code or config)",
             "Where is a {subject} written down with its value? Assignments only",
             "List every line that assigns something to a *{subject}* key or variable"),
            Difficulty.MEDIUM,
            naive=lambda w: ({"pattern": w, "case_sensitive": False},),
            tags=("adversarial:decoys",), extra={"subject": word},
        )
        for word in _SECRET_WORDS
    ),
    RuleTemplate(
        "config-key", "ripgrep_search", (), _config_key_ref,
        ("Find the {subject}_* settings in the config files",
         "Which config keys start with {subject}_? The lines that set them",
         "List every {subject}_ setting assigned in .env, .ini or .properties files"),
        Difficulty.EASY,
        discover=lambda _lang: {"pattern": _CONFIG_DISCOVERY.pattern, "globs": list(CONFIG_GLOBS)},
        subject_of=lambda text: first_group(text, _CONFIG_DISCOVERY),
        naive=lambda prefix: ({"pattern": f"{prefix}_", "fixed_strings": True},),
        tags=("adversarial:decoys",), what="prefix",
    ),
    RuleTemplate(
        "log-level", "ripgrep_search", (), _log_level_ref,
        ("Find the {subject} entries in the log files",
         "Which log lines were written at level {subject}? Not the code that mentions it",
         "List the {subject}-level records of the logs"),
        Difficulty.EASY,
        discover=lambda _lang: {"pattern": _LOG_DISCOVERY.pattern, "globs": ["*.log"]},
        subject_of=lambda text: first_group(text, _LOG_DISCOVERY),
        naive=lambda level: ({"pattern": level, "fixed_strings": True},),
        tags=("adversarial:decoys",), what="level",
    ),
)  # fmt: skip


def templates_for(languages: frozenset[str]) -> list[tuple[RuleTemplate, str]]:
    """(template, language) pairs to mine in a corpus with files in `languages`; text rules once
    (language "")."""
    out: list[tuple[RuleTemplate, str]] = []
    for template in TEMPLATES:
        if template.tool == "ripgrep_search":
            out.append((template, ""))
        else:
            out.extend((template, lang) for lang in template.languages if lang in languages)
    return out
