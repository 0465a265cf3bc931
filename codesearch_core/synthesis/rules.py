"""The rule templates synthesis mines a corpus with: one row per kind of fact, per language family.

A template is either *fixed* (one reference call, e.g. "catch blocks that log nothing") or has
*subjects* (the functions a corpus calls, the decorators it uses, the owners its TODOs name), each
giving one reference call. A template's `mining` is one text pass (`Mining`: a regex whose first
group names a subject) that finds every candidate of the rule in the corpus at once, where a
discovery call per rule and a reference run per subject over the whole corpus cost a corpus read
each. The pass over-approximates on purpose: every place the reference call can match holds the
mined text (a call of `DB.query` holds `DB.query(`, whatever the whitespace around the dot), so
the files it names are the only ones the reference needs to run on (`synthesis.mine`).

Each template carries its intent wordings (several, so drafts do not all read alike), a difficulty
and the naive text searches a model would fall back on: the baselines the reference must beat
clearly (ast-grep templates also get the seed audit's keyword baselines).
"""

from __future__ import annotations

from typing import Final

from codesearch_core.models import Difficulty
from codesearch_core.synthesis import rule_calls as ref
from codesearch_core.synthesis.rule_calls import CONFIG_GLOBS
from codesearch_core.synthesis.rule_kinds import (
    CALL_LANGUAGES,
    JS_FAMILY,
    RG_TYPES,
    WS,
    Arguments,
    Mining,
    RuleTemplate,
    awaited_calls,
    calls,
    constructions,
    dotted_prefixes,
    go_packages,
    interface_names,
    keyword,
    plain_subject,
    text_pass,
)
from codesearch_core.synthesis.text_rules import TEXT_TEMPLATES

_CALL_WORDS: Final = (
    "Find every call to `{subject}` in the {lang} code",
    "Where is `{subject}` called? Only the {lang} sources",
    "List the {lang} call sites of `{subject}`, with their arguments",
    "Show me each place the {lang} code invokes `{subject}`",
    "Every invocation of `{subject}` in {lang} files, not mentions in comments or strings",
)
_SECRET_WORDS: Final = ("password", "secret", "token", "api_key")
_STRUCTURE: Final = ("adversarial:structure-vs-text",)
_DECOYS: Final = ("adversarial:decoys",)
_CATCH_WORD: Final = {
    "python": "except",
    "javascript": "catch",
    "typescript": "catch",
    "tsx": "catch",
}


def _catch(language: str) -> Mining:
    return keyword(_CATCH_WORD[language])(language)


def _decorators(language: str) -> Mining:
    return Mining(r"^[ \t]*@[ \t]*([A-Za-z_][\w.]*)", (RG_TYPES[language],),
                  subjects=dotted_prefixes)  # fmt: skip


def _annotations(language: str) -> Mining:
    return Mining(r"@[ \t]*([A-Za-z_][\w.]*)", (RG_TYPES[language],), subjects=plain_subject)


def _implements(language: str) -> Mining:
    return Mining(r"\bimplements[ \t\r\n]+([^{;]+?)[ \t\r\n]*\{", (RG_TYPES[language],),
                  multiline=True, subjects=interface_names)  # fmt: skip


def _go_calls(language: str) -> Mining:
    return Mining(rf"\b([a-z][0-9A-Za-z_]*[ \t]*\.[ \t]*[A-Z][0-9A-Za-z_]*){WS}\(",
                  (RG_TYPES[language],), multiline=True, subjects=go_packages)  # fmt: skip


def _in_lang(subject_text: str, rg_type: str) -> Arguments:
    return {"pattern": subject_text, "fixed_strings": True, "file_types": [rg_type]}


