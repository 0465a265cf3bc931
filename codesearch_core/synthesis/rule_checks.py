"""The second opinions of the rule templates of `synthesis.rules`: `(language, subject) ->
tuple[Check, ...]` for each reference call of `synthesis.rule_calls`, what a reader of the intent
would also count (`covers`), or leave out (`excludes`), found by other means than the reference:
mostly a text search of the call's line, or an ast-grep rule that does not share the reference's
innermost-function test.

They live apart from the references because they answer another question: a reference is the
answer an item teaches, a check only decides whether to trust it (`verify.second_opinion`'s
`Judge` runs them, by `synthesis.second_opinion.checks_of`, and drops an item they disagree with). Where a check asks the AST it builds on the node-kind
tables and rule builders of `synthesis.rule_calls` (`call_rule`, `any_kind`) but not on the
reference's own test; elsewhere it reads the line's text (`text_call`), so a spelling the rule
misses shows up as a disagreement.
"""

from __future__ import annotations

import re
from typing import Any, Final

from codesearch_core.corpora import AST_GREP_EXTENSIONS
from codesearch_core.models import Check
from codesearch_core.synthesis.rule_calls import (
    AWAIT_KIND,
    CALL_KINDS,
    CATCH_KIND,
    CONFIG_GLOBS,
    DECLARES,
    FUNCTION_KINDS,
    TYPE_ARGS,
    Arguments,
    Rule,
    any_kind,
    call_rule,
    dotted_regex,
    secret_name,
)

#: A logging call by its line's text (the callees of `rule_calls`' logging call rule), or a
#: re-raise: any line with one.
_LOG_LINE: Final = (
    r"\b(?:console|logger|logging|log|_log|_logger|LOG|LOGGER|Logger|Log|warnings|traceback"
    r"|stderr)\s*\.\s*\w+\s*\(|(?<![\w.])(?:print|debug|warn|debuglog)\s*\(|\b(?:raise|throw)\b"
)
#: A line that is (or continues) a comment, in the languages here: `#`, `//`, `/*`, ` * `, `--`.
_COMMENT_LINE: Final = r"^(?!\s*(?:#|//|/\*|\*|--))"
#: The words a definition of a name starts with: the name after them is declared, not called.
_DEFINES: Final = r"def|function|fun|fn|func|class|struct|interface|object|new|macro|sub|local"


def _rg(pattern: str, language: str = "", **more: Any) -> Arguments:
    """A PCRE2 search; with a language, over the files ast-grep reads as that language (by their
    extensions: rg's own types differ, its `cpp` takes C's `.h` files, its `ts` TSX's)."""
    args: Arguments = {"pattern": pattern, "pcre2": True, **more}
    if language:
        globs = [f"*{ext}" for ext, lang in AST_GREP_EXTENSIONS.items() if lang == language]
        # C++ code lives in `.h` headers too, which ast-grep reads as C: a call there is one the
        # reference cannot see, and the reader counts (QA review, issue 36).
        args["globs"] = [*globs, "*.h"] if language == "cpp" else globs
    return args


#: Text before a name on its line, outside string literals: characters other than quotes, and
#: whole quoted strings (a name inside `'self.obj.substring(1)'` is no call). Not for Rust, whose
#: lifetimes (`'a`) are no strings; backticks are left alone (a template literal's `${f(x)}` is
#: a call).
_OUTSIDE_STRINGS: Final = r"""(?:[^'"\n]|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")*?"""
#: Words that start a statement, not a declaration's type (`return echo(x)`).
_STATEMENT_WORDS: Final = (
    r"return|else|case|throw|delete|new|goto|co_return|co_await|co_yield|not|and|or|await|yield"
    r"|in|of|do|then|typeof|go|defer|try|assert|lambda|print|echo|if|elif|while|when|raise|except"
    r"|for|with|import|from|export|default|unless|until|elseif|is|as|var|let|const|val"
)


