"""The text-search rules about comments, prose and files: the notes a marker opens
(`todo-marker`), the lines with trailing
blanks or a tab in their indent (`trailing-space`, `tab-indent`) and the docs' mentions of a name
(`docs-mention`), each with its reference and its second opinion (`synthesis.text_rules` gives
them their wordings).

They are together because their subject is text, not syntax: a reader counts a note in any case
and in a block comment's bare line, a typo across a comment's line break, a blank before a CRLF,
a mention in a man page or an extension-less script, so the checks look at other files and other
spellings of the same text, where the code rules of `synthesis.text_code_rules` ask the AST.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

from codesearch_core.models import Check
from codesearch_core.synthesis.rule_kinds import RG_TYPES, Arguments, Mining, plain_subject
from codesearch_core.synthesis.text_rule_kit import (
    COMMENT_KINDS,
    COMMENT_OPEN,
    STRING_KINDS,
    SUBJECT,
    PerLanguage,
    code_name,
    extensionless,
    node_check,
    rg_check,
    same_for,
)

# --- todo-marker ----------------------------------------------------------------------------------

_MARKERS: Final = ("TODO", "FIXME", "XXX", "HACK")
_TODO_LANGUAGES: Final = tuple(COMMENT_OPEN)
TODOS: Final = PerLanguage(
    {lang: rf"(?:{COMMENT_OPEN[lang]})[^\n]*?\b{SUBJECT}\b" for lang in _TODO_LANGUAGES},
    same_for("|".join(_MARKERS), _TODO_LANGUAGES),
    same_for(plain_subject, _TODO_LANGUAGES),
)


def todo_checks(language: str, subject: str) -> tuple[Check, ...]:
    reference = TODOS.reference(language, subject)
    # `# todo:` is the same note to a reader; a marker in a string (`"# TODO"`) is no comment.
    out = [rg_check("other_case", "covers", reference["pattern"], types=(RG_TYPES[language],),
                    case_sensitive=False),
           # A block comment's line with no `*` (`/*` ... `TODO: x` ... `*/`) is a comment too; a
           # comment node is found on its first line, so an item with such a block is dropped.
           node_check(language, COMMENT_KINDS[language], "ast_comment", "covers",
                      regex=rf"\b{re.escape(subject)}\b"),
           node_check(language, STRING_KINDS[language], "string", "excludes",
                      regex=rf"\b{re.escape(subject)}\b")]  # fmt: skip
    if language == "bash":
        out.append(extensionless(reference))
    return tuple(out)


# --- trailing-space, tab-indent -------------------------------------------------------------------

#: The file name patterns of each language's sources, for the whitespace rules' globs.
_GLOBS: Final[Mapping[str, tuple[str, ...]]] = {
    "python": ("*.py", "*.pyi"), "javascript": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "typescript": ("*.ts", "*.tsx", "*.mts", "*.cts"), "java": ("*.java",), "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"),
    "rust": ("*.rs",), "lua": ("*.lua",), "go": ("*.go",), "swift": ("*.swift",),
    "kotlin": ("*.kt", "*.kts"), "ruby": ("*.rb",), "php": ("*.php",), "bash": ("*.sh", "*.bash"),
}  # fmt: skip
_TRAILING: Final = r"[ \t]+$"
_TAB_INDENT: Final = r"^ *\t"


def trailing_space_ref(language: str, _subject: str) -> Arguments:
    return {"pattern": _TRAILING, "globs": list(_GLOBS[language])}


def tab_indent_ref(language: str, _subject: str) -> Arguments:
    return {"pattern": _TAB_INDENT, "globs": list(_GLOBS[language])}


def _whitespace_checks(
    pattern: str, wider: str, *, multiline: bool = False
) -> Callable[[str, str], tuple[Check, ...]]:
    def checks(language: str, _subject: str) -> tuple[Check, ...]:
        # rg's file type knows the language's other file names; `wider` also sees a blank before
        # a CRLF ending (rg lets a regex hold a CR in multiline mode only) and the rarer blanks
        # (form feed, no-break space).
        out = [rg_check("other_files", "covers", wider, types=(RG_TYPES[language],),
                        multiline=multiline)]  # fmt: skip
        if language == "bash":
            out.append(extensionless({"pattern": pattern}))
        return tuple(out)

    return checks


#: The languages the whitespace rules cover (those with source globs), and their checks.
WHITESPACE_LANGUAGES: Final = tuple(_GLOBS)
trailing_space_checks: Final = _whitespace_checks(
    _TRAILING, r"(?m)[ \t\x0b\x0c\x{a0}]+\r?$", multiline=True
)
tab_indent_checks: Final = _whitespace_checks(_TAB_INDENT, _TAB_INDENT)


# --- docs-mention ---------------------------------------------------------------------------------

#: Where a project's documentation lives, for `docs-mention`.
DOC_GLOBS: Final = ("*.md", "*.rst", "*.adoc", "*.markdown", "*.mdx")
#: Other documentation a reader counts as "the docs": plain-text and HTML pages, man pages and their
#: sources, extension-less READMEs; and the non-code files under a docs folder.
_OTHER_DOCS: Final = (
    ("*.txt", "*.htm*", "*.ronn", "*.tex", "*.[1-9]", "README", "!CMakeLists.txt",
     "!requirements*.txt"),
    ("**/docs/**", "**/doc/**",
     "!*.{py,pyi,js,mjs,ts,css,scss,json,yml,yaml,toml,cfg,ini,svg,png,jpg,gif,ico,bat,sh}",
     "!Makefile", "!*.{md,rst,adoc,markdown,mdx,txt,ronn,tex}", "!*.htm*", "!*.[1-9]"),
)  # fmt: skip


def documented_mining(_language: str) -> Mining:
    # The names the docs quote as code (``name``, `name`, :func:`~name`); the reference's mentions
    # need not be quoted, so the pass only names them.
    return Mining(r"``?~?([A-Za-z_][\w.]{2,60})``?", globs=DOC_GLOBS, subjects=code_name,
                  scoped=False)  # fmt: skip


def docs_mention_ref(_language: str, name: str) -> Arguments:
    return {"pattern": name, "fixed_strings": True, "word": True, "globs": list(DOC_GLOBS)}


def docs_checks(_language: str, subject: str) -> tuple[Check, ...]:
    # In the pages themselves, the name however markup wraps it or a plural ends it: `__HEAD__`,
    # `_req.query_` (Markdown emphasis), `JClass_` (a reStructuredText link), "CMACs", which the
    # reference's whole word does not match (QA review, issue 36).
    loose = rf"(?<![A-Za-z0-9]){re.escape(subject)}(?:e?s)?(?![A-Za-z0-9])"
    return (
        rg_check("loose_mention", "covers", loose, globs=DOC_GLOBS, pcre2=True),
        *(rg_check("other_docs", "covers", subject, globs=globs, fixed_strings=True, word=True)
          for globs in _OTHER_DOCS),
    )  # fmt: skip
