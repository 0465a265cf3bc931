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

import re
from typing import Final

from codesearch_core.models import Difficulty
from codesearch_core.synthesis import rule_calls as ref
from codesearch_core.synthesis import rule_checks as checks
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
    callable_name,
    calls,
    constructions,
    go_packages,
    interface_names,
    keyword,
    plain_subject,
    text_pass,
)
from codesearch_core.synthesis.text_rules import TEXT_TEMPLATES

# Each rule's wordings: at least eight, opening differently, saying what the rule finds in a
# developer's words (no flags, globs or regex; the literal only where a developer would name it).
_CALL_WORDS: Final = (
    "Find every call of `{subject}` in the {lang} code",
    "Where is `{subject}` called in the {lang} sources? Method calls count too",
    "List the {lang} call sites of `{subject}`, with their arguments",
    "Show me each place the {lang} code invokes `{subject}`",
    "I'm changing the signature of `{subject}`: which {lang} calls would need updating?",
    "Which lines of the {lang} code call `{subject}`?",
    "Before renaming `{subject}`, find all the {lang} places that call it",
    "Gather the {lang} calls to `{subject}`, including the ones split over several lines",
    "How often is `{subject}` invoked in the {lang} code? Give each call",
    "Calls of `{subject}` in the {lang} files, please: every one of them",
)
_AWAIT_WORDS: Final = (
    "Find the awaited calls of `{subject}` in the {lang} code",
    "Where does the {lang} code await `{subject}`?",
    "List every place the {lang} code waits on a call of `{subject}`",
    "Which {lang} calls of `{subject}` are awaited? Give the await expressions",
    "Show me each `await` on `{subject}` in the {lang} sources",
    "I need the spots where {lang} code blocks on `{subject}` with await",
    "Every awaited invocation of `{subject}` in {lang} files",
    "Gather the {lang} await expressions whose call is `{subject}`",
)
_NEW_WORDS: Final = (
    "Find where `{subject}` objects are constructed in the {lang} code",
    "Every place the {lang} files create a new `{subject}`",
    "Where does the {lang} code instantiate `{subject}`?",
    "List the {lang} constructor calls of `{subject}`, with their arguments",
    "Which lines of the {lang} code build a `{subject}` with new?",
    "Show me each new `{subject}` instance the {lang} sources make",
    "I'm changing the constructor of `{subject}`: which {lang} call sites create one?",
    "Gather the {lang} expressions that construct a `{subject}`",
)
_FN_CALLING_WORDS: Final = (
    "Find the whole {lang} functions that call `{subject}` themselves",
    "Which {lang} functions call `{subject}` directly in their own body? Give the functions",
    "List every {lang} function or method whose own body calls `{subject}`",
    "Show me the {lang} functions that invoke `{subject}`, not the ones that only wrap such a function",
    "Who calls `{subject}`? The enclosing {lang} functions of its calls, whole",
    "I want the callers of `{subject}` in the {lang} code, as whole function definitions",
    "Give the {lang} functions from which `{subject}` is called (the innermost function of each call)",
    "Each {lang} function that makes a call of `{subject}` itself, from header to end",
)
_ASYNC_WORDS: Final = (
    "Find the async {lang} functions that await `{subject}` themselves",
    "Which async functions in the {lang} code wait on `{subject}`? The whole functions",
    "List the {lang} async functions whose own body awaits a call of `{subject}`",
    "Show me every async {lang} function that awaits `{subject}`, whole",
    "Who awaits `{subject}`? The enclosing async {lang} functions",
    "I need the {lang} coroutines that await `{subject}`, not functions that only contain one",
    "Give the async {lang} functions or methods in which `{subject}` is awaited",
    "Each async {lang} function making an awaited call of `{subject}`, from header to end",
)
_SILENT_WORDS: Final = (
    "Find the {lang} exception handlers that do nothing at all with the error",
    "Which catch blocks in the {lang} code are empty, silently swallowing the error?",
    "List the {lang} error handlers whose body is empty or just a pass",
    "Show me the {lang} handlers where a caught exception is ignored without a single statement",
    "Where does the {lang} code catch an exception and then do nothing?",
    "I'm auditing error handling: give the empty {lang} catch clauses",
    "Every {lang} exception handler that silently ignores what it caught",
    "Do-nothing error handlers in the {lang} code: the whole catch clauses, please",
)
_LOGGING_WORDS: Final = (
    "Find the {lang} try statements' error handlers that log the error",
    "Which catch clauses of try blocks in the {lang} code write to a logger or the console?",
    "List the {lang} exception handlers (of try statements) that make a logging call",
    "Show me the {lang} catch clauses that report a caught error through logging or printing",
    "Where does the {lang} code log inside the handler of a try statement? The whole handlers",
    "I want every {lang} try/except or try/catch handler that logs something",
    "Give the {lang} exception handlers of try blocks with a log, console or print call in them",
    "Every {lang} catch clause that leaves a trace in the logs",
)
_DECORATED_WORDS: Final = (
    "Find the Python definitions decorated with @{subject}",
    "Which functions or classes carry the @{subject} decorator? The whole definitions",
    "List everything decorated with @{subject} in the Python code",
    "Show me each Python function or class wrapped by @{subject}",
    "Where is @{subject} applied? Give the decorated definitions",
    "I need every definition that has @{subject} among its decorators",
    "Give the Python functions and classes marked with @{subject}, decorators included",
    "Every use of the @{subject} decorator, with the definition under it",
)
_ANNOTATED_WORDS: Final = (
    "Find the Java methods annotated with @{subject}",
    "Which methods carry the @{subject} annotation? The whole methods, not the classes",
    "List every Java method marked @{subject}",
    "Show me each Java method that has @{subject} on it",
    "Where is @{subject} put on a method? Give the methods",
    "I need the Java methods with the @{subject} annotation, header to end",
    "Give the methods annotated @{subject} (not fields, parameters or classes)",
    "Every @{subject} method in the Java sources",
)
_IMPLEMENTS_WORDS: Final = (
    "Find the {lang} classes that implement `{subject}`",
    "Which classes implement the `{subject}` interface? The whole class declarations ({lang})",
    "List every {lang} class declared as an implementation of `{subject}`",
    "Show me the {lang} implementations of `{subject}`",
    "Where is `{subject}` implemented? The {lang} classes, whole",
    "I'm changing the `{subject}` interface: which {lang} classes implement it?",
    "Give the {lang} class declarations whose implements list names `{subject}`",
    "Every {lang} class that implements `{subject}`, generic or not",
)
_SUBCLASS_WORDS: Final = (
    "Which {lang} classes inherit from `{subject}`? The whole class definitions",
    "Find the subclasses of `{subject}` in the {lang} code",
    "List every {lang} class derived from `{subject}`",
    "Show me the {lang} classes built on top of `{subject}`, whole",
    "I'm changing `{subject}`: which {lang} classes extend it?",
    "Give the {lang} classes whose base class is `{subject}`",
    "What subclasses `{subject}` in this {lang} code? Each class in full",
    "Every direct {lang} subclass of `{subject}`, with its body",
)
_METHOD_WORDS: Final = (
    "Which {lang} classes define a `{subject}` method? The whole methods",
    "Find every `{subject}` method in the {lang} classes",
    "List the {lang} methods named `{subject}`, with their bodies",
    "Show me each class's own `{subject}` method ({lang})",
    "I'm changing the signature of `{subject}`: give me every {lang} method with that name",
    "Where do the {lang} classes implement `{subject}`? The methods, whole",
    "Give the `{subject}` methods of the {lang} classes, not module-level functions",
    "Every {lang} method called `{subject}`, decorators included",
)
_GO_WORDS: Final = (
    "Find every call of the Go function `{subject}`",
    "Where does the Go code call `{subject}`? The calls with their arguments",
    "List the call sites of `{subject}` in the Go sources",
    "Show me each place the Go code invokes `{subject}`",
    "Which Go lines call the package function `{subject}`?",
    "I'm replacing `{subject}`: give its Go call sites",
    "Give the calls of `{subject}` in the Go code, every one",
    "Every invocation of `{subject}` across the Go packages",
)
_TODO_WORDS: Final = (
    "Find the TODO and FIXME notes assigned to {subject}",
    "What work is {subject} down for? Their TODO and FIXME notes",
    "List every TODO or FIXME note that names {subject} as its owner",
    "Show me the open notes with {subject}'s name on them",
    "Which TODOs belong to {subject}?",
    "I'm covering for {subject}: give me the TODO and FIXME notes they own",
    "Give the FIXME and TODO markers tagged with {subject}",
    "Every to-do note owned by {subject}, code and docs alike",
)
_SECRET_INTENTS: Final = (
    "Find the config entries that set a {subject} to a value",
    "Where is a {subject} written down with its value in the configuration files?",
    "List every config line that assigns a non-empty {subject}",
    "Show me the {subject} values committed in the env and config files",
    "Which configuration keys for a {subject} hold an actual value?",
    "I'm scanning the config for leaked credentials: give each {subject} that is filled in",
    "Give the settings in the config files whose {subject} is spelled out",
    "Every configured {subject} with its value right there, not empty and not a reference",
)
_UNICODE_WORDS: Final = (
    "Find the functions, classes and variables whose names use letters outside ASCII",
    "Which declared names contain a non-ASCII character? Not strings or comments",
    "List every definition whose name mixes in a Unicode letter (a homoglyph risk)",
    "Show me the identifiers declared with accented or non-Latin letters",
    "Where does the code declare a name that is not plain ASCII?",
    "I'm hunting homoglyphs: give the declarations whose names have non-ASCII letters",
    "Give each function, class or variable declared with a Unicode letter in its name",
    "Every definition of a non-ASCII name, not the text that merely contains such letters",
)
_CONFIG_WORDS: Final = (
    "Find the config settings whose names start with {subject}_",
    "Which config keys begin with {subject}_? The lines that set them",
    "List every {subject}_ setting assigned in the configuration files",
    "Show me where the {subject}_ variables are set in the env and config files",
    "What {subject}_ options does the configuration define?",
    "I'm moving the {subject}_ settings: give each line that sets one",
    "Give the environment and config entries prefixed {subject}_",
    "Every configuration line that assigns a {subject}_ key",
)
_LEVEL_WORDS: Final = (
    "Find the {subject} entries in the log files",
    "Which log lines were written at level {subject}? Not the code that mentions it",
    "List the {subject}-level records of the logs",
    "Show me every log record with level {subject}",
    "What got logged as {subject}? The records themselves",
    "I'm triaging the logs: give each {subject} record",
    "Give the log entries whose level is {subject}, not messages that only mention the word",
    "Every {subject} line in the application logs",
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
    # The whole decorator name: `@app.route` is not a use of `@app`.
    return Mining(r"^[ \t]*@[ \t]*([A-Za-z_][\w.]*)", (RG_TYPES[language],),
                  subjects=plain_subject)  # fmt: skip


def _annotations(language: str) -> Mining:
    return Mining(r"@[ \t]*([A-Za-z_][\w.]*)", (RG_TYPES[language],), subjects=plain_subject)


def _implements(language: str) -> Mining:
    return Mining(r"\bimplements[ \t\r\n]+([^{;]+?)[ \t\r\n]*\{", (RG_TYPES[language],),
                  multiline=True, subjects=interface_names)  # fmt: skip


#: A class header's base list (Python) or its `extends` (Java, JavaScript, TypeScript): the base
#: names, each subject the last part of a dotted one (`mod.Base` is a subclass of `Base`).
_BASES: Final = {
    "python": r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)",
    "java": r"\bclass[ \t]+\w+(?:<[^{]*?>)?[ \t\r\n]+extends[ \t\r\n]+([\w.]+)",
    "javascript": r"\bclass\b(?:[ \t]+[\w$]+)?[ \t\r\n]+extends[ \t\r\n]+([\w$.]+)",
    "typescript": r"\bclass\b(?:[ \t]+[\w$]+)?(?:<[^{]*?>)?[ \t\r\n]+extends[ \t\r\n]+([\w$.]+)",
    "tsx": r"\bclass\b(?:[ \t]+[\w$]+)?(?:<[^{]*?>)?[ \t\r\n]+extends[ \t\r\n]+([\w$.]+)",
}  # fmt: skip