def text_call(language: str, subject: str) -> str:
    """A call of `subject` by its line's text: the name (or the qualified name) not after a name
    char or a dot (unless qualified), then type arguments and `(` (in Kotlin and Swift a block
    `{` too, where a statement or an argument starts); outside string literals, not on a comment
    line, not in a definition (`def echo(`, `void Frame::echo(`, a class method's header). The
    parts used twice are PCRE2 subroutines (`(?&kw)`): the schema bounds a pattern's length."""
    name = subject.rsplit(".", 1)[-1]
    n = re.escape(name)
    define = rf"(?(DEFINE)(?<kw>\b(?:{_STATEMENT_WORDS})\b)(?<ta>{TYPE_ARGS})(?<n>{n}\b))"
    if "." in subject:
        # A qualified subject is found by its last name however it is reached: `bytes_eq(...)`
        # after `from constant_time import bytes_eq`, `jpype.java.lang.String(...)`, the bare
        # call inside the defining module. A reader of "calls to `constant_time.bytes_eq`"
        # counts them all, so an item with only the one spelling is dropped (QA review, issue 36).
        before = r"(?:^|[^\w$\s]|(?&kw))\s*(?:[\w$]+\s*\.\s*)*"
        callee = "(?&n)"
    else:
        # Preceded by a non-name character, the start, or a keyword that takes an expression (a
        # declaration's type before the name, `String echo(`, is a name and a space).
        before = r"(?:^|[^\w$\s]|(?&kw))\s*"
        callee = "(?&n)"
    modifiers = r"(?:(?:static|async|public|private|protected|get|set|override|readonly)\s+)*"
    not_def = (
        # after a declaring word (`def`, `function`, `fun`, `fn`, `class`, ...)
        rf"(?!.*\b(?:{_DEFINES})\s+(?:[\w$]+\s*\.\s*)?(?&n))"
        # a class method's header (`async echo(a) {`)
        rf"(?!\s*{modifiers}\*?(?&n)\s*(?&ta)?\s*\([^()]*\)\s*(?::[^{{=]*)?\{{\s*$)"
        # a C-like declaration: type words, then the (qualified) name (`void Frame::echo(`,
        # `public static int echo(`, `Value *echo();`)
        r"(?!\s*(?!(?&kw))(?:[\w$:<>,\[\]]+[\s*&]+)+(?:\w+::)*~?(?&n)\s*\()"
    )
    prefix = ".*?" if language == "rust" else _OUTSIDE_STRINGS
    call = rf"{before}{callee}\s*(?&ta)?\s*\("
    if language in ("kotlin", "swift"):
        # `run {`, `x = ModuleDefinition {`, `f(a) {`; not a type before a block (`as? Data {`,
        # `-> Data {`, `: Base {`).
        block = rf"(?:^|[=(,;{{}}]|\breturn\b)\s*(?:[\w$]+\s*\??\.\s*)*{callee}\s*\{{"
        call = rf"(?:{call}|{block})"
    return rf"{define}{_COMMENT_LINE}{not_def}{prefix}{call}"


def call_second(language: str, subject: str) -> tuple[Check, ...]:
    return (Check("ripgrep_search", _rg(text_call(language, subject), language), "covers",
                  "text_call"),)  # fmt: skip


def await_second(language: str, subject: str) -> tuple[Check, ...]:
    # Any receiver, for a qualified subject too (see `text_call`).
    name = re.escape(subject.rsplit(".", 1)[-1])
    callee = rf"(?:[\w$]+\s*\??\.\s*)*{name}"
    pattern = rf"{_COMMENT_LINE}.*\bawait\s+{callee}\s*(?:{TYPE_ARGS}\s*)?\("
    return (Check("ripgrep_search", _rg(pattern, language), "covers", "text_await"),)


def new_second(language: str, subject: str) -> tuple[Check, ...]:
    # Any namespace, for a qualified subject too (see `text_call`).
    callee = rf"(?:[\w$]+\s*\.\s*)*{re.escape(subject.rsplit('.', 1)[-1])}"
    pattern = rf"{_COMMENT_LINE}.*\bnew\s+{callee}\s*(?:{TYPE_ARGS}\s*)?\("
    return (Check("ripgrep_search", _rg(pattern, language), "covers", "text_new"),)


