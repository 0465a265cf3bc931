"""The reference calls of the rule templates: `(language, subject) -> arguments` for each kind of
fact, as a reviewer would write the call by hand (`synthesis.rules` ties each to its wordings).

The ast-grep rules name tree-sitter node kinds of the grammars ast-grep ships; the tests run them
on the shipped corpora (`tests/synthesis/`), the newer ones (annotations, implements, Go package
calls) with their expected findings in `tests/synthesis/test_rules.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

Arguments = dict[str, Any]

#: Text files config keys live in (rg globs).
CONFIG_GLOBS: Final = ("*.env", "*.ini", "*.properties", "*.cfg", "*.conf", "*.toml")

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
#: Class declarations that can carry an implements clause, and the clause's path under them.
_IMPLEMENTS: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "java": (("class_declaration", "enum_declaration", "record_declaration"),
             ("super_interfaces", "type_list")),
    "typescript": (("class_declaration", "abstract_class_declaration"),
                   ("class_heritage", "implements_clause")),
    "tsx": (("class_declaration", "abstract_class_declaration"),
            ("class_heritage", "implements_clause")),
}  # fmt: skip


def _kinds(kinds: tuple[str, ...]) -> dict[str, Any]:
    return {"kind": kinds[0]} if len(kinds) == 1 else {"any": [{"kind": k} for k in kinds]}


def call_ref(language: str, subject: str) -> Arguments:
    return {"pattern": f"{subject}($$$ARGS)", "language": language}


def await_ref(language: str, subject: str) -> Arguments:
    return {"pattern": f"await {subject}($$$ARGS)", "language": language}


def new_ref(language: str, subject: str) -> Arguments:
    return {"pattern": f"new {subject}($$$ARGS)", "language": language}


def fn_calling_ref(language: str, subject: str) -> Arguments:
    has = {"pattern": f"{subject}($$$ARGS)", "stopBy": "end"}
    return {"rule": {**_kinds(_FUNCTION_KINDS[language]), "has": has}, "language": language}


def async_awaiting_ref(language: str, subject: str) -> Arguments:
    rule = {
        **_kinds(_FUNCTION_KINDS[language]),
        "regex": "^async",
        "has": {"pattern": f"await {subject}($$$ARGS)", "stopBy": "end"},
    }
    return {"rule": rule, "language": language}


def catch_silent_ref(language: str, _subject: str) -> Arguments:
    logging = [{"pattern": p} for p in _LOGGING[language]]
    rule = {"kind": _CATCH_KIND[language], "not": {"has": {"any": logging, "stopBy": "end"}}}
    return {"rule": rule, "language": language}


def catch_logging_ref(language: str, _subject: str) -> Arguments:
    logging = [{"pattern": p} for p in _LOGGING[language]]
    rule = {"kind": _CATCH_KIND[language], "has": {"any": logging, "stopBy": "end"}}
    return {"rule": rule, "language": language}


def decorated_ref(language: str, subject: str) -> Arguments:
    decorator = {"kind": "decorator", "regex": f"^@{re.escape(subject)}\\b"}
    return {"rule": {"kind": "decorated_definition", "has": decorator}, "language": language}


def annotated_method_ref(language: str, subject: str) -> Arguments:
    # `@Name` or `@Name(...)`, not `@NameSuffix`; the annotations are children of the method's
    # `modifiers`, so a class's or a parameter's annotation does not count.
    annotation = {
        "any": [{"kind": "marker_annotation"}, {"kind": "annotation"}],
        "regex": f"^@{re.escape(subject)}(?:$|[^\\w.])",
    }
    rule = {"kind": "method_declaration", "has": {"kind": "modifiers", "has": annotation}}
    return {"rule": rule, "language": language}


def implements_ref(language: str, subject: str) -> Arguments:
    classes, (clause, inner) = _IMPLEMENTS[language]
    # The interface by its name, generic (`Repo<T>`) or not; `Shape` is not `ShapeLike`.
    name = {"regex": f"^{re.escape(subject)}(?:$|<)"}
    rule = {**_kinds(classes), "has": {"kind": clause, "has": {"kind": inner, "has": name}}}
    return {"rule": rule, "language": language}


def go_package_call_ref(language: str, subject: str) -> Arguments:
    # Go reads the pattern `pkg.Func($$$ARGS)` as a type conversion, so the call is a rule: a call
    # whose function (its only selector child) is exactly `pkg.Func`.
    selector = {"kind": "selector_expression", "regex": f"^{re.escape(subject)}$"}
    return {"rule": {"kind": "call_expression", "has": selector}, "language": language}


def todo_ref(_language: str, owner: str) -> Arguments:
    return {"pattern": rf"\b(?:TODO|FIXME)\({re.escape(owner)}\)"}


def secret_ref(_language: str, word: str) -> Arguments:
    # An assignment with a value: `password=...`, `db_password: "..."`; an empty value is not one.
    return {"pattern": rf"(?i)\b\w*{word}\w*\s*[:=]\s*['\"]?[^\s'\"]"}


def unicode_identifier_ref(_language: str, _subject: str) -> Arguments:
    # A declared name with a letter outside ASCII (`def café`, `const größe`): mixed scripts and
    # homoglyphs hide in such names. The look-ahead needs PCRE2, where \w is Unicode-aware.
    keywords = "def|class|function|const|let|var|func|fn|val|type|interface|struct|enum"
    return {"pattern": rf"\b(?:{keywords})\s+(?=\w*[^\x00-\x7F])\w+", "pcre2": True}


def config_key_ref(_language: str, prefix: str) -> Arguments:
    return {"pattern": rf"^\s*{re.escape(prefix)}_[A-Z0-9_]*\s*=", "globs": list(CONFIG_GLOBS)}


def log_level_ref(_language: str, level: str) -> Arguments:
    return {"pattern": rf"^\S+\s+{level}\b", "globs": ["*.log"]}
