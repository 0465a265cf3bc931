"""The reference calls of the rule templates: `(language, subject) -> arguments` for each kind of
fact, as a reviewer would write the call by hand (`synthesis.rules` ties each to its wordings;
each rule's second opinion is in `synthesis.rule_checks`, which builds on the node-kind tables
and rule builders here).

The ast-grep rules name tree-sitter node kinds of the grammars ast-grep ships (each checked with
`ast-grep run --debug-query=ast`); the tests run them on corpora written in
`tests/synthesis/test_rules.py` and `test_call_rules.py`. The tool's rule schema bounds them: three
levels of nesting below the top rule, four branches to an `any`, `stopBy` "neighbor" or "end" only
(no rule object), which is why the innermost-function test below is written as a `not`.

What "a call of `echo`" means: a reader counts `echo(...)`, `click.echo(...)`, `self.echo(...)`,
`x.y().echo(...)`, `echo<T>(...)` and, in Kotlin and Swift, `echo { ... }`; a dotted subject
(`DB.query`) is that callee exactly. A callee is the call node's direct child (its function), told
by kind and text: an identifier named so, or a member access ending in `.echo`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

Arguments = dict[str, Any]
Rule = dict[str, Any]

#: Text files config keys live in (rg globs): `.env`, `.env.example`, ini/properties files, and
#: YAML (a compose file's environment).
CONFIG_GLOBS: Final = (
    "*.env", ".env*", "*.ini", "*.properties", "*.cfg", "*.conf", "*.yaml", "*.yml",
)  # fmt: skip

#: The call node of each language (Swift: a generic type's `Foo<T>(x)` is a constructor node).
CALL_KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    "python": ("call",), "javascript": ("call_expression",), "typescript": ("call_expression",),
    "tsx": ("call_expression",), "java": ("method_invocation",), "kotlin": ("call_expression",),
    "swift": ("call_expression", "constructor_expression"), "c": ("call_expression",),
    "cpp": ("call_expression",), "rust": ("call_expression",), "lua": ("function_call",),
    "csharp": ("invocation_expression",), "scala": ("call_expression",),
}  # fmt: skip
AWAIT_KIND: Final[Mapping[str, str]] = {
    "python": "await", "javascript": "await_expression", "typescript": "await_expression",
    "tsx": "await_expression",
}  # fmt: skip
_JS_FUNCTIONS: Final = (
    "function_declaration", "function_expression", "arrow_function", "method_definition",
    "generator_function_declaration", "generator_function",
)  # fmt: skip
#: The nodes a call belongs to (its innermost one). Python's `lambda` is not one: a lambda is part
#: of the def it is written in.
FUNCTION_KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    "javascript": _JS_FUNCTIONS, "typescript": _JS_FUNCTIONS, "tsx": _JS_FUNCTIONS,
    "python": ("function_definition",),
}  # fmt: skip
#: The same nodes in at most four branches (the `not` below nests too deep for a nested `any`):
#: every JavaScript function, generator and expression form's text starts with `function` or
#: `async function`.
_INNER_FUNCTIONS: Final[Mapping[str, tuple[Rule, ...]]] = {
    **{
        lang: ({"regex": r"^(?:async\s+)?function\b"}, {"kind": "arrow_function"},
               {"kind": "method_definition"})
        for lang in ("javascript", "typescript", "tsx")
    },
    "python": ({"kind": "function_definition"},),
}  # fmt: skip
#: An async function's text starts with `async` (a method's after its modifiers; TypeScript's
#: decorators are the method's siblings, not in its text).
_ASYNC: Final = r"^(?:(?:static|public|private|protected|override|readonly|abstract)\s+)*async\b"
CATCH_KIND: Final[Mapping[str, str]] = {
    "javascript": "catch_clause", "typescript": "catch_clause", "tsx": "catch_clause",
    "python": "except_clause",
}  # fmt: skip
#: A logging call, by its callee: a logger, `console`, `logging`, on any receiver
#: (`self.logger.error`, `this.log.warn`), `print`, `warnings.warn`, `traceback.print_exc`,
#: `sys.stderr.write`, `debug(...)`.
_LOG_CALL: Final = (
    r"^(?:[\w$]+\s*\.\s*)*(?:console|logger|logging|log|_log|_logger|LOG|LOGGER|Logger|Log"
    r"|warnings|traceback|stderr)\s*\.\s*\w+\s*\(|^(?:print|debug|warn|debuglog)\s*\("
)
#: Class declarations that can carry an implements clause, and the clause's path under them.
_IMPLEMENTS: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "java": (("class_declaration", "enum_declaration", "record_declaration"),
             ("super_interfaces", "type_list")),
    "typescript": (("class_declaration", "abstract_class_declaration"),
                   ("class_heritage", "implements_clause")),
    "tsx": (("class_declaration", "abstract_class_declaration"),
            ("class_heritage", "implements_clause")),
}  # fmt: skip
#: Type arguments, one level nested (`<T>`, `<Map<K, V>>`).
TYPE_ARGS: Final = r"<(?:[^<>()\n]|<[^<>()\n]*>)*>"


def any_kind(kinds: tuple[str, ...]) -> Rule:
    """One kind, or an `any` of them (nested by fours: the schema's branch bound)."""
    if len(kinds) == 1:
        return {"kind": kinds[0]}
    if len(kinds) <= 4:
        return {"any": [{"kind": k} for k in kinds]}
    return {"any": [*({"kind": k} for k in kinds[:3]), any_kind(kinds[3:])]}


def dotted_regex(subject: str) -> str:
    """`DB.query` as a regex, any whitespace around its dots (`DB\n  .query`)."""
    return r"\s*\.\s*".join(re.escape(p) for p in subject.split("."))


def _callees(language: str, subject: str) -> list[Rule]:
    """The callee nodes (a call node's direct children) that name `subject`: kind and text."""
    if "." in subject:  # the qualified name exactly (`DB.query`), generic or not
        exact = rf"^{dotted_regex(subject)}$"
        member = {
            "python": "attribute", "javascript": "member_expression",
            "typescript": "member_expression", "tsx": "member_expression",
            "kotlin": "navigation_expression", "swift": "navigation_expression",
            "c": "field_expression", "cpp": "field_expression", "rust": "field_expression",
            "lua": "dot_index_expression", "csharp": "member_access_expression",
            "scala": "field_expression",
        }[language]  # fmt: skip
        if language == "csharp":
            exact = rf"^{dotted_regex(subject)}(?:\s*<[\s\S]*>)?$"
        return [{"kind": member, "regex": exact}]
    n = re.escape(subject)
    dot = rf"\.\s*{n}$"
    table: dict[str, list[Rule]] = {
        "python": [{"kind": "identifier"}, {"kind": "attribute", "regex": dot}],
        "javascript": [{"kind": "identifier"}, {"kind": "member_expression", "regex": dot}],
        "kotlin": [{"kind": "simple_identifier"}, {"kind": "navigation_expression", "regex": dot}],
        "swift": [{"kind": "simple_identifier"}, {"kind": "navigation_expression", "regex": dot},
                  {"kind": "user_type", "regex": rf"^{n}\s*<"}],
        "c": [{"kind": "identifier"}, {"kind": "field_expression", "regex": rf"(?:\.|->)\s*{n}$"}],
        "cpp": [
            {"kind": "identifier"},
            {"kind": "field_expression",
             "regex": rf"(?:\.|->)\s*(?:template\s+)?{n}(?:\s*<[\s\S]*>)?$"},
            {"kind": "qualified_identifier",
             "regex": rf"::\s*(?:template\s+)?{n}(?:\s*<[\s\S]*>)?$"},
            {"kind": "template_function", "regex": rf"^{n}\s*<"},
        ],
        "rust": [
            {"kind": "identifier"}, {"kind": "field_expression", "regex": dot},
            {"kind": "scoped_identifier", "regex": rf"::\s*{n}$"},
            {"kind": "generic_function", "regex": rf"(?:^|\.|::)\s*{n}\s*::\s*<"},
        ],
        "lua": [{"kind": "identifier"}, {"kind": "dot_index_expression", "regex": dot},
                {"kind": "method_index_expression", "regex": rf":\s*{n}$"}],
        "csharp": [
            {"kind": "identifier"},
            {"kind": "member_access_expression", "regex": rf"\.\s*{n}(?:\s*<[\s\S]*>)?$"},
            {"kind": "generic_name", "regex": rf"^{n}\s*<"},
            {"kind": "conditional_access_expression", "regex": rf"\.\s*{n}(?:\s*<[\s\S]*>)?$"},
        ],
        "scala": [{"kind": "identifier"}, {"kind": "field_expression", "regex": dot},
                  {"kind": "generic_function", "regex": rf"(?:^|\.)\s*{n}\s*\["}],
    }  # fmt: skip
    table["typescript"] = table["tsx"] = table["javascript"]
    leaves = table[language]
    for leaf in leaves:
        leaf.setdefault("regex", f"^{n}$")
    return leaves


def call_rule(language: str, subject: str) -> Rule:
    """A call of `subject` (its node: the callee and the arguments), two levels deep."""
    if language == "java":
        # Java's call node holds its receiver and its name side by side (`a.b(...)`: two
        # identifiers), so the name is told by the text too: `b` right before the arguments.
        name = subject.rsplit(".", 1)[-1]
        if "." in subject:
            head = rf"^{dotted_regex(subject.rsplit('.', 1)[0])}\s*\.\s*"
        else:
            head = r"(?:^|\.\s*)"
        return {
            "kind": "method_invocation",
            "regex": rf"{head}(?:<[^()]*>\s*)?{re.escape(name)}\s*\(",
            "has": {"kind": "identifier", "regex": f"^{re.escape(name)}$"},
        }
    leaves = _callees(language, subject)
    callee = leaves[0] if len(leaves) == 1 else {"any": leaves}
    return {**any_kind(CALL_KINDS[language]), "has": callee}


def call_text(language: str, subject: str) -> str:
    """A call of `subject` by the text of its node (a regex over a call node's text, where the
    node rules nest too deep): the callee chain of plain names, then the name, type arguments, the
    arguments (or a Kotlin/Swift trailing lambda). Misses `a().echo()`; second opinions catch it."""
    name = re.escape(subject.rsplit(".", 1)[-1])
    if "." in subject:
        head = rf"^{dotted_regex(subject.rsplit('.', 1)[0])}\s*\.\s*"
    else:
        head = r"^(?:[\w$]+\s*(?:\?\.|\.|->|::|:)\s*)*"
    opening = r"[({]" if language in ("kotlin", "swift") else r"\("
    return rf"{head}{name}\s*(?:{TYPE_ARGS}\s*)?{opening}"


def call_ref(language: str, subject: str) -> Arguments:
    return {"rule": call_rule(language, subject), "language": language}


def await_ref(language: str, subject: str) -> Arguments:
    rule = {"kind": AWAIT_KIND[language], "has": call_rule(language, subject)}
    return {"rule": rule, "language": language}


def _new_types(language: str, subject: str) -> list[Rule]:
    """The constructed type, a `new` node's direct child: `X`, `ns.X`, `X<T>` (for a bare `X`)."""
    n = re.escape(subject)
    if language == "java":
        if "." in subject:
            d = dotted_regex(subject)
            return [{"kind": "scoped_type_identifier", "regex": rf"^{d}$"},
                    {"kind": "generic_type", "regex": rf"^{d}\s*<"}]  # fmt: skip
        return [{"kind": "type_identifier", "regex": f"^{n}$"},
                {"kind": "scoped_type_identifier", "regex": rf"\.\s*{n}$"},
                {"kind": "generic_type", "regex": rf"(?:^|\.)\s*{n}\s*<"}]  # fmt: skip
    if language == "csharp":
        if "." in subject:
            return [
                {"kind": "qualified_name", "regex": rf"^{dotted_regex(subject)}(?:\s*<[\s\S]*>)?$"}
            ]
        return [{"kind": "identifier", "regex": f"^{n}$"},
                {"kind": "generic_name", "regex": rf"^{n}\s*<"},
                {"kind": "qualified_name", "regex": rf"\.\s*{n}(?:\s*<[\s\S]*>)?$"}]  # fmt: skip
    if "." in subject:  # JavaScript family: type arguments are a sibling of the constructor
        return [{"kind": "member_expression", "regex": rf"^{dotted_regex(subject)}$"}]
    return [{"kind": "identifier", "regex": f"^{n}$"},
            {"kind": "member_expression", "regex": rf"\.\s*{n}$"}]  # fmt: skip


def new_ref(language: str, subject: str) -> Arguments:
    kind = "object_creation_expression" if language in ("java", "csharp") else "new_expression"
    types = _new_types(language, subject)
    rule = {"kind": kind, "has": types[0] if len(types) == 1 else {"any": types}}
    return {"rule": rule, "language": language}


def _innermost(language: str, inner: Rule, subject: str) -> Rule:
    """A function that holds `inner` (a call) itself, not only in a function nested in it: no
    function inside it holds a call whose text names the subject. (The schema has no `stopBy`
    rule; this over-excludes an outer function that calls it too, which the second opinion's
    `call_in_function` then reports as a miss, so such an item is dropped, not wrong.)"""
    nested_call = {
        **any_kind(CALL_KINDS[language]),
        "regex": rf"\b{re.escape(subject.rsplit('.', 1)[-1])}\b",
        "stopBy": "end",
    }
    nested = {**_branches(_INNER_FUNCTIONS[language]), "has": nested_call, "stopBy": "end"}
    return {**any_kind(FUNCTION_KINDS[language]), "has": {**inner, "stopBy": "end"},
            "not": {"has": nested}}  # fmt: skip


def _branches(rules: tuple[Rule, ...]) -> Rule:
    return rules[0] if len(rules) == 1 else {"any": list(rules)}


def fn_calling_ref(language: str, subject: str) -> Arguments:
    return {"rule": _innermost(language, call_rule(language, subject), subject),
            "language": language}  # fmt: skip


def async_awaiting_ref(language: str, subject: str) -> Arguments:
    kinds = CALL_KINDS[language]
    awaited = {"kind": AWAIT_KIND[language],
               "has": {**any_kind(kinds), "regex": call_text(language, subject)}}  # fmt: skip
    rule = _innermost(language, awaited, subject)
    rule["regex"] = _ASYNC
    return {"rule": rule, "language": language}


def _log_call(language: str) -> Rule:
    return {**any_kind(CALL_KINDS[language]), "regex": _LOG_CALL}


#: A handler's body that does nothing: Python's `pass` (or `...`), an empty JavaScript block
#: (comments aside). "No logging call" was not "swallows the error": a handler passes its error
#: on in many ways (`reject(err)`, `return Promise.reject(err)`, `callback(err)`, a message).
_EMPTY_BODY: Final[Mapping[str, Rule]] = {
    "python": {"kind": "block", "regex": r"^(?:pass|\.\.\.)[ \t]*(?:#[^\n]*)?$"},
    **{
        lang: {"kind": "statement_block", "regex": r"^\{(?:\s|//[^\n]*|/\*[\s\S]*?\*/)*\}$"}
        for lang in ("javascript", "typescript", "tsx")
    },
}


def catch_silent_ref(language: str, _subject: str) -> Arguments:
    # The handlers that swallow the error: they do nothing at all.
    rule = {"kind": CATCH_KIND[language], "has": _EMPTY_BODY[language]}
    return {"rule": rule, "language": language}


def catch_logging_ref(language: str, _subject: str) -> Arguments:
    rule = {"kind": CATCH_KIND[language], "has": {**_log_call(language), "stopBy": "end"}}
    return {"rule": rule, "language": language}


def decorated_ref(language: str, subject: str) -> Arguments:
    # `@name` or `@name(...)`, not `@name.attr` (`@app` is not `@app.route`) nor `@nameSuffix`.
    decorator = {"kind": "decorator", "regex": rf"^@\s*{dotted_regex(subject)}\s*(?:\(|#|$)"}
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
    rule = {**any_kind(classes), "has": {"kind": clause, "has": {"kind": inner, "has": name}}}
    return {"rule": rule, "language": language}


#: Per language: the class kinds, the path from the class to the node naming its base (the base
#: is a direct child of the last), and the base's own text after its name (type arguments).
_EXTENDS: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...], str]]] = {
    # `class A(Base, mod.Mixin, metaclass=M)`: the bases are the argument list's positional
    # children (a keyword argument's text holds its `=`); `Generic[T]` is a subscript.
    "python": (("class_definition",), ("argument_list",), r"(?:\[[\s\S]*\])?"),
    "java": (("class_declaration",), ("superclass",), r"(?:<[\s\S]*>)?"),
    # `class A extends mod.Base<T>`: the clause holds the base's expression and its type arguments.
    "typescript": (("class_declaration", "abstract_class_declaration", "class"),
                   ("class_heritage", "extends_clause"), ""),
    "tsx": (("class_declaration", "abstract_class_declaration", "class"),
            ("class_heritage", "extends_clause"), ""),
    "javascript": (("class_declaration", "class"), ("class_heritage",), ""),
}  # fmt: skip
SUBCLASS_LANGUAGES: Final = tuple(_EXTENDS)