def _base_names(text: str) -> tuple[str, ...]:
    """`Base, mod.Mixin, metaclass=M` -> `Base`, `Mixin`: each positional base's last name."""
    names = []
    for part in re.sub(r"\[[^\]]*\]", "", text).split(","):
        part = "".join(part.split())
        if part and "=" not in part:
            # A class a developer would name: `object` is every class's base, `A` a placeholder.
            names += [n for n in plain_subject(part.rsplit(".", 1)[-1])
                      if n != "object" and callable_name(n)]  # fmt: skip
    return tuple(names)


def _bases(language: str) -> Mining:
    return Mining(_BASES[language], (RG_TYPES[language],), multiline=True, subjects=_base_names)


def _method_names(text: str) -> tuple[str, ...]:
    return tuple(n for n in plain_subject(text) if callable_name(n))


def _methods(language: str) -> Mining:
    # Indented definitions: methods, and functions nested in others (the reference tells them
    # apart; an unindented one is a module-level function, never a method).
    return Mining(r"^[ \t]+(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(", (RG_TYPES[language],),
                  subjects=_method_names)  # fmt: skip


def _go_calls(language: str) -> Mining:
    return Mining(rf"\b([a-z][0-9A-Za-z_]*[ \t]*\.[ \t]*[A-Z][0-9A-Za-z_]*){WS}\(",
                  (RG_TYPES[language],), multiline=True, subjects=go_packages)  # fmt: skip


