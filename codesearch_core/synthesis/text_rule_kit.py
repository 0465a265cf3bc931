"""The kit the text-search rule templates are built from (`synthesis.text_rules` declares them,
`synthesis.text_code_rules` and `synthesis.text_prose_rules` hold their calls and checks): the
per-language reference (`PerLanguage`: one regex per language, the subject as a group for the
mining pass), the check builders of a second opinion (an rg search, an ast-grep node rule, the
comments and strings a line must not lie in, the extension-less scripts), the AST's comment,
string and identifier node kinds per language, and the functions that turn a pass's text into
subjects.

They are one module because every rule family uses all of them alike: a node kind fixed here
(a grammar renaming one) is fixed for every rule, and a family module holds only what its own
rules mean.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final, Literal, TypeVar

from codesearch_core.models import Check
from codesearch_core.synthesis.rule_kinds import RG_TYPES, Arguments, Mining, plain_subject

SUBJECT: Final = "{subject}"
_T = TypeVar("_T")
Mode = Literal["covers", "excludes"]

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


def code_name(text: str) -> tuple[str, ...]:
    """A name no prose spells: with `_`, `.` or a digit, or a capital inside (`show_default`,
    `lz4.frame`, `JClass`). `copy`, `color`, `Command` are English words too, and the docs' "a
    copy of" is no mention of the method `copy`."""
    names = plain_subject(text)
    return names if names and re.search(r"[_.\d]|.[A-Z]", names[0]) else ()


def with_subject(pattern: str, subject: str) -> str:
    return pattern.replace(SUBJECT, re.escape(subject))


def _group(pattern: str, group: str) -> str:
    return pattern.replace(SUBJECT, f"({group})")


_NAME: Final = r"[A-Za-z_$][\w$]*"
DOTTED_NAME: Final = rf"{_NAME}(?:\.{_NAME}){{0,3}}"

# --- What the checks are made of ------------------------------------------------------------------

_C_LIKE: Final = ("javascript", "typescript", "java", "kotlin", "c", "cpp", "rust", "go", "swift")
#: Where a comment opens, as a regex: a `*` only at the start of a line (a block comment's
#: continuation), not a multiplication.
COMMENT_OPEN: Final[Mapping[str, str]] = {
    "python": "#", "ruby": "#", "bash": "#", "lua": "--", "php": r"#|//|/\*|^[ \t]*\*",
    **dict.fromkeys(_C_LIKE, r"//|/\*|^[ \t]*\*"),
}  # fmt: skip
#: The AST's comment and string nodes of each language (ast-grep kinds, checked against its
#: grammars: a kind a grammar lacks makes the whole rule fail).
COMMENT_KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    **dict.fromkeys(("python", "javascript", "typescript", "lua", "ruby", "php", "bash", "c",
                     "cpp", "go"), ("comment",)),
    "java": ("line_comment", "block_comment"), "rust": ("line_comment", "block_comment"),
    "kotlin": ("line_comment", "multiline_comment"), "swift": ("comment", "multiline_comment"),
}  # fmt: skip
STRING_KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    "python": ("string",), "javascript": ("string", "template_string"),
    "typescript": ("string", "template_string"), "lua": ("string",), "ruby": ("string",),
    "php": ("string", "encapsed_string"), "bash": ("string", "raw_string"),
    "c": ("string_literal",), "cpp": ("string_literal",), "java": ("string_literal",),
    "rust": ("string_literal", "raw_string_literal"),
    "go": ("interpreted_string_literal", "raw_string_literal"), "kotlin": ("string_literal",),
    "swift": ("line_string_literal",),
}  # fmt: skip
#: The AST's identifier nodes (names in code: variables, functions, attributes, fields).
IDENTIFIER_KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    "python": ("identifier",), "rust": ("identifier", "field_identifier"),
    "go": ("identifier", "field_identifier"), "lua": ("identifier",),
    "swift": ("simple_identifier",), "kotlin": ("simple_identifier",),
}  # fmt: skip


def rg_check(why: str, mode: Mode, pattern: str, *, types: tuple[str, ...] = (),
             globs: tuple[str, ...] = (), **flags: bool) -> Check:  # fmt: skip
    arguments: Arguments = {"pattern": pattern, **flags}
    if types:
        arguments["file_types"] = list(types)
    if globs:
        arguments["globs"] = list(globs)
    return Check("ripgrep_search", arguments, mode, why)


def node_check(language: str, kinds: tuple[str, ...], why: str, mode: Mode,
               **rule: object) -> Check:  # fmt: skip
    """An ast-grep check: the nodes of `kinds` that also meet `rule` (a regex on their text...)."""
    branches = [{"kind": kind, **rule} for kind in kinds]
    body = branches[0] if len(branches) == 1 else {"any": branches}
    return Check("ast_grep_search", {"rule": body, "language": language}, mode, why)


def in_prose(language: str, regex: str, *, strings: bool = True) -> tuple[Check, ...]:
    """`excludes`: the comments (and strings) whose text matches `regex` (Rust syntax): a reference
    line inside one is prose or an example, not code."""
    out = [node_check(language, COMMENT_KINDS[language], "comment", "excludes", regex=regex)]
    if strings:
        out.append(node_check(language, STRING_KINDS[language], "string", "excludes", regex=regex))
    return tuple(out)


#: Files with no extension: in a shell project, its commands (`bin/bats`, `libexec/...`), which
#: no file type or `*.sh` glob selects. The check over-finds (a `Makefile`, a `LICENSE`) and so
#: only drops items; it never lets a missed script through.
_NO_EXTENSION: Final = ("!*.*",)


def extensionless(arguments: Arguments) -> Check:
    """`covers`: the reference's search over the extension-less files (shell scripts)."""
    same = {k: v for k, v in arguments.items() if k not in ("file_types", "globs")}
    return Check("ripgrep_search", {**same, "globs": list(_NO_EXTENSION)}, "covers",
                 "extensionless_script")  # fmt: skip


def same_for(value: _T, languages: tuple[str, ...]) -> dict[str, _T]:
    return dict.fromkeys(languages, value)


class PerLanguage:
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
        pattern = with_subject(self.patterns[language], subject)
        return {"pattern": pattern, "file_types": [RG_TYPES[language]], **self.flags}

    def mining(self, language: str, *, scoped: bool = True) -> Mining:
        return Mining(_group(self.patterns[language], self.groups[language]),
                      (RG_TYPES[language],), subjects=self.subjects[language],
                      scoped=scoped)  # fmt: skip
