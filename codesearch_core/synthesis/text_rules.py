"""The text-search (ripgrep) rule templates: what a developer asks `rg` for, per language where the
file type is part of the request (`rules.TEMPLATES` lists them with the ast-grep ones).

Each is a fact a text search answers better than a plain one, and teaches a flag: a type filter
(`-t py`: the TODO notes of the Python code, not of every file), a glob (trailing whitespace in
`*.rs`), a whole word (`-w`), a fixed string (`-F`), case-insensitive (`-i`), PCRE2 look-behinds
(calls of a function that are not awaited) and back-references (a string literal in either quote,
a word written twice). The naive searches are the plain ones a model would try first (the
subject alone, `rg -F`, with or without the type); mining keeps a target only when the reference
beats the best of them clearly, so `os` imported on 3 lines and mentioned on 300 is a task, a
TODO note in the only language that has any is not.

Every pass's regex is its reference's with the subject replaced by a group, so a finding always
lies on a line the pass found (the pass of `not-awaited`, the awaited calls, only names subjects:
`Mining.scoped` is False there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from codesearch_core.models import Difficulty
from codesearch_core.synthesis.rule_kinds import (
    RG_TYPES,
    Arguments,
    Mining,
    RuleTemplate,
    dotted_prefixes,
    plain_subject,
)

_S: Final = "{subject}"
_T = TypeVar("_T")
_DECOYS: Final = ("adversarial:decoys",)

#: A module, header or string a pattern can hold escaped and an intent can quote: no spaces, no
#: quotes, at most 60 characters.
_TOKEN_RE: Final = re.compile(r"^[A-Za-z_@][\w@./:+-]{0,59}$")


def token(text: str) -> tuple[str, ...]:
    return (text,) if _TOKEN_RE.match(text) and not text.endswith((".", "/", "-")) else ()


def path_prefixes(text: str) -> tuple[str, ...]:
    """`std::collections::HashMap` -> `std`, `std::collections`, ... (a Rust `use` path)."""
    parts = text.split("::")
    return tuple(p for i in range(len(parts)) if token(p := "::".join(parts[: i + 1])))


def class_subject(text: str) -> tuple[str, ...]:
    """A raised or thrown class (`ValueError`, `click.BadParameter`), not a variable re-raised."""
    names = plain_subject(text)
    return names if names and names[0].rsplit(".", 1)[-1][:1].isupper() else ()


def dotted_subject(text: str) -> tuple[str, ...]:
    """A method or module function (`self.fetch`, `queue.add`): never its own definition line."""
    return tuple(n for n in plain_subject(text) if "." in n)


def _regex(pattern: str, subject: str) -> str:
    return pattern.replace(_S, re.escape(subject))


def _group(pattern: str, group: str) -> str:
    return pattern.replace(_S, f"({group})")


_NAME: Final = r"[A-Za-z_$][\w$]*"
_DOTTED: Final = rf"{_NAME}(?:\.{_NAME}){{0,3}}"


class _PerLanguage:
    """A reference whose regex depends on the language: `patterns[language]` holds `{subject}`
    where the subject goes, `groups[language]` the regex that mines it."""

    def __init__(
        self,
        patterns: Mapping[str, str],
        groups: Mapping[str, str],
        subjects: Mapping[str, Callable[[str], tuple[str, ...]]],
        **flags: bool,
    ) -> None:
        self.patterns, self.groups, self.subjects, self.flags = patterns, groups, subjects, flags

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.patterns)

    def reference(self, language: str, subject: str) -> Arguments:
        pattern = _regex(self.patterns[language], subject)
        return {"pattern": pattern, "file_types": [RG_TYPES[language]], **self.flags}

    def mining(self, language: str, *, scoped: bool = True) -> Mining:
        return Mining(_group(self.patterns[language], self.groups[language]),
                      (RG_TYPES[language],), subjects=self.subjects[language],
                      scoped=scoped)  # fmt: skip


def _same(value: _T, languages: tuple[str, ...]) -> dict[str, _T]:
    return dict.fromkeys(languages, value)


# Definitions: the keyword that declares a function or method, where it declares all of them.
_DEFINITIONS: Final = _PerLanguage(
    {
        "python": r"^[ \t]*(?:async[ \t]+)?def[ \t]+{subject}[ \t]*\(",
        "rust": r"\bfn[ \t]+{subject}[ \t]*[(<]",
        "go": r"^func[ \t]+(?:\([^)\n]*\)[ \t]*)?{subject}[ \t]*[(\[]",
        "lua": r"\bfunction[ \t]+(?:[\w.]+[.:])?{subject}[ \t]*\(",
        "swift": r"\bfunc[ \t]+{subject}[ \t]*[(<]",
        "kotlin": r"\bfun[ \t]+(?:[\w.]+\.)?{subject}[ \t]*[(<]",
    },
    _same(r"[A-Za-z_]\w*", ("python", "rust", "go", "lua", "swift", "kotlin")),
    _same(plain_subject, ("python", "rust", "go", "lua", "swift", "kotlin")),
)
# `require('x')`, `import('x')`, `import 'x'`, and `from 'x'` ending an import or export statement
# (on its line, or closing a multi-line one): not a comment's "pulls a job from 'waiting'".
_JS_IMPORT: Final = (
    r"(?:\b(?:require|import)[ \t]*\([ \t]*|^[ \t]*(?:import|export)\b[^\n]*?\bfrom[ \t]+"
    r"|^[ \t]*\}[ \t]*from[ \t]+|^[ \t]*import[ \t]+)['\"]{subject}['\"]"
)
_IMPORTS: Final = _PerLanguage(
    {
        "python": r"^[ \t]*(?:from|import)[ \t]+{subject}(?:\.[\w.]+)?(?:[ \t,]|$)",
        "javascript": _JS_IMPORT,
        "typescript": _JS_IMPORT,
        "java": r"^[ \t]*import[ \t]+(?:static[ \t]+)?{subject}(?:\.[\w.*]+)?[ \t]*;",
        "kotlin": r"^[ \t]*import[ \t]+{subject}(?:\.[\w.*]+)?(?:[ \t]|$)",
        "c": r"^[ \t]*#[ \t]*include[ \t]*[<\"]{subject}[>\"]",
        "cpp": r"^[ \t]*#[ \t]*include[ \t]*[<\"]{subject}[>\"]",
        "rust": r"^[ \t]*(?:pub(?:\([\w ]+\))?[ \t]+)?use[ \t]+{subject}(?:::[\w:{}*, ]+)?;",
        "lua": r"\brequire[ \t]*\(?[ \t]*['\"]{subject}['\"]",
        "swift": r"^[ \t]*import[ \t]+{subject}[ \t]*$",
    },
    {
        "python": r"[A-Za-z_][\w.]*", "javascript": r"[@\w][\w@./-]*",
        "typescript": r"[@\w][\w@./-]*", "java": r"[A-Za-z_][\w.]*", "kotlin": r"[A-Za-z_][\w.]*",
        "c": r"[\w][\w./+-]*", "cpp": r"[\w][\w./+-]*", "rust": r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*",
        "lua": r"[\w][\w./-]*", "swift": r"[A-Za-z_]\w*",
    },
    {
        "python": dotted_prefixes, "javascript": token, "typescript": token,
        "java": dotted_prefixes, "kotlin": dotted_prefixes, "c": token, "cpp": token,
        "rust": path_prefixes, "lua": token, "swift": token,
    },
)  # fmt: skip
_THROW: Final = r"\bthrow[ \t]+new[ \t]+{subject}\b"
_RAISES: Final = _PerLanguage(
    {"python": r"\braise[ \t]+{subject}\b", "javascript": _THROW, "typescript": _THROW,
     "java": _THROW},
    _same(_DOTTED, ("python", "javascript", "typescript", "java")),
    _same(class_subject, ("python", "javascript", "typescript", "java")),
)  # fmt: skip
# A string literal that is exactly the subject, in either quote: the back-reference closes it with
# the quote it opened with (PCRE2).
_QUOTED: Final = r"(['\"]){subject}\1"
_LITERAL_LANGUAGES: Final = ("python", "javascript", "typescript", "lua", "ruby", "php")
_LITERALS: Final = _PerLanguage(
    _same(_QUOTED, _LITERAL_LANGUAGES),
    _same(r"[A-Za-z_][\w.-]{1,40}", _LITERAL_LANGUAGES),
    _same(token, _LITERAL_LANGUAGES),
    pcre2=True,
)


def _literal_mining(language: str) -> Mining:
    # rg's default engine has no back-reference: the pass takes either quote on either side,
    # which holds every literal the reference finds.
    return Mining(r"[\"']([A-Za-z_][\w.-]{1,40})[\"']", (RG_TYPES[language],),
                  subjects=token)  # fmt: skip


#: The methods of a logger (and the console) that write a message.
_LEVEL: Final = r"(?:log|trace|debug|info|warn|warning|error|exception|critical|fatal)"
_JS_LOG: Final = r"(?:^|[^\w.$]){subject}[ \t]*\([ \t]*['\"`]"
_LOGS: Final = _PerLanguage(
    {"python": r"(?:^|[^\w.]){subject}[ \t]*\([ \t]*[rbuf]{0,2}['\"]",
     "javascript": _JS_LOG, "typescript": _JS_LOG},
    {"python": rf"(?:logger|logging|log|LOG|self\.log(?:ger)?)\.{_LEVEL}|warnings\.warn|print"
               r"|click\.(?:echo|secho)",
     "javascript": rf"(?:console|logger|log)\.{_LEVEL}|debug",
     "typescript": rf"(?:console|logger|log)\.{_LEVEL}|debug"},
    _same(plain_subject, ("python", "javascript", "typescript")),
)  # fmt: skip
_COMMENT: Final[Mapping[str, str]] = {
    "python": "#", "ruby": "#", "bash": "#", "lua": "--",
    **dict.fromkeys(("javascript", "typescript", "java", "kotlin", "c", "cpp", "rust", "go",
                     "swift", "csharp", "php", "scala"), r"//|/\*|\*"),
}  # fmt: skip
_MARKERS: Final = ("TODO", "FIXME", "XXX", "HACK")
_TODOS: Final = _PerLanguage(
    {lang: rf"(?:{c})[^\n]*?\b{_S}\b" for lang, c in _COMMENT.items()},
    _same("|".join(_MARKERS), tuple(_COMMENT)),
    _same(plain_subject, tuple(_COMMENT)),
)
_AWAIT_LANGUAGES: Final = ("python", "javascript", "typescript")
# Calls of a method or module function that some code awaits, here without `await` before them
# (PCRE2 look-behinds; `.then(...)` chains and returned promises are among them).
_NOT_AWAITED: Final = _PerLanguage(
    _same(r"(?<![\w$.])(?<!await ){subject}[ \t]*\(", _AWAIT_LANGUAGES),
    _same(_DOTTED, _AWAIT_LANGUAGES),
    _same(dotted_subject, _AWAIT_LANGUAGES),
    pcre2=True,
)


def _awaited(language: str) -> Mining:
    return Mining(rf"\bawait[ \t]+({_DOTTED})[ \t]*\(", (RG_TYPES[language],),
                  subjects=dotted_subject, scoped=False)  # fmt: skip


def _word_mining(language: str) -> Mining:
    # The names the language defines more than once; the reference's whole-word mentions lie on
    # other lines than the definitions, so the pass only names them.
    return _DEFINITIONS.mining(language, scoped=False)


def word_ref(language: str, name: str) -> Arguments:
    return {"pattern": name, "fixed_strings": True, "word": True,
            "file_types": [RG_TYPES[language]]}  # fmt: skip


# A word written twice in a row ("the the"), in any case: PCRE2's back-reference with -i. Not C
# and C++, whose `long long` is no typo.
_REPEAT_LANGUAGES: Final = (
    "python", "javascript", "typescript", "java", "rust", "go", "lua", "ruby", "swift", "kotlin",
)  # fmt: skip


def repeated_word_ref(language: str, _subject: str) -> Arguments:
    return {"pattern": r"\b([A-Za-z]{2,})[ \t]+\1\b", "pcre2": True, "case_sensitive": False,
            "file_types": [RG_TYPES[language]]}  # fmt: skip


#: The file name pattern of each language's sources, for the whitespace rules' globs.
_GLOBS: Final[Mapping[str, str]] = {
    "python": "*.py", "javascript": "*.js", "typescript": "*.ts", "java": "*.java", "c": "*.c",
    "cpp": "*.cpp", "rust": "*.rs", "lua": "*.lua", "go": "*.go", "swift": "*.swift",
    "kotlin": "*.kt", "ruby": "*.rb", "php": "*.php", "bash": "*.bash",
}  # fmt: skip


def trailing_space_ref(language: str, _subject: str) -> Arguments:
    return {"pattern": r"[ \t]+$", "globs": [_GLOBS[language]]}


def tab_indent_ref(language: str, _subject: str) -> Arguments:
    return {"pattern": r"^ *\t", "globs": [_GLOBS[language]]}


def _literals(*texts: str) -> tuple[Arguments, ...]:
    return tuple({"pattern": t, "fixed_strings": True} for t in texts)


#: Where a project's documentation lives, for `docs-mention`.
DOC_GLOBS: Final = ("*.rst", "*.md")


def _documented(_language: str) -> Mining:
    # The names the docs quote as code (``name``, `name`, :func:`~name`); the reference's mentions
    # need not be quoted, so the pass only names them.
    return Mining(r"``?~?([A-Za-z_][\w.]{2,60})``?", globs=DOC_GLOBS, subjects=plain_subject,
                  scoped=False)  # fmt: skip


def docs_mention_ref(_language: str, name: str) -> Arguments:
    return {"pattern": name, "fixed_strings": True, "word": True, "globs": list(DOC_GLOBS)}


_FIXED: Final = {"subject": ""}
_WHITESPACE_LANGUAGES: Final = tuple(_GLOBS)

TEXT_TEMPLATES: Final[tuple[RuleTemplate, ...]] = (
    RuleTemplate(
        "definition", "ripgrep_search", _DEFINITIONS.languages, _DEFINITIONS.reference,
        ("Find where functions named `{subject}` are defined in the {lang} code, not called",
         "Which lines of the {lang} sources declare a function or method `{subject}`?",
         "Show every {lang} definition of `{subject}` (the declaring lines only)",
         "Where is `{subject}` declared? All of its {lang} definitions",
         "I need the {lang} lines that define `{subject}`, wherever it is redefined",
         "Locate every declaration of `{subject}` in the {lang} files"),
        Difficulty.EASY, mining=_DEFINITIONS.mining, what="function", tags=("flag:type",),
        naive=lambda s: ({"pattern": s, "word": True},
                         *_literals(*(f"{k} {s}" for k in ("def", "fn", "func", "function", "fun")))),
    ),
    RuleTemplate(
        "word-use", "ripgrep_search", _DEFINITIONS.languages, word_ref,
        ("Find every mention of `{subject}` as a whole word in the {lang} code, not longer names",
         "Where does the {lang} code use the name `{subject}` itself (not names containing it)?",
         "List the {lang} lines that mention `{subject}` as a word of its own",
         "Every whole-word occurrence of `{subject}` in the {lang} files",
         "Show the {lang} lines naming `{subject}` exactly, as a separate identifier",
         "Which {lang} lines refer to `{subject}` and not just to a name that contains it?"),
        Difficulty.EASY, mining=_word_mining, what="name", tags=("flag:word", "flag:type"),
        naive=lambda s: ({"pattern": s, "fixed_strings": True},),
    ),
    RuleTemplate(
        "import", "ripgrep_search", _IMPORTS.languages, _IMPORTS.reference,
        ("Find the lines that import, require or include `{subject}` in the {lang} code",
         "Which {lang} files pull in `{subject}` (or part of it)? The import lines",
         "List every {lang} import of `{subject}` (include, require, use), not its other mentions",
         "Where is `{subject}` imported or included? Only the {lang} sources",
         "Show me the {lang} import statements that bring in `{subject}`",
         "Give the {lang} files' dependency lines on `{subject}` (imports only)"),
        Difficulty.EASY, mining=_IMPORTS.mining, what="module", tags=("flag:type",),
        naive=lambda s: _literals(s, f"import {s}"),
    ),
    RuleTemplate(
        "raise", "ripgrep_search", _RAISES.languages, _RAISES.reference,
        ("Find where the {lang} code raises or throws `{subject}`",
         "Which lines throw a `{subject}`? The {lang} sources only",
         "List the {lang} statements that raise `{subject}`, not where it is caught",
         "Where is a `{subject}` error raised in the {lang} files?"),
        Difficulty.EASY, mining=_RAISES.mining, what="exception", tags=("flag:type",),
        naive=lambda s: ({"pattern": s, "word": True}, *_literals(f"raise {s}", f"throw new {s}")),
    ),
    RuleTemplate(
        "string-literal", "ripgrep_search", _LITERALS.languages, _LITERALS.reference,
        ("Find the string literals that are exactly `{subject}`, in single or double quotes "
         "({lang})",
         "Where does the {lang} code spell out the string `{subject}` (either quote style)?",
         "List every quoted `{subject}` string in the {lang} sources, not the bare word",
         "Which {lang} lines hold the literal string `{subject}`?",
         "Show the {lang} code's quoted `{subject}` values, whatever the quote character",
         "Locate `{subject}` written as a string in the {lang} files (quoted, in full)"),
        Difficulty.MEDIUM, mining=_literal_mining, what="string",
        tags=("flag:pcre2", "flag:type", *_DECOYS),
        naive=lambda s: ({"pattern": s, "fixed_strings": True, "word": True},
                         *_literals(s, f"'{s}'", f'"{s}"')),
    ),
    RuleTemplate(
        "log-literal", "ripgrep_search", _LOGS.languages, _LOGS.reference,
        ("Find the `{subject}` logging calls whose message is a string literal ({lang})",
         "Which calls of `{subject}` log or print a literal message? The {lang} sources",
         "List the {lang} `{subject}` calls that start with a quoted message",
         "Where does the {lang} code log a fixed text with `{subject}`?"),
        Difficulty.MEDIUM, mining=_LOGS.mining, what="function", tags=("flag:type",),
        naive=lambda s: ({"pattern": f"{s}(", "fixed_strings": True},),
    ),
    RuleTemplate(
        "todo-marker", "ripgrep_search", _TODOS.languages, _TODOS.reference,
        ("Find the {subject} comments in the {lang} code",
         "Which {subject} notes are left in the {lang} sources' comments?",
         "List every comment marked {subject} in the {lang} files, not other files",
         "Where are the {lang} code's {subject} remarks?"),
        Difficulty.EASY, mining=_TODOS.mining, what="marker", tags=("flag:type", *_DECOYS),
        naive=lambda s: ({"pattern": s, "fixed_strings": True},),
    ),
    RuleTemplate(
        "not-awaited", "ripgrep_search", _NOT_AWAITED.languages, _NOT_AWAITED.reference,
        ("Find the calls of `{subject}` in the {lang} code that are not awaited",
         "Where is `{subject}` called without `await` in front of it? ({lang})",
         "List the {lang} call sites of `{subject}` that do not await the result",
         "Which {lang} lines call `{subject}` but skip the await?"),
        Difficulty.HARD, mining=_awaited, what="function", tags=("flag:pcre2", "flag:type"),
        naive=lambda s: ({"pattern": f"{s}(", "fixed_strings": True},),
    ),
    RuleTemplate(
        "docs-mention", "ripgrep_search", (), docs_mention_ref,
        ("Which documentation pages (.rst, .md) mention `{subject}`? The lines",
         "Find where the docs talk about `{subject}`, not the code",
         "List the lines of the .rst and .md documentation that name `{subject}`",
         "Where is `{subject}` documented? Only the documentation files"),
        Difficulty.EASY, mining=_documented, what="name",
        tags=("flag:glob", "flag:word", "flag:fixed-strings", *_DECOYS),
        naive=lambda s: ({"pattern": s, "fixed_strings": True},
                         {"pattern": s, "fixed_strings": True, "word": True}),
    ),
    RuleTemplate(
        "repeated-word", "ripgrep_search", _REPEAT_LANGUAGES, repeated_word_ref,
        ("Find the doubled words (like 'the the') in the {lang} code, in any case",
         "Which lines of the {lang} sources repeat a word twice in a row?",
         "List every {lang} line where the same word appears twice back to back"),
        Difficulty.MEDIUM, tags=("flag:pcre2", "flag:ignore-case", "flag:type"), extra=_FIXED,
        naive=lambda _s: ({"pattern": "the the", "case_sensitive": False},),
    ),
    RuleTemplate(
        "trailing-space", "ripgrep_search", _WHITESPACE_LANGUAGES, trailing_space_ref,
        ("Find the lines with trailing spaces or tabs in the {lang} files (by extension)",
         "Which {lang} source lines end in whitespace?",
         "List every line of the {lang} files that has blanks after its last character"),
        Difficulty.EASY, tags=("flag:glob",), extra=_FIXED,
        naive=lambda _s: ({"pattern": r"\s+$"},),
    ),
    RuleTemplate(
        "tab-indent", "ripgrep_search", _WHITESPACE_LANGUAGES, tab_indent_ref,
        ("Find the lines indented with a tab in the {lang} files (by extension)",
         "Which {lang} source lines use a tab in their indentation?",
         "List every line of the {lang} files whose leading whitespace holds a tab"),
        Difficulty.EASY, tags=("flag:glob",), extra=_FIXED,
        naive=lambda _s: ({"pattern": r"\t"},),
    ),
)  # fmt: skip