TEMPLATES: Final[tuple[RuleTemplate, ...]] = (
    RuleTemplate(
        "call", "ast_grep_search", CALL_LANGUAGES, ref.call_ref, _CALL_WORDS, Difficulty.EASY,
        mining=calls, tags=_STRUCTURE, what="function",
    ),
    RuleTemplate(
        "await-call", "ast_grep_search", (*JS_FAMILY, "python"), ref.await_ref,
        ("Find the awaited calls to `{subject}` in the {lang} code",
         "Where does the {lang} code await `{subject}`?",
         "List every place the {lang} code waits on a call to `{subject}`"),
        Difficulty.MEDIUM, mining=awaited_calls, tags=_STRUCTURE, what="function",
    ),
    RuleTemplate(
        "new", "ast_grep_search", (*JS_FAMILY, "java", "kotlin", "csharp", "php"), ref.new_ref,
        ("Find where `{subject}` objects are constructed in the {lang} code",
         "Every place the {lang} files create a new `{subject}`",
         "Where does the {lang} code instantiate `{subject}`?"),
        Difficulty.EASY, mining=constructions, tags=_STRUCTURE, what="class",
    ),
    RuleTemplate(
        "function-calling", "ast_grep_search", (*JS_FAMILY, "python"), ref.fn_calling_ref,
        ("Find the whole {lang} functions that call `{subject}`",
         "Which {lang} functions call `{subject}` somewhere in their body? Give the functions",
         "List every {lang} function or method whose body calls `{subject}`"),
        Difficulty.MEDIUM, mining=calls, tags=_STRUCTURE, what="function",
    ),
    RuleTemplate(
        "async-awaiting", "ast_grep_search", (*JS_FAMILY, "python"), ref.async_awaiting_ref,
        ("Find the async {lang} functions that await `{subject}`",
         "Which async functions in the {lang} code wait on `{subject}`? The whole functions",
         "List the {lang} async functions that await a call to `{subject}` somewhere inside"),
        Difficulty.HARD, mining=awaited_calls, tags=_STRUCTURE, what="function",
    ),
    RuleTemplate(
        "catch-silent", "ast_grep_search", (*JS_FAMILY, "python"), ref.catch_silent_ref,
        ("Find the {lang} error handlers that swallow the error without logging it",
         "Which catch/except blocks in the {lang} code log nothing?",
         "List the {lang} exception handlers with no logging call in them"),
        Difficulty.HARD, mining=_catch, tags=_STRUCTURE,
    ),
    RuleTemplate(
        "catch-logging", "ast_grep_search", (*JS_FAMILY, "python"), ref.catch_logging_ref,
        ("Find the {lang} error handlers that log the error",
         "Which catch/except blocks in the {lang} code write to a logger or the console?"),
        Difficulty.MEDIUM, mining=_catch, tags=_STRUCTURE,
    ),
    RuleTemplate(
        "decorated", "ast_grep_search", ("python",), ref.decorated_ref,
        ("Find the Python definitions decorated with @{subject}",
         "Which functions or classes carry the @{subject} decorator? The whole definitions",
         "List everything decorated with @{subject} in the Python code"),
        Difficulty.MEDIUM, mining=_decorators, tags=_STRUCTURE, what="decorator",
        naive=lambda name: (_in_lang(f"@{name}", "py"),),
    ),
    RuleTemplate(
        "annotated-method", "ast_grep_search", ("java",), ref.annotated_method_ref,
        ("Find the Java methods annotated with @{subject}",
         "Which methods carry the @{subject} annotation? The whole methods, not the classes",
         "List every Java method marked @{subject}"),
        Difficulty.MEDIUM, mining=_annotations, tags=_STRUCTURE, what="annotation",
        naive=lambda name: (_in_lang(f"@{name}", "java"),),
    ),
    RuleTemplate(
        "implements", "ast_grep_search", ("java", "typescript", "tsx"), ref.implements_ref,
        ("Find the {lang} classes that implement `{subject}`",
         "Which classes implement the `{subject}` interface? The whole class declarations ({lang})",
         "List every {lang} class declared as an implementation of `{subject}`"),
        Difficulty.MEDIUM, mining=_implements, tags=_STRUCTURE, what="interface",
        naive=lambda name: ({"pattern": f"implements {name}", "fixed_strings": True},
                            {"pattern": name, "fixed_strings": True}),
    ),
    RuleTemplate(
        "go-package-call", "ast_grep_search", ("go",), ref.go_package_call_ref,
        ("Find every call of the Go function `{subject}`",
         "Where does the Go code call `{subject}`? The calls with their arguments",
         "List the call sites of `{subject}` in the Go sources, not mentions in comments or strings"),
        Difficulty.MEDIUM, mining=_go_calls, tags=_STRUCTURE, what="function",
        naive=lambda name: (_in_lang(name, "go"),),
    ),
    RuleTemplate(
        "todo-owner", "ripgrep_search", (), ref.todo_ref,
        ("Find the TODO and FIXME notes assigned to {subject}",
         "What work is {subject} down for? Their TODO and FIXME notes",
         "List every TODO or FIXME note that names {subject} as its owner"),
        Difficulty.EASY,
        mining=lambda _lang: Mining(r"\b(?:TODO|FIXME)\(([\w.-]+)\)", subjects=plain_subject),
        naive=lambda owner: ({"pattern": owner, "fixed_strings": True},
                             {"pattern": "TODO", "fixed_strings": True}),
        tags=_DECOYS, what="owner",
    ),
    *(
        RuleTemplate(
            f"secret-{word}", "ripgrep_search", (), ref.secret_ref,
            ("Find assignments that set a {subject} to a value (secrets in the code or config)",
             "Where is a {subject} written down with its value? Assignments only",
             "List every line that assigns something to a *{subject}* key or variable"),
            Difficulty.MEDIUM,
            naive=lambda w: ({"pattern": w, "case_sensitive": False},),
            tags=_DECOYS, extra={"subject": word},
        )
        for word in _SECRET_WORDS
    ),
    RuleTemplate(
        "unicode-identifier", "ripgrep_search", (), ref.unicode_identifier_ref,
        ("Find the functions, classes and variables whose names use letters outside ASCII",
         "Which declared names contain a non-ASCII character? Not strings or comments",
         "List every definition whose name mixes in a Unicode letter (a homoglyph risk)"),
        Difficulty.HARD,
        # Any non-ASCII text (accents in comments, strings, docs) is the decoy.
        naive=lambda _s: ({"pattern": r"[^\x00-\x7F]"},
                          {"pattern": r"\b(?:def|class|function|const|let|var)\s+\w+"}),
        tags=(*_DECOYS, "adversarial:unicode", "flag:pcre2"), extra={"subject": "non-ASCII identifier"},
    ),
    RuleTemplate(
        "config-key", "ripgrep_search", (), ref.config_key_ref,
        ("Find the {subject}_* settings in the config files",
         "Which config keys start with {subject}_? The lines that set them",
         "List every {subject}_ setting assigned in .env, .ini or .properties files"),
        Difficulty.EASY,
        mining=text_pass(r"^\s*([A-Z][A-Z0-9]*)_[A-Z0-9_]*\s*=", CONFIG_GLOBS),
        naive=lambda prefix: ({"pattern": f"{prefix}_", "fixed_strings": True},),
        tags=_DECOYS, what="prefix",
    ),
    RuleTemplate(
        "log-level", "ripgrep_search", (), ref.log_level_ref,
        ("Find the {subject} entries in the log files",
         "Which log lines were written at level {subject}? Not the code that mentions it",
         "List the {subject}-level records of the logs"),
        Difficulty.EASY,
        mining=text_pass(r"^\S+\s+([A-Z]{4,5})\b", ("*.log",)),
        naive=lambda level: ({"pattern": level, "fixed_strings": True},),
        tags=_DECOYS, what="level",
    ),
    *TEXT_TEMPLATES,
)  # fmt: skip


def templates_for(languages: frozenset[str]) -> list[tuple[RuleTemplate, str]]:
    """(template, language) pairs to mine in a corpus with files in `languages`; text rules with
    no language once (language "")."""
    out: list[tuple[RuleTemplate, str]] = []
    for template in TEMPLATES:
        if not template.languages:
            out.append((template, ""))
        else:
            out.extend((template, lang) for lang in template.languages if lang in languages)
    return out