def _in_function(language: str, inner: Rule) -> Check:
    """Every `inner` in a function lies in an expected function: this one stops at any function
    kind by `inside`, independent of the reference's innermost test."""
    rule = {**inner, "inside": {**any_kind(FUNCTION_KINDS[language]), "stopBy": "end"}}
    return Check("ast_grep_search", {"rule": rule, "language": language}, "covers",
                 "call_in_function")  # fmt: skip


def fn_calling_second(language: str, subject: str) -> tuple[Check, ...]:
    # By the last name, for a qualified subject too: `bytes_eq(...)` after an import of it is a
    # call of `constant_time.bytes_eq` to a reader (see `text_call`).
    return (_in_function(language, call_rule(language, subject.rsplit(".", 1)[-1])),)


def async_awaiting_second(language: str, subject: str) -> tuple[Check, ...]:
    last = subject.rsplit(".", 1)[-1]
    awaited = {"kind": AWAIT_KIND[language], "has": call_rule(language, last)}
    checks = [_in_function(language, awaited)]
    # A function awaiting the call that is not async (a Python generator's `await`, a syntax
    # error) is not asked for: its lines are those the text finds and no span may hold.
    return (*checks, *await_second(language, subject))


def catch_silent_second(language: str, _subject: str) -> tuple[Check, ...]:
    # Covers: the empty handlers by their text (`except ...:` then `pass`; `catch (e) {}` on one
    # line or with a blank or comment line inside). Excludes: a logging call or a raise inside.
    if language == "python":
        empty = r"^[ \t]*except\b[^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*pass\b"
    else:
        empty = r"\bcatch\s*(?:\([^()]*\))?\s*\{(?:\s|//[^\n]*)*\}"
    return (Check("ripgrep_search", _rg(empty, language, multiline=True), "covers", "text_empty"),
            Check("ripgrep_search", _rg(_LOG_LINE, language), "excludes", "logs_or_raises"))  # fmt: skip


def catch_logging_second(language: str, _subject: str) -> tuple[Check, ...]:
    # Every logging line inside a handler lies in an expected one: a text test of the line
    # (a logger, console, print) on lines ast-grep places in a catch.
    log_line = {**any_kind(CALL_KINDS[language]),
                "regex": r"(?i)^[\w$.\s]*(?:log|console|print|warn)[\w$]*\s*\(",
                "inside": {"kind": CATCH_KIND[language], "stopBy": "end"}}  # fmt: skip
    return (Check("ast_grep_search", {"rule": log_line, "language": language}, "covers",
                  "log_in_handler"),)  # fmt: skip


def decorated_second(language: str, subject: str) -> tuple[Check, ...]:
    # The decorator by its last name, reached through any module (`@common.unittest.skipUnless`
    # is `@unittest.skipUnless`, `@jpype.JConversion` is `@_jcustomizer.JConversion`).
    last = re.escape(subject.rsplit(".", 1)[-1])
    pattern = rf"^\s*@\s*(?:[\w]+\s*\.\s*)*{last}\s*(?:\(|#|$)"
    return (Check("ripgrep_search", _rg(pattern, language), "covers", "text_decorator"),)


def annotated_method_second(language: str, subject: str) -> tuple[Check, ...]:
    # The annotation's line, then (other annotations between) a method header: modifiers, a return
    # type and a name before `(`. A constructor (`public Foo(`) reads the same: it is found and the
    # item dropped, as a reader may count it.
    pattern = (
        rf"^[ \t]*@{re.escape(subject)}(?:\([^)]*\))?[ \t]*(?://.*)?\n(?:[ \t]*@.*\n)*[ \t]*"
        r"(?:(?:public|protected|private|static|final|abstract|synchronized|native|default)\s+)*"
        r"(?:<[^>]*>\s*)?[\w.<>\[\], ?]+\s+\w+\s*\("
    )
    return (Check("ripgrep_search", _rg(pattern, language, multiline=True), "covers",
                  "text_annotated_method"),)  # fmt: skip


def implements_second(language: str, subject: str) -> tuple[Check, ...]:
    pattern = rf"\bclass\s+\w+[^{{;]*?\bimplements\b[^{{;]*?(?<![\w.]){re.escape(subject)}\b"
    return (Check("ripgrep_search", _rg(pattern, language, multiline=True), "covers",
                  "text_implements"),)  # fmt: skip


