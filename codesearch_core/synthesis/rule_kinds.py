"""The parts rule templates are made of (`synthesis.rules` lists the templates themselves): a
template (`RuleTemplate`), the text pass that mines its subjects (`Mining`), the functions that
turn a pass's matched text into subjects, and the language tables (labels, rg file types).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from codesearch_core.models import Check, Difficulty

Arguments = dict[str, Any]

#: A callee, decorator or owner we can put into a pattern verbatim: dotted identifiers only.
SUBJECT_RE: Final = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*){0,3}$")

JS_FAMILY: Final = ("javascript", "typescript", "tsx")
#: Languages whose call syntax is `name(args)` for ast-grep's pattern parser.
#: (Ruby and PHP are not: Ruby calls without parentheses, PHP's calls are four node kinds apart.)
CALL_LANGUAGES: Final = (
    *JS_FAMILY, "python", "java", "kotlin", "rust", "c", "cpp", "csharp", "scala", "swift", "lua",
)  # fmt: skip
LANGUAGE_LABELS: Final[Mapping[str, str]] = {
    "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TSX", "python": "Python",
    "java": "Java", "kotlin": "Kotlin", "rust": "Rust", "c": "C", "cpp": "C++", "csharp": "C#",
    "ruby": "Ruby", "php": "PHP", "scala": "Scala", "swift": "Swift", "lua": "Lua", "go": "Go",
    "bash": "shell",
}  # fmt: skip
#: The rg file type of each ast-grep language's files (the seed audit's table).
RG_TYPES: Final[Mapping[str, str]] = {
    "javascript": "js", "typescript": "ts", "tsx": "ts", "python": "py", "java": "java",
    "kotlin": "kotlin", "rust": "rust", "c": "c", "cpp": "cpp", "csharp": "csharp", "ruby": "ruby",
    "php": "php", "scala": "scala", "swift": "swift", "lua": "lua", "go": "go", "bash": "sh",
}  # fmt: skip
#: Words that read as a callee to a text pass (`if (`, `return (`) but never name a function.
KEYWORDS: Final = frozenset({
    "if", "elif", "else", "for", "while", "switch", "case", "return", "await", "yield", "new",
    "not", "and", "or", "in", "is", "del", "assert", "catch", "typeof", "sizeof", "function",
    "def", "class", "lambda", "with", "except", "raise", "throw", "import", "from", "do", "try",
    "this", "match", "when", "async", "void", "delete", "instanceof", "super", "self", "elseif",
    "until", "then", "local", "foreach", "using", "lock", "guard", "defer", "repeat", "unless",
    "select", "where", "go", "fun", "fn", "func", "var", "let", "const", "val",
})  # fmt: skip
#: Type names and operators that read as a callee (`char(c)`, `int(x)`, `sizeof(x)`: a C++
#: functional cast, a conversion, an operator): nobody asks for "the calls to `char`".
TYPE_NAMES: Final = frozenset({
    "char", "int", "long", "float", "double", "bool", "short", "unsigned", "signed", "void", "auto",
    "static_cast", "dynamic_cast", "reinterpret_cast", "const_cast", "sizeof", "alignof",
    "decltype", "typeof", "typeid", "noexcept", "nameof", "str", "bytes", "list", "dict", "set",
    "tuple", "object", "frozenset", "bytearray", "boolean", "byte", "string", "String",
})  # fmt: skip
_C_TYPE_NAME: Final = re.compile(
    r"^(?:u?int(?:8|16|32|64|ptr|max)_t|s?size_t|ptrdiff_t|wchar_t|char\d+_t)$"
)
#: Callee names that are a parameter's, not a function a developer would name: "calls to `cb`"
#: mixes every callback of the code base. Short names (under 3 characters) are dropped too.
#: (`next` stays: Express's `next` is a real thing to ask about.)
MEANINGLESS: Final = frozenset({
    "func", "callback", "cb", "fn", "done", "fun", "handler", "wrapper", "wrapped", "inner",
    "resolve", "reject", "proc", "lambda", "call", "apply", "self", "cls", "_",
})  # fmt: skip

WS: Final = r"[ \t\r\n]*"
IDENT: Final = r"[A-Za-z_$][0-9A-Za-z_$]*"
#: A dotted callee (up to four parts) followed by `(` (or TypeScript's type arguments and `(`):
#: ASCII classes, which rg runs several times faster than Unicode ones on a large corpus. A line
#: break may come before a dot (`client\n  .get(...)`, chained style) but not after one: a
#: sentence's full stop in a comment (`... for.\n  console.log(`) would otherwise swallow the call
#: on the next line into a subject `for.console.log`.
CALLEE: Final = rf"({IDENT}(?:{WS}\.[ \t]*{IDENT}){{0,3}}){WS}(?:<[^<>()\n]{{0,80}}>{WS})?\("
#: Kotlin and Swift also call with a trailing lambda alone (`run { ... }`, `AsyncFunction("x") {`).
CALLEE_OR_BLOCK: Final = CALLEE[:-2] + r"[({]"


@dataclass(frozen=True, slots=True)
class Mining:
    """One text pass finding every candidate of a rule: `regex`'s first group names a subject (its
    whitespace taken out), over the files `file_types` / `globs` select. `subjects` turns the group
    into the subjects it stands for (default: itself, when it is a plain dotted name); a fixed
    template's pass names the subject "" (it only counts the construct and finds its files).

    `scoped=False`: the pass only names the subjects, its lines are not where the reference
    matches (the calls of a function *not* awaited, mined from the calls that are), so the
    reference runs on the whole corpus: for an rg reference that costs about what the pass did."""

    regex: str
    file_types: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    multiline: bool = False
    subjects: Callable[[str], tuple[str, ...]] | None = None
    scoped: bool = True
    #: A dotted subject (`DB.query`, `click.echo`) is kept only when its receiver is a name a
    #: developer would ask about: capitalized (a class, a namespace) or imported in the corpus
    #: (`synthesis.mine` checks); `key.exchange` on a variable `key` is not one.
    named_receivers: bool = False

    @property
    def key(self) -> tuple[Any, ...]:
        """Templates whose passes share a key share one rg run (call and function-calling)."""
        return (self.regex, self.file_types, self.globs, self.multiline, self.subjects,
                self.named_receivers)  # fmt: skip


def plain_subject(text: str) -> tuple[str, ...]:
    name = "".join(text.split())
    return (name,) if SUBJECT_RE.match(name) and name not in KEYWORDS else ()


def dotted_prefixes(text: str) -> tuple[str, ...]:
    """`a.b.c` -> `a`, `a.b`, `a.b.c`: a decorator regex `^@a\\b` also matches `@a.b`."""
    name = "".join(text.split())
    parts = name.split(".")
    return tuple(p for i in range(len(parts)) if SUBJECT_RE.match(p := ".".join(parts[: i + 1])))


def interface_names(text: str) -> tuple[str, ...]:
    """`Comparable<A>, Runnable` (an implements list) -> `Comparable`, `Runnable`."""
    while (flat := re.sub(r"<[^<>]*>", "", text)) != text:
        text = flat
    names = ("".join(n.split()) for n in text.split(","))
    return tuple(n for n in names if SUBJECT_RE.match(n) and n not in KEYWORDS)


def fixed(_text: str) -> tuple[str, ...]:
    return ("",)


def callable_name(name: str) -> bool:
    """A bare callee name worth a request: not a keyword, a type (a cast) or a parameter's name."""
    return (
        len(name) >= 3 and SUBJECT_RE.match(name) is not None and "." not in name
        and name not in KEYWORDS and name not in TYPE_NAMES and name not in MEANINGLESS
        and not _C_TYPE_NAME.match(name)
    )  # fmt: skip