def subclass_ref(language: str, subject: str) -> Arguments:
    """The classes whose base class is `subject`, named plain or qualified (`Base`, `mod.Base`,
    `Base<T>`): the whole class, as the intent asks; not an interface it implements, not a class
    that only mentions the name (a metaclass, a type argument)."""
    kinds, path, after = _EXTENDS[language]
    base: Rule = {"regex": rf"^(?:[A-Za-z_$][\w$]*\s*\.\s*)*{re.escape(subject)}{after}$"}
    for step in reversed(path):
        base = {"kind": step, "has": base}
    return {"rule": {**any_kind(kinds), "has": base}, "language": language}


def method_ref(language: str, subject: str) -> Arguments:
    """The methods named `subject` (Python): a function defined directly in a class's body, whole,
    its decorators included; not a module-level function, not a function nested in a method."""
    name = {"kind": "function_definition", "regex": rf"^(?:async\s+)?def\s+{re.escape(subject)}\b"}
    in_class = {"kind": "block", "inside": {"kind": "class_definition"}}
    decorated = {"kind": "decorated_definition", "has": name, "inside": in_class}
    return {"rule": {"any": [{**name, "inside": in_class}, decorated]}, "language": language}


def go_package_call_ref(language: str, subject: str) -> Arguments:
    # Go reads the pattern `pkg.Func($$$ARGS)` as a type conversion, so the call is a rule: a call
    # whose function (its only selector child) is exactly `pkg.Func`.
    selector = {"kind": "selector_expression", "regex": f"^{re.escape(subject)}$"}
    return {"rule": {"kind": "call_expression", "has": selector}, "language": language}