def _in_lang(subject_text: str, rg_type: str) -> Arguments:
    return {"pattern": subject_text, "fixed_strings": True, "file_types": [rg_type]}


def _call_text(subject: str) -> tuple[Arguments, ...]:
    # The callee's whole name as text (the seed audit's keyword searches give the pieces of the
    # rule's text, `DB` and `query`, with the language's file type; a pattern gave `DB.query`).
    return ({"pattern": subject, "fixed_strings": True},)


TEMPLATES: Final[tuple[RuleTemplate, ...]] = (
    RuleTemplate(
        "call", "ast_grep_search", CALL_LANGUAGES, ref.call_ref, _CALL_WORDS, Difficulty.EASY,
        mining=calls, tags=_STRUCTURE, what="function", second=checks.call_second,
        naive=_call_text,
    ),
    RuleTemplate(
        "await-call", "ast_grep_search", (*JS_FAMILY, "python"), ref.await_ref, _AWAIT_WORDS,
        Difficulty.MEDIUM, mining=awaited_calls, tags=_STRUCTURE, what="function",
        second=checks.await_second,
    ),
    RuleTemplate(
        "new", "ast_grep_search", (*JS_FAMILY, "java", "csharp"), ref.new_ref, _NEW_WORDS,
        Difficulty.EASY, mining=constructions, tags=_STRUCTURE, what="class",
        second=checks.new_second,
    ),
    RuleTemplate(
        "function-calling", "ast_grep_search", (*JS_FAMILY, "python"), ref.fn_calling_ref,
        _FN_CALLING_WORDS, Difficulty.MEDIUM, mining=calls, tags=_STRUCTURE, what="function",
        second=checks.fn_calling_second,
    ),
    RuleTemplate(
        "async-awaiting", "ast_grep_search", (*JS_FAMILY, "python"), ref.async_awaiting_ref,
        _ASYNC_WORDS, Difficulty.HARD, mining=awaited_calls, tags=_STRUCTURE, what="function",
        second=checks.async_awaiting_second,
    ),
    RuleTemplate(
        "catch-silent", "ast_grep_search", (*JS_FAMILY, "python"), ref.catch_silent_ref,
        _SILENT_WORDS, Difficulty.HARD, mining=_catch, tags=_STRUCTURE,
        second=checks.catch_silent_second,
    ),
    RuleTemplate(
        "catch-logging", "ast_grep_search", (*JS_FAMILY, "python"), ref.catch_logging_ref,
        _LOGGING_WORDS, Difficulty.MEDIUM, mining=_catch, tags=_STRUCTURE,
        second=checks.catch_logging_second,
    ),
    RuleTemplate(
        "decorated", "ast_grep_search", ("python",), ref.decorated_ref, _DECORATED_WORDS,
        Difficulty.MEDIUM, mining=_decorators, tags=_STRUCTURE, what="decorator",
        naive=lambda name: (_in_lang(f"@{name}", "py"),), second=checks.decorated_second,
    ),
    RuleTemplate(
        "annotated-method", "ast_grep_search", ("java",), ref.annotated_method_ref,
        _ANNOTATED_WORDS, Difficulty.MEDIUM, mining=_annotations, tags=_STRUCTURE,
        what="annotation", naive=lambda name: (_in_lang(f"@{name}", "java"),),
        second=checks.annotated_method_second,
    ),
    RuleTemplate(
        "implements", "ast_grep_search", ("java", "typescript", "tsx"), ref.implements_ref,
        _IMPLEMENTS_WORDS, Difficulty.MEDIUM, mining=_implements, tags=_STRUCTURE,
        what="interface",
        naive=lambda name: ({"pattern": f"implements {name}", "fixed_strings": True},
                            {"pattern": name, "fixed_strings": True}),
        second=checks.implements_second,
    ),
    RuleTemplate(
        "subclass", "ast_grep_search", ref.SUBCLASS_LANGUAGES, ref.subclass_ref,
        _SUBCLASS_WORDS, Difficulty.MEDIUM, mining=_bases, tags=_STRUCTURE, what="class",
        naive=lambda name: ({"pattern": name, "fixed_strings": True},
                            {"pattern": f"({name})", "fixed_strings": True},
                            {"pattern": f"extends {name}", "fixed_strings": True}),
        second=checks.subclass_second,
    ),
    RuleTemplate(
        "method", "ast_grep_search", ("python",), ref.method_ref, _METHOD_WORDS,
        Difficulty.MEDIUM, mining=_methods, tags=_STRUCTURE, what="method",
        naive=lambda name: ({"pattern": f"def {name}", "fixed_strings": True},
                            {"pattern": name, "fixed_strings": True, "word": True}),
        second=checks.method_second,
    ),
    RuleTemplate(
        "go-package-call", "ast_grep_search", ("go",), ref.go_package_call_ref, _GO_WORDS,
        Difficulty.MEDIUM, mining=_go_calls, tags=_STRUCTURE, what="function",
        naive=lambda name: (_in_lang(name, "go"),), second=checks.go_package_call_second,
    ),
    RuleTemplate(
        "todo-owner", "ripgrep_search", (), ref.todo_ref, _TODO_WORDS, Difficulty.EASY,
        mining=lambda _lang: Mining(r"\b(?:TODO|FIXME)[ \t]*\([ \t]*([\w.-]+)[ \t]*\)",
                                    subjects=plain_subject),
        naive=lambda owner: ({"pattern": owner, "fixed_strings": True},
                             {"pattern": "TODO", "fixed_strings": True}),
        tags=_DECOYS, what="owner", second=checks.todo_second,
    ),
    *(
        RuleTemplate(
            f"secret-{word}", "ripgrep_search", (), ref.secret_ref, _SECRET_INTENTS,
            Difficulty.MEDIUM,
            naive=lambda w: ({"pattern": w, "case_sensitive": False},),
            tags=_DECOYS, extra={"subject": word}, second=checks.secret_second,
        )
        for word in _SECRET_WORDS
    ),
    RuleTemplate(
        "unicode-identifier", "ripgrep_search", (), ref.unicode_identifier_ref, _UNICODE_WORDS,
        Difficulty.HARD,
        # Any non-ASCII text (accents in comments, strings, docs) is the decoy.
        naive=lambda _s: ({"pattern": r"[^\x00-\x7F]"},
                          {"pattern": r"\b(?:def|class|function|const|let|var)\s+\w+"}),
        tags=(*_DECOYS, "adversarial:unicode", "flag:pcre2"), extra={"subject": "non-ASCII identifier"},
        second=checks.unicode_identifier_second,
    ),
    RuleTemplate(
        "config-key", "ripgrep_search", (), ref.config_key_ref, _CONFIG_WORDS, Difficulty.EASY,
        mining=text_pass(r"^\s*(?:export\s+|-\s+)?['\"]?([A-Z][A-Z0-9]*)_[A-Z0-9_]*['\"]?\s*[=:]",
                         CONFIG_GLOBS),
        naive=lambda prefix: ({"pattern": f"{prefix}_", "fixed_strings": True},),
        tags=_DECOYS, what="prefix", second=checks.config_key_second,
    ),
    RuleTemplate(
        "log-level", "ripgrep_search", (), ref.log_level_ref, _LEVEL_WORDS, Difficulty.EASY,
        # Lazy: the first level word of the record's first fields, as the reference takes it.
        mining=text_pass(r"^(?:\S+\s+){0,3}?\[?(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR"
                         r"|FATAL|CRITICAL)\b", ("*.log",)),
        naive=lambda level: ({"pattern": level, "fixed_strings": True},),
        tags=_DECOYS, what="level", second=checks.log_level_second,
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