def call_subjects(text: str) -> tuple[str, ...]:
    """`click.echo` -> `echo` and `click.echo`: a reader of "calls to `echo`" counts the method and
    qualified forms too, so the bare name is a subject wherever the callee ends in it; the dotted
    name is one as well (the receiver check in `synthesis.mine` keeps only named receivers)."""
    name = "".join(text.split())
    if not SUBJECT_RE.match(name):
        return ()
    last = name.rsplit(".", 1)[-1]
    out: tuple[str, ...] = (last,) if callable_name(last) else ()
    if "." in name and last not in KEYWORDS and name.split(".")[0] not in KEYWORDS:
        out += (name,)
    return out


def calls(language: str) -> Mining:
    regex = CALLEE_OR_BLOCK if language in ("kotlin", "swift") else CALLEE
    return Mining(regex, (RG_TYPES[language],), multiline=True, subjects=call_subjects,
                  named_receivers=True)  # fmt: skip


def awaited_calls(language: str) -> Mining:
    return Mining(rf"\bawait[ \t\r\n]+{CALLEE}", (RG_TYPES[language],), multiline=True,
                  subjects=call_subjects, named_receivers=True)  # fmt: skip


def constructions(language: str) -> Mining:
    return Mining(rf"\bnew[ \t\r\n]+({IDENT}(?:{WS}\.{WS}{IDENT}){{0,3}}){WS}[(<]",
                  (RG_TYPES[language],), multiline=True, subjects=call_subjects,
                  named_receivers=True)  # fmt: skip


def keyword(word: str) -> Callable[[str], Mining]:
    """A fixed template's pass: the construct's keyword (`except`, `catch`), counted."""
    return lambda language: Mining(rf"\b({word})\b", (RG_TYPES[language],), subjects=fixed)


def text_pass(regex: str, globs: tuple[str, ...] = ()) -> Callable[[str], Mining]:
    return lambda _language: Mining(regex, globs=globs, subjects=plain_subject)


def go_packages(_text: str) -> tuple[str, ...]:
    """`fmt.Printf` -> itself: a package function (lower-case package, exported name); a method
    call on a variable reads the same, which the imported-package check in mining tells apart."""
    name = "".join(_text.split())
    return (name,) if re.fullmatch(r"[a-z]\w*\.[A-Z]\w*", name) else ()


@dataclass(frozen=True, slots=True)
class RuleTemplate:
    """One kind of fact. `reference(language, subject)` builds the call's arguments; `mining`
    (by language) the text pass that finds its subjects, None for a template with one fixed
    reference over the whole corpus."""

    id: str
    tool: str  # "ast_grep_search" | "ripgrep_search"
    languages: tuple[str, ...]  # ast-grep languages; () for text rules (any corpus)
    reference: Callable[[str, str], Arguments]
    intents: tuple[str, ...]  # wordings: {subject}, {lang}, {what}
    difficulty: Difficulty = Difficulty.MEDIUM
    mining: Callable[[str], Mining] | None = None
    #: Naive text searches (rg arguments): the baselines the reference must beat, besides the
    #: seed audit's keyword searches (ast-grep templates).
    naive: Callable[[str], tuple[Arguments, ...]] = lambda _subject: ()
    tags: tuple[str, ...] = ()
    #: What the subject is, for wordings ("the function", "the owner").
    what: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The rule's second opinion: `(language, subject) -> checks` (`Check`); a rule with none
    #: declares why in its own comment, and verify drops its items as `no_second_opinion`.
    second: Callable[[str, str], tuple[Check, ...]] | None = None
