"""The text-search rules about code: where a function is defined (`definition`), the code lines
that name it (`word-use`), the imports of a module (`import`), the raise sites of an exception
(`raise`), a string literal (`string-literal`), a logging call with a fixed message
(`log-literal`) and the calls nobody awaits (`not-awaited`), each with its reference, its mining
pass and its second opinion (`synthesis.text_rules` gives them their wordings).

They are together because a reader judges each by the language's syntax: the checks ask the AST
(definitions, identifiers, string and call nodes) and the language's other spellings of the same
statement, where the comment and file rules of `synthesis.text_prose_rules` ask the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from codesearch_core.models import Check
from codesearch_core.synthesis.rule_kinds import (
    RG_TYPES,
    Arguments,
    Mining,
    dotted_prefixes,
    plain_subject,
)
from codesearch_core.synthesis.text_rule_kit import (
    COMMENT_KINDS,
    COMMENT_OPEN,
    DOTTED_NAME,
    IDENTIFIER_KINDS,
    STRING_KINDS,
    SUBJECT,
    PerLanguage,
    class_subject,
    dotted_subject,
    in_prose,
    node_check,
    path_prefixes,
    rg_check,
    same_for,
    token,
    with_subject,
)

# --- definition ---------------------------------------------------------------------------------

_DEF_LANGUAGES: Final = ("python", "rust", "go", "lua", "swift", "kotlin")
DEFINITIONS: Final = PerLanguage(
    {
        "python": r"^[ \t]*(?:async[ \t]+)?def[ \t]+{subject}[ \t]*\(",
        "rust": r"\bfn[ \t]+{subject}[ \t]*[(<]",
        "go": r"^func[ \t]+(?:\([^)\n]*\)[ \t]*)?{subject}[ \t]*[(\[]",
        "lua": r"\bfunction[ \t]+(?:[\w.]+[.:])?{subject}[ \t]*\(",
        "swift": r"\bfunc[ \t]+{subject}[ \t]*[(<]",
        "kotlin": r"\bfun[ \t]+(?:[\w.]+\.)?{subject}[ \t]*[(<]",
    },
    same_for(r"[A-Za-z_]\w*", _DEF_LANGUAGES),
    same_for(plain_subject, _DEF_LANGUAGES),
)
#: The name node of a function's declaration and the declarations it names, per language.
_DEF_NODES: Final[Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]]] = {
    "python": (("identifier", ("function_definition",)),),
    "rust": (("identifier", ("function_item", "function_signature_item")),),
    "go": (("identifier", ("function_declaration",)),
           ("field_identifier", ("method_declaration",))),
    "lua": (("identifier", ("function_declaration",)),),
    "swift": (("simple_identifier", ("function_declaration", "protocol_function_declaration")),),
    "kotlin": (("simple_identifier", ("function_declaration",)),),
}  # fmt: skip
_DEF_WORD: Final = r"\b(?:def|fn|func|function|fun)[ \t]+(?:[\w.]+[.:])?"


def definition_checks(language: str, subject: str) -> tuple[Check, ...]:
    name = f"^{re.escape(subject)}$"
    out = [
        node_check(language, (kind,), "ast_definition", "covers", regex=name,
                   inside={"stopBy": "neighbor", "any": [{"kind": p} for p in parents]})
        for kind, parents in _DEF_NODES[language]
    ]  # fmt: skip
    if language == "lua":
        # `function M.name()` / `M:name()`, and `M.name = function(...)`: Lua's other spellings.
        out.append(
            node_check(
                language,
                ("identifier",),
                "ast_definition",
                "covers",
                regex=name,
                inside={
                    "stopBy": "neighbor",
                    "any": [{"kind": "dot_index_expression"}, {"kind": "method_index_expression"}],
                    "inside": {"stopBy": "neighbor", "kind": "function_declaration"},
                },
            )
        )
        assigned = rf"(?:^|[^\w.])(?:[\w.]+[.:])?{re.escape(subject)}[ \t]*=[ \t]*function\b"
        out.append(rg_check("assigned_function", "covers", assigned, types=(RG_TYPES[language],)))
    return (*out, *in_prose(language, rf"{_DEF_WORD}{re.escape(subject)}\s*[(<\[]"))


# --- word-use: the code lines naming a subject, not the comment lines ----------------------------


def _code_line(language: str) -> str:
    return rf"^(?![ \t]*(?:{COMMENT_OPEN[language]}))[^\n]*?\b{SUBJECT}\b"


def word_mining(language: str) -> Mining:
    # The names the language defines more than once; the reference's mentions lie on other lines
    # than the definitions, so the pass only names them.
    return DEFINITIONS.mining(language, scoped=False)


def word_ref(language: str, name: str) -> Arguments:
    return {"pattern": with_subject(_code_line(language), name), "pcre2": True,
            "file_types": [RG_TYPES[language]]}  # fmt: skip


def word_checks(language: str, subject: str) -> tuple[Check, ...]:
    # Every identifier of that name is code a reader counts; a comment or a string (a docstring's
    # prose) mentioning it on a reference line is not.
    word = rf"\b{re.escape(subject)}\b"
    return (node_check(language, IDENTIFIER_KINDS[language], "ast_identifier", "covers",
                       regex=f"^{re.escape(subject)}$"),
            *in_prose(language, word))  # fmt: skip


# --- import ---------------------------------------------------------------------------------------

# `require('x')`, `import('x')`, `import 'x'`, and `from 'x'` ending an import or export statement
# (on its line, or closing a multi-line one): not a comment's "pulls a job from 'waiting'".
_JS_IMPORT: Final = (
    r"(?:\b(?:require|import)[ \t]*\([ \t]*|^[ \t]*(?:import|export)\b[^\n]*?\bfrom[ \t]+"
    r"|^[ \t]*\}[ \t]*from[ \t]+|^[ \t]*import[ \t]+)['\"]{subject}['\"]"
)
IMPORTS: Final = PerLanguage(
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
_NOT_COMMENT_LINE: Final = r"^(?![ \t]*(?://|/\*|\*))[^\n]*?"


def _python_import_checks(subject: str) -> tuple[Check, ...]:
    s = re.escape(subject)
    top, last = (re.escape(p) for p in (subject.split(".")[0], subject.rsplit(".", 1)[-1]))
    py = ("py",)
    # A package of the corpus imports itself relatively (`from .core import x` in `click/`):
    # those lines import the subject too, and the reference cannot resolve them.
    package = (
        ()
        if "." in subject
        else (
            rg_check(
                "relative_import",
                "covers",
                r"^[ \t]*from[ \t]+\.",
                types=py,
                globs=(f"**/{subject}/**",),
            ),
        )
    )
    return (
        *package,
        rg_check("relative_import", "covers",
                 rf"^[ \t]*from[ \t]+\.+(?:[\w.]*\.)?{last}\b"
                 rf"|^[ \t]*from[ \t]+\.+[ \t]+import\b[^#\n]*\b{last}\b", types=py, pcre2=True),
        # `import a, x`, `__import__('x')`, `importlib.import_module('x.y')`.
        rg_check("other_import_form", "covers",
                 rf"^[ \t]*import[ \t]+[^#\n]*,[ \t]*{s}(?:\.[\w.]+)?\b"
                 rf"|\b(?:__import__|import_module)\([ \t]*[rbuf]?['\"]{s}(?:\.[^'\"\n]*)?['\"]",
                 types=py, pcre2=True),
        # An import written inside a string (a script a test writes out) is not the code's.
        node_check("python", ("string",), "string", "excludes",
                   regex=rf"(?m)^[ \t]*(?:from|import)[ \t]+{top}\b"),
    )  # fmt: skip


def import_checks(language: str, subject: str) -> tuple[Check, ...]:
    s = re.escape(subject)
    types = (RG_TYPES[language],)
    if language == "python":
        return _python_import_checks(subject)
    if language in ("javascript", "typescript"):
        deep = (r"(?:\b(?:require|import)[ \t]*\([ \t]*|\bfrom[ \t]+|^[ \t]*import[ \t]+)"
                rf"['\"]{s}/")  # fmt: skip
        return (rg_check("subpath_import", "covers", deep, types=types),
                *in_prose(language, rf"['\"`]{s}['\"`]", strings=False))  # fmt: skip
    if language in ("c", "cpp"):
        nested = rf"^[ \t]*#[ \t]*include[ \t]*[<\"][^>\"\n]*/{s}[>\"]"
        # A `.h` is C to rg and to the corpus's language count, but in a C++ project its includes
        # are the C++ code's too: "the C code's includes" is then no clear request.
        other = "cpp" if language == "c" else "c"
        same = with_subject(IMPORTS.patterns[language], subject)
        return (rg_check("path_include", "covers", nested, types=types),
                rg_check("other_language", "covers", same, types=(other,)),
                *in_prose(language, rf"#\s*include\s*[<\"]{s}[>\"]", strings=False))  # fmt: skip
    if language == "java":
        loose = rf"{_NOT_COMMENT_LINE}\bimport[ \t]+(?:static[ \t]+)?{s}(?:[ \t]*\.|[ \t]*;)"
        return (rg_check("other_import_form", "covers", loose, types=types, pcre2=True),)
    if language == "kotlin":
        loose = rf"{_NOT_COMMENT_LINE}\bimport[ \t]+{s}(?:[ \t]*\.|[ \t]|$)"
        return (rg_check("other_import_form", "covers", loose, types=types, pcre2=True),)
    if language == "rust":
        head, _, last = subject.rpartition("::")
        forms = [
            r"^[ \t]*(?:pub(?:\([\w ]+\))?[ \t]+)?use[ \t]+(?:::)?"
            rf"{s}(?:::|[ \t]*;|[ \t]+as\b|[ \t]*$)"
        ]
        if head:  # `use std::{collections::HashMap, fmt}` names `std::collections`
            forms.append(rf"\buse[ \t]+(?:::)?{re.escape(head)}::\{{[^;]*\b{re.escape(last)}\b")
        else:
            forms.append(rf"\bextern[ \t]+crate[ \t]+{s}\b")
            # The crate's own module of that name (`use crate::asn1::...` beside the `asn1` crate):
            # "imports of `asn1`" would mean both.
            forms.append(rf"\buse[ \t]+(?:crate|super|self)(?:::\w+)*::{s}\b")
        return (rg_check("other_import_form", "covers", "|".join(forms), types=types),
                *in_prose(language, rf"\buse\s+{s}\b", strings=False))  # fmt: skip
    if language == "lua":
        loose = rf"\brequire[ \t]*\(?[ \t]*(?:['\"]|\[\[){s}(?:\.[\w.]+)?(?:['\"]|\]\])"
        return (rg_check("other_import_form", "covers", loose, types=types),
                *in_prose(language, rf"require\W+{s}\b", strings=False))  # fmt: skip
    # swift: `@testable import X`, `import struct X.Y`
    loose = (r"^[ \t]*(?:@\w+[ \t]+)*import[ \t]+"
             rf"(?:(?:typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?{s}\b")  # fmt: skip
    return (rg_check("other_import_form", "covers", loose, types=types),
            *in_prose(language, rf"\bimport\s+{s}\b", strings=False))  # fmt: skip


# --- raise ----------------------------------------------------------------------------------------

_THROW: Final = r"\bthrow[ \t]+new[ \t]+{subject}\b"
_RAISE_LANGUAGES: Final = ("python", "javascript", "typescript", "java")
RAISES: Final = PerLanguage(
    {"python": r"\braise[ \t]+{subject}\b", "javascript": _THROW, "typescript": _THROW,
     "java": _THROW},
    same_for(DOTTED_NAME, _RAISE_LANGUAGES),
    same_for(class_subject, _RAISE_LANGUAGES),
)  # fmt: skip


def raise_checks(language: str, subject: str) -> tuple[Check, ...]:
    # The class raised under another qualification (`raise click.BadParameter`, `throw new
    # errors.NotFound`) or thrown without `new` is raised all the same.
    last = re.escape(subject.rsplit(".", 1)[-1])
    keyword = r"\braise[ \t]+" if language == "python" else r"\bthrow[ \t]+(?:new[ \t]+)?"
    qualified = rf"{keyword}(?:[A-Za-z_$][\w$]*\.)*{last}\b"
    return (rg_check("qualified_raise", "covers", qualified, types=(RG_TYPES[language],)),
            *in_prose(language, rf"\b(?:raise|throw)\s+(?:new\s+)?(?:[\w$]+\.)*{last}\b"),
    )  # fmt: skip


# --- string-literal -------------------------------------------------------------------------------

_LITERAL_LANGUAGES: Final = ("python", "javascript", "typescript", "lua", "ruby", "php")
# A line is read from its start, a token at a time: any character that opens neither a string nor a
# comment, or a whole quoted string (escapes allowed). The literal must start at a token's boundary,
# so a quote inside another string (`"it's 'x'"`) or after a comment's marker (`# use 'x'`) never
# opens it; the back-reference closes it with the quote it opened with (PCRE2).
_SQ: Final = r"'(?:[^'\\\n]|\\.)*'"
_DQ: Final = r"\"(?:[^\"\\\n]|\\.)*\""
_BQ: Final = r"`(?:[^`\\\n]|\\.)*`"
_SCAN: Final[Mapping[str, str]] = {
    "python": rf"[^#'\"\n]|{_SQ}|{_DQ}", "ruby": rf"[^#'\"\n]|{_SQ}|{_DQ}",
    "javascript": rf"[^/'\"`\n]|/(?![/*])|{_SQ}|{_DQ}|{_BQ}",
    "typescript": rf"[^/'\"`\n]|/(?![/*])|{_SQ}|{_DQ}|{_BQ}",
    "lua": rf"[^-'\"\n]|-(?!-)|{_SQ}|{_DQ}",
    "php": rf"[^#/'\"\n]|/(?![/*])|{_SQ}|{_DQ}",
}  # fmt: skip
#: A block comment's continuation line (` * 'x'`) is skipped whole.
_BLOCK_LINE: Final[Mapping[str, str]] = {
    "javascript": r"(?![ \t]*\*)", "typescript": r"(?![ \t]*\*)", "php": r"(?![ \t]*\*)",
}  # fmt: skip
LITERALS: Final = PerLanguage(
    {lang: rf"^{_BLOCK_LINE.get(lang, '')}(?:{_SCAN[lang]})*?(['\"]){SUBJECT}\1"
     for lang in _LITERAL_LANGUAGES},
    same_for(r"[A-Za-z_][\w.-]{1,40}", _LITERAL_LANGUAGES),
    same_for(token, _LITERAL_LANGUAGES),
    pcre2=True,
)  # fmt: skip
#: What may open a string node's text besides the quote (Python's `b'x'`, `f"x"`).
_STRING_PREFIX: Final[Mapping[str, str]] = {"python": "[rRbBuUfF]{0,2}"}


def literal_mining(language: str) -> Mining:
    # rg's default engine has no back-reference: the pass takes either quote on either side,
    # which holds every literal the reference finds.
    return Mining(r"[\"']([A-Za-z_][\w.-]{1,40})[\"']", (RG_TYPES[language],),
                  subjects=token)  # fmt: skip


def literal_checks(language: str, subject: str) -> tuple[Check, ...]:
    s = re.escape(subject)
    exact = f"^{_STRING_PREFIX.get(language, '')}['\"`]{s}['\"`]$"
    quoted = f"['\"`]{s}['\"`]"
    kinds = STRING_KINDS[language]
    return (
        # Every string node that is exactly the subject is a literal the intent asks for.
        node_check(language, kinds, "ast_string", "covers", regex=exact),
        # A comment quoting it, or a longer string holding it quoted, is not one.
        node_check(language, COMMENT_KINDS[language], "comment", "excludes", regex=quoted),
        node_check(language, kinds, "inside_string", "excludes", regex=quoted,
                   **{"not": {"regex": exact}}),
    )  # fmt: skip


# --- log-literal ----------------------------------------------------------------------------------

#: The methods of a logger (and the console) that write a message.
_LEVEL: Final = r"(?:log|trace|debug|info|warn|warning|error|exception|critical|fatal)"
_JS_LOG: Final = r"(?:^|[^\w.$]){subject}[ \t]*\([ \t]*['\"`]"
LOGS: Final = PerLanguage(
    {"python": r"(?:^|[^\w.]){subject}[ \t]*\([ \t]*[rbuf]{0,2}['\"]",
     "javascript": _JS_LOG, "typescript": _JS_LOG},
    {"python": rf"(?:logger|logging|log|LOG|self\.log(?:ger)?)\.{_LEVEL}|warnings\.warn|print"
               r"|click\.(?:echo|secho)",
     "javascript": rf"(?:console|logger|log)\.{_LEVEL}|debug",
     "typescript": rf"(?:console|logger|log)\.{_LEVEL}|debug"},
    same_for(plain_subject, ("python", "javascript", "typescript")),
)  # fmt: skip
#: (callee kinds: a plain name, a dotted one; the call; its argument list; what opens a string).
_CALL_NODES: Final[Mapping[str, tuple[str, str, str, str, str]]] = {
    "python": ("identifier", "attribute", "call", "argument_list", "[rRbBuUfF]{0,2}['\"]"),
    **dict.fromkeys(("javascript", "typescript"), (
        "identifier", "member_expression", "call_expression", "arguments", "['\"`]")),
}  # fmt: skip


def log_checks(language: str, subject: str) -> tuple[Check, ...]:
    # The calls the AST sees with a string first (a message on the next line too); the callee node
    # is the finding, one line.
    plain, dotted, call, args, opens = _CALL_NODES[language]
    literal_first = {"kind": args, "stopBy": "neighbor", "regex": rf"^\(\s*{opens}"}
    return (node_check(language, (dotted if "." in subject else plain,), "ast_call", "covers",
                       regex=f"^{re.escape(subject)}$",
                       inside={"kind": call, "stopBy": "neighbor", "has": literal_first}),
            *in_prose(language, rf"{re.escape(subject)}\s*\(", strings=False))  # fmt: skip


# --- not-awaited ----------------------------------------------------------------------------------

_AWAIT_LANGUAGES: Final = ("python", "javascript", "typescript")
# Calls of a method or module function that some code awaits, here without `await` before them
# (PCRE2 look-behinds; `.then(...)` chains and returned promises are among them).
NOT_AWAITED: Final = PerLanguage(
    same_for(r"(?<![\w$.])(?<!await ){subject}[ \t]*\(", _AWAIT_LANGUAGES),
    same_for(DOTTED_NAME, _AWAIT_LANGUAGES),
    same_for(dotted_subject, _AWAIT_LANGUAGES),
    pcre2=True,
)
_AWAIT_KIND: Final[Mapping[str, str]] = {
    "python": "await",
    "javascript": "await_expression",
    "typescript": "await_expression",
}


def awaited_mining(language: str) -> Mining:
    return Mining(rf"\bawait[ \t]+({DOTTED_NAME})[ \t]*\(", (RG_TYPES[language],),
                  subjects=dotted_subject, scoped=False)  # fmt: skip


def not_awaited_checks(language: str, subject: str) -> tuple[Check, ...]:
    s = re.escape(subject)
    _, dotted, call, _, _ = _CALL_NODES[language]
    # The AST's calls whose parent is no await must all be found; a call awaited with other
    # spacing (`await  x(`, `await\n x(`) must not be.
    not_awaited = {
        "kind": call,
        "stopBy": "neighbor",
        "not": {"inside": {"kind": _AWAIT_KIND[language], "stopBy": "neighbor"}},
    }
    return (node_check(language, (dotted,), "ast_call", "covers", regex=f"^{s}$",
                       inside=not_awaited),
            rg_check("awaited", "excludes", rf"\bawait\s+\(?\s*{s}\s*\(",
                     types=(RG_TYPES[language],), multiline=True),
            *in_prose(language, rf"{s}\s*\(", strings=False))  # fmt: skip
