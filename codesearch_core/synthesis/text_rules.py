"""The text-search (ripgrep) rule templates: what a developer asks `rg` for, per language where the
file type is part of the request (`rules.TEMPLATES` lists them with the ast-grep ones).

Each is a fact a text search answers better than a plain one: a type filter (the TODO notes of the
Python code, not of every file), globs (trailing whitespace in the C sources and headers), whole
words, PCRE2 look-arounds (code lines, not comment lines; calls not awaited) and back-references (a
string literal in either quote, a word written twice). The naive searches are the plain ones a
model would try first (the subject alone, `rg -F`); mining keeps a target only when the reference
beats the best of them clearly.

No wording names a flag, a glob or a regex: it says what a developer wants ("the docs", "the code,
not its comments"), and the call is for the model to work out.

A text search is only as right as the text allows, so every template declares a second opinion
(`RuleTemplate.second`, `Check`): searches by other means (the AST's string and comment nodes,
other file kinds, other spellings of an import, extension-less shell scripts) of what a reader of
the intent would also count (`covers`) or would leave out (`excludes`); an item they disagree with
is dropped, never fixed. The checks run on the whole corpus, so each is written to find the few
lines that matter, on one line each where it can (a finding's lines are the lines it spans).

Every pass's regex is its reference's with the subject replaced by a group, so a finding always
lies on a line the pass found (the passes of `not-awaited` and `word-use` only name subjects:
`Mining.scoped` is False there).

This module declares the templates (wordings, difficulty, tags, naive searches); their references,
mining passes and second opinions live by family, so a rule reads whole in one place:
`synthesis.text_code_rules` (definitions, names, imports, raises, literals, logging calls, awaits:
checked against the AST) and `synthesis.text_prose_rules` (TODO notes, whitespace,
docs: checked against other files and spellings), both built from `synthesis.text_rule_kit`.
"""

from __future__ import annotations

from typing import Final

from codesearch_core.models import Difficulty
from codesearch_core.synthesis.rule_kinds import Arguments, RuleTemplate
from codesearch_core.synthesis.text_code_rules import (
    DEFINITIONS,
    IMPORTS,
    LITERALS,
    LOGS,
    NOT_AWAITED,
    RAISES,
    awaited_mining,
    definition_checks,
    import_checks,
    literal_checks,
    literal_mining,
    log_checks,
    not_awaited_checks,
    raise_checks,
    word_checks,
    word_mining,
    word_ref,
)
from codesearch_core.synthesis.text_prose_rules import (
    TODOS,
    WHITESPACE_LANGUAGES,
    docs_checks,
    docs_mention_ref,
    documented_mining,
    tab_indent_checks,
    tab_indent_ref,
    todo_checks,
    trailing_space_checks,
    trailing_space_ref,
)

_DECOYS: Final = ("adversarial:decoys",)


def _literals(*texts: str) -> tuple[Arguments, ...]:
    return tuple({"pattern": t, "fixed_strings": True} for t in texts)


_FIXED: Final = {"subject": ""}