def todo_ref(_language: str, owner: str) -> Arguments:
    return {"pattern": rf"\b(?:TODO|FIXME)\s*\(\s*{re.escape(owner)}\s*\)"}


def secret_name(word: str) -> str:
    """A name that ends in the word (`db_password`, `API_TOKEN`, `SECRET_KEY` for secret), not one
    that only starts with it (`tokenizer`, `password_hash`)."""
    tail = r"(?:[_-]?key)?" if word == "secret" else ""
    return rf"[\w.-]*{re.escape(word)}{tail}\b"


def secret_ref(_language: str, word: str) -> Arguments:
    # A config entry (an env file, ini, properties, YAML) whose key ends in the word, set to a
    # value: not an empty one, not a `${VAR}` reference, not a comment's text. Code is left out: in
    # code `password = pw` and `password = "x"` read alike to a text search.
    return {
        "pattern": rf"(?i)^\s*(?:export\s+|-\s+)?['\"]?{secret_name(word)}['\"]?\s*[=:]"
        r"\s*['\"]?[^\s'\"#;$]",
        "globs": list(CONFIG_GLOBS),
    }


DECLARES: Final = r"def|class|function|const|let|var|func|fn|val|type|interface|struct|enum"


def unicode_identifier_ref(_language: str, _subject: str) -> Arguments:
    # A declared name with a letter outside ASCII (`def café`, `const größe`, Python's `größe = 3`
    # at the start of a line): mixed scripts and homoglyphs hide in such names. The look-ahead
    # needs PCRE2, where \w is Unicode-aware.
    return {
        "pattern": rf"\b(?:{DECLARES})\s+(?=\w*[^\x00-\x7F])\w+"
        rf"|^[ \t]*(?=\w*[^\x00-\x7F])\w+[ \t]*=(?!=)",
        "pcre2": True,
    }


def config_key_ref(_language: str, prefix: str) -> Arguments:
    # `DB_HOST=x`, `export DB_HOST=x` (.env), `DB_HOST: x` and `- DB_HOST=x` (a YAML environment).
    return {
        "pattern": rf"^\s*(?:export\s+|-\s+)?['\"]?{re.escape(prefix)}_[A-Z0-9_]*['\"]?\s*[=:]",
        "globs": list(CONFIG_GLOBS),
    }


_LEVELS: Final = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL"


def log_level_ref(_language: str, level: str) -> Arguments:
    # The record's level: the first level word among its first fields (a timestamp, a host, a
    # logger name before it), `[ERROR]` too; not a level word later in the message.
    return {
        "pattern": rf"^(?:(?!\[?(?:{_LEVELS})\b)\S+\s+){{0,3}}\[?{re.escape(level)}\]?(?:\s|:|$)",
        "globs": ["*.log"],
        "pcre2": True,
    }