def subclass_second(language: str, subject: str) -> tuple[Check, ...]:
    """Every class header naming `subject` as its base by text: Python's parenthesized bases (not
    after `=`: a metaclass), `extends` elsewhere; a type argument naming it (`Generic[Base]`)
    reads as a base here too, which only drops an item."""
    name = rf"(?<![\w$.=])(?:[\w$]+\s*\.\s*)*{re.escape(subject)}\b(?!\s*=)"
    if language == "python":
        # `[ \t]*`, not `\s*`: a match must start on the class's own line, not a blank one above.
        pattern = rf"{_COMMENT_LINE}[ \t]*class\s+\w+\s*\([^)]*?{name}"
    else:
        pattern = rf"{_COMMENT_LINE}.*?\bclass\b[^{{;]*?\bextends\s+{name}"
    return (Check("ripgrep_search", _rg(pattern, language, multiline=True), "covers",
                  "text_extends"),)  # fmt: skip


def method_second(language: str, subject: str) -> tuple[Check, ...]:
    """Every indented `def` of the name by text: a method, or a function nested in another one
    (which drops the item unless that function is itself such a method: the reader cannot tell
    them apart by the line)."""
    pattern = rf"^[ \t]+(?:async[ \t]+)?def[ \t]+{re.escape(subject)}\b"
    return (Check("ripgrep_search", _rg(pattern, language), "covers", "text_method"),)


def go_package_call_second(language: str, subject: str) -> tuple[Check, ...]:
    pattern = rf"^(?!\s*//).*?(?<![\w.]){dotted_regex(subject)}\s*\("
    return (Check("ripgrep_search", _rg(pattern, language), "covers", "text_call"),)


def todo_second(_language: str, owner: str) -> tuple[Check, ...]:
    # The notes a reader also counts: any case, XXX too, brackets: `todo(ann)`, `FIXME [ann]`.
    pattern = rf"(?i)\b(?:todo|fixme|xxx)\s*[(\[]\s*{re.escape(owner)}\s*[)\]]"
    return (Check("ripgrep_search", _rg(pattern), "covers", "text_todo"),)


def secret_second(_language: str, word: str) -> tuple[Check, ...]:
    # Covers: the key anywhere on a line (an inline `[PASSWORD=x]`, a nested key) with a value.
    # Excludes: a comment line naming the word.
    name = secret_name(word)
    covers = rf"(?i)^(?!\s*[#;]).*?(?<![\w.-]){name}['\"]?\s*[=:]\s*['\"]?[^\s'\"#;$]"
    excludes = rf"(?i)^\s*[#;].*{re.escape(word)}"
    globs = list(CONFIG_GLOBS)
    return (Check("ripgrep_search", _rg(covers, globs=globs), "covers", "text_secret"),
            Check("ripgrep_search", _rg(excludes, globs=globs), "excludes", "comment"))  # fmt: skip


def unicode_identifier_second(_language: str, _subject: str) -> tuple[Check, ...]:
    # A declaring word, then a name with a byte outside ASCII anywhere before `(`, `=`, `:`.
    covers = rf"\b(?:{DECLARES})\s+[^\s(=:;{{<,]*[^\x00-\x7F]"
    return (Check("ripgrep_search", _rg(covers), "covers", "text_declaration"),)


def config_key_second(_language: str, prefix: str) -> tuple[Check, ...]:
    pattern = rf"^(?!\s*[#;]).*\b{re.escape(prefix)}_[A-Z0-9_]+['\"]?\s*[=:]"
    return (Check("ripgrep_search", _rg(pattern, globs=list(CONFIG_GLOBS)), "covers",
                  "text_config_key"),)  # fmt: skip


def log_level_second(_language: str, level: str) -> tuple[Check, ...]:
    # The level word near the start of a record (its first 48 characters).
    pattern = rf"^.{{0,48}}?(?<![\w-]){re.escape(level)}(?![\w-])"
    return (Check("ripgrep_search", _rg(pattern, globs=["*.log"]), "covers", "text_level"),)