TEXT_TEMPLATES: Final[tuple[RuleTemplate, ...]] = (
    RuleTemplate(
        "definition", "ripgrep_search", DEFINITIONS.languages, DEFINITIONS.reference,
        ("Where is `{subject}` defined in the {lang} code?",
         "Show me the {lang} definitions of `{subject}`, not its call sites",
         "Which {lang} lines declare a function or method called `{subject}`?",
         "Find every place the {lang} sources define `{subject}`",
         "I'm looking for the lines that declare `{subject}` in the {lang} code",
         "List all definitions of `{subject}` across the {lang} files",
         "Locate each {lang} function or method named `{subject}`: just the lines defining it",
         "Jump to the definitions of `{subject}` in {lang}, every one of them",
         "Get me the lines where the {lang} code declares `{subject}`",
         "`{subject}` is defined in several places in the {lang} code; where?"),
        Difficulty.EASY, mining=DEFINITIONS.mining, what="function", tags=("flag:type",),
        naive=lambda s: ({"pattern": s, "word": True},
                         *_literals(*(f"{k} {s}" for k in ("def", "fn", "func", "function",
                                                           "fun")))),
        second=definition_checks,
    ),
    RuleTemplate(
        "word-use", "ripgrep_search", DEFINITIONS.languages, word_ref,
        ("Where is `{subject}` referenced in the {lang} code, comments aside?",
         "Find the {lang} code lines that use the name `{subject}`; commented-out lines don't "
         "count",
         "Which lines of {lang} code mention `{subject}` itself, leaving out comments and longer "
         "names that contain it?",
         "Show every use of `{subject}` in the {lang} sources, skipping comment lines",
         "List the {lang} lines that refer to `{subject}` in code (calls, definitions, imports, "
         "attributes), but no comments",
         "I want all code references to `{subject}` in {lang}, not the comments that talk about it",
         "Every line of {lang} code naming `{subject}`, please; a comment is not code",
         "Give me the {lang} lines where `{subject}` appears in code rather than in a comment",
         "Track down the references to `{subject}` in the {lang} code, leaving out comments",
         "Locate the non-comment {lang} lines that use `{subject}`",
         "Gather every place the {lang} code touches `{subject}` (comment lines excluded)",
         "Across the {lang} files, which code lines name `{subject}`? Ignore comments"),
        Difficulty.MEDIUM, mining=word_mining, what="name",
        tags=("flag:word", "flag:pcre2", "flag:type"),
        naive=lambda s: ({"pattern": s, "fixed_strings": True},
                         {"pattern": s, "fixed_strings": True, "word": True}),
        second=word_checks,
    ),
    RuleTemplate(
        "import", "ripgrep_search", IMPORTS.languages, IMPORTS.reference,
        ("Which {lang} files import `{subject}`? The import lines",
         "Where does the {lang} code import `{subject}` (or something from it)?",
         "Find the {lang} statements that import `{subject}`",
         "List every line of {lang} code that pulls in `{subject}`",
         "Show me how the {lang} sources bring in `{subject}`: the import lines only",
         "I need the {lang} dependency lines on `{subject}`, not its other mentions",
         "Give the lines where the {lang} code imports, requires or includes `{subject}`",
         "Locate all imports of `{subject}` in {lang}",
         "Who imports `{subject}`? Only the {lang} sources",
         "Every {lang} import of `{subject}`, please",
         "Get the {lang} lines that load `{subject}` as a dependency",
         "Collect the import lines of `{subject}` across the {lang} files"),
        Difficulty.EASY, mining=IMPORTS.mining, what="module", tags=("flag:type",),
        naive=lambda s: _literals(s, f"import {s}"),
        second=import_checks,
    ),
    RuleTemplate(
        "raise", "ripgrep_search", RAISES.languages, RAISES.reference,
        ("Find where the {lang} code raises or throws `{subject}`",
         "Which lines throw a `{subject}`? The {lang} sources only",
         "List the {lang} statements that raise `{subject}`, not where it is caught",
         "Where is a `{subject}` error raised in the {lang} files?",
         "Show me every place the {lang} code throws `{subject}`",
         "Locate the raise sites of `{subject}` in {lang}",
         "I'd like the {lang} lines that signal a `{subject}`",
         "Give the {lang} code's `{subject}` throw statements"),
        Difficulty.EASY, mining=RAISES.mining, what="exception", tags=("flag:type",),
        naive=lambda s: ({"pattern": s, "word": True}, *_literals(f"raise {s}", f"throw new {s}")),
        second=raise_checks,
    ),
    RuleTemplate(
        "string-literal", "ripgrep_search", LITERALS.languages, LITERALS.reference,
        ("Where does the {lang} code use the string `{subject}`?",
         "Find the string literals `{subject}` in the {lang} code, whichever quotes they use",
         "Which {lang} lines have `{subject}` as a string value of its own, not in a comment?",
         "List every `{subject}` string in the {lang} sources",
         "Show the {lang} code's hard-coded `{subject}` strings",
         "Locate the literal `{subject}` (quoted, that text and nothing more) in the {lang} files",
         "I'm looking for the places the {lang} code spells out `{subject}` as a string",
         "Every quoted `{subject}` in the {lang} code, comments aside",
         "Give me the {lang} lines where `{subject}` is written as a string constant",
         "Hard-coded `{subject}` values in the {lang} code: where are they?",
         "Track the {lang} string literals equal to `{subject}`",
         "Spot each `{subject}` string in the {lang} code, single- or double-quoted"),
        Difficulty.MEDIUM, mining=literal_mining, what="string",
        tags=("flag:pcre2", "flag:type", *_DECOYS),
        naive=lambda s: ({"pattern": s, "fixed_strings": True, "word": True},
                         *_literals(s, f"'{s}'", f'"{s}"')),
        second=literal_checks,
    ),
    RuleTemplate(
        "log-literal", "ripgrep_search", LOGS.languages, LOGS.reference,
        ("Find the `{subject}` calls whose message is a fixed text ({lang})",
         "Which calls of `{subject}` log or print a literal message? The {lang} sources",
         "List the {lang} `{subject}` calls that start with a quoted message",
         "Where does the {lang} code log a hard-coded text with `{subject}`?",
         "Show me the `{subject}` calls in {lang} that pass a string as their message",
         "Locate the {lang} `{subject}` calls with a constant message",
         "I need the {lang} lines calling `{subject}` with a literal first argument",
         "Give every {lang} `{subject}` call that writes a fixed message"),
        Difficulty.MEDIUM, mining=LOGS.mining, what="function", tags=("flag:type",),
        naive=lambda s: ({"pattern": f"{s}(", "fixed_strings": True},),
        second=log_checks,
    ),
    RuleTemplate(
        "todo-marker", "ripgrep_search", TODOS.languages, TODOS.reference,
        ("Find the {subject} comments in the {lang} code",
         "Which {subject} notes are left in the {lang} sources' comments?",
         "List every comment marked {subject} in the {lang} files",
         "Where are the {lang} code's {subject} remarks?",
         "Show me the {subject} comments of the {lang} sources",
         "Locate the open {subject} items noted in {lang} comments",
         "I want to review the {subject} comments in the {lang} code",
         "Give the {lang} comment lines that carry a {subject}"),
        Difficulty.EASY, mining=TODOS.mining, what="marker", tags=("flag:type", *_DECOYS),
        naive=lambda s: ({"pattern": s, "fixed_strings": True},),
        second=todo_checks,
    ),
    RuleTemplate(
        "not-awaited", "ripgrep_search", NOT_AWAITED.languages, NOT_AWAITED.reference,
        ("Find the calls of `{subject}` in the {lang} code that are not awaited",
         "Where is `{subject}` called without `await` in front of it? ({lang})",
         "List the {lang} call sites of `{subject}` that do not await the result",
         "Which {lang} lines call `{subject}` but skip the await?",
         "Show me the un-awaited `{subject}` calls in the {lang} sources",
         "Locate each {lang} call of `{subject}` that nobody awaits on that line",
         "I suspect a missing await: which `{subject}` calls in {lang} lack one?",
         "Give the {lang} `{subject}` calls whose promise is not awaited directly"),
        Difficulty.HARD, mining=awaited_mining, what="function", tags=("flag:pcre2", "flag:type"),
        naive=lambda s: ({"pattern": f"{s}(", "fixed_strings": True},),
        second=not_awaited_checks,
    ),
    RuleTemplate(
        "docs-mention", "ripgrep_search", (), docs_mention_ref,
        # "The documentation pages", never "the docs" alone: a docstring is documentation too
        # (QA review, issue 36), and the reference reads the pages only.
        ("Where do the documentation pages mention `{subject}`? Not the source code",
         "Which documentation pages talk about `{subject}`? The lines, please",
         "Find the lines of the project's documentation pages that name `{subject}`, not the code",
         "List the places `{subject}` comes up in the written documentation pages",
         "Show me where `{subject}` is documented in the documentation files, not the sources",
         "I want every line of the documentation pages that refers to `{subject}`",
         "Give the documentation-page lines mentioning `{subject}`; longer names that contain it "
         "don't count",
         "Locate `{subject}` in the user guide and reference pages (not the code)",
         "Is `{subject}` covered in the documentation pages? Every line that names it",
         "Search the documentation pages, not the code or its docstrings, for `{subject}`",
         "Every mention of `{subject}` in the project's guides and README pages",
         "Gather the lines of the documentation pages that bring up `{subject}`"),
        Difficulty.EASY, mining=documented_mining, what="name",
        tags=("flag:glob", "flag:word", "flag:fixed-strings", *_DECOYS),
        naive=lambda s: ({"pattern": s, "fixed_strings": True},
                         {"pattern": s, "fixed_strings": True, "word": True}),
        second=docs_checks,
    ),
    RuleTemplate(
        "trailing-space", "ripgrep_search", WHITESPACE_LANGUAGES, trailing_space_ref,
        ("Find the lines with trailing spaces or tabs in the {lang} files",
         "Which {lang} source lines end in whitespace?",
         "List every line of the {lang} files that has blanks after its last character",
         "Where does the {lang} code leave trailing whitespace?",
         "Show me the {lang} lines that end with stray spaces",
         "Locate the trailing blanks in the {lang} sources",
         "I want to strip trailing whitespace from the {lang} code; which lines have some?",
         "Give the {lang} source lines with whitespace at the end"),
        Difficulty.EASY, tags=("flag:glob",), extra=_FIXED,
        naive=lambda _s: ({"pattern": r"\s+$"},),
        second=trailing_space_checks,
    ),
    RuleTemplate(
        "tab-indent", "ripgrep_search", WHITESPACE_LANGUAGES, tab_indent_ref,
        ("Find the lines indented with a tab in the {lang} files",
         "Which {lang} source lines use a tab in their indentation?",
         "List every line of the {lang} files whose leading whitespace holds a tab",
         "Where is the {lang} code indented with tabs instead of spaces?",
         "Show me the tab-indented lines of the {lang} sources",
         "Locate the {lang} lines that mix a tab into their indentation",
         "I'm converting the {lang} code to spaces; which lines still indent with a tab?",
         "Give the {lang} lines whose indentation contains a tab character"),
        Difficulty.EASY, tags=("flag:glob",), extra=_FIXED,
        naive=lambda _s: ({"pattern": r"\t"},),
        second=tab_indent_checks,
    ),
)  # fmt: skip
