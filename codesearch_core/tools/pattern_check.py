"""Patterns ast-grep reads as something other than what they look like.

A pattern is parsed as a fragment of its language, and some fragments are ambiguous: Go reads
`fmt.Printf($$$ARGS)` as a *type conversion* (`pkg.Type(x)` and `pkg.Func(x)` look alike without
the package), PHP reads `obj.foo($$$)` as a string concatenation. Such a pattern matches no call
and ast-grep says nothing, so a wrong-looking 0 would pass for "not in the corpus". After a run
that found nothing, the runner asks ast-grep how it parsed the pattern (`--debug-query=pattern`)
and warns when a call-shaped pattern did not become a call.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from functools import lru_cache
from typing import Final

from codesearch_core.models import ToolCall, ToolName
from codesearch_core.tools.binaries import ast_grep_path

#: A call as written: a dotted (or ::, ->) name, then one parenthesized argument list.
_CALL_SHAPE: Final = re.compile(
    r"\s*[A-Za-z_$][\w$]*(?:\s*(?:\.|::|->)\s*[A-Za-z_$][\w$]*)*\s*\(.*\)\s*;?\s*", re.DOTALL
)
#: What tree-sitter grammars call a call (and shell's command, where a call is one).
CALL_KINDS: Final = frozenset(
    {
        "call",
        "call_expression",
        "command",
        "function_call",
        "function_call_expression",
        "invocation_expression",
        "macro_invocation",
        "member_call_expression",
        "method_invocation",
        "nullsafe_member_call_expression",
        "scoped_call_expression",
    }
)
_HINTS: Final = {
    "type_conversion_expression": "Go reads `pkg.Name(...)` alone as a type conversion; use a "
    "rule: {rule} (the pattern `{name}($A, $$$)` parses as a call but misses calls with one "
    "argument)",
    "binary_expression": "in PHP `.` joins strings; a method call is `$obj->name($$$)`",
}


#: ast-grep parses a pattern in milliseconds; this only bounds a hung process.
_PARSE_TIMEOUT_S: Final = 10.0


def parsed_kind(call: ToolCall) -> str | None:
    """The node kind ast-grep parsed the call's pattern into (None: no pattern, or no answer)."""
    if call.name is not ToolName.AST_GREP or "pattern" not in call.arguments:
        return None
    return _parsed_kind(str(call.arguments["pattern"]), str(call.arguments["language"]))


@lru_cache(maxsize=4096)
def _parsed_kind(pattern: str, language: str) -> str | None:
    # Cached: verification meets the same wrong pattern again and again (one per blueprint run).
    with tempfile.TemporaryDirectory(prefix="codesearch-pattern-") as empty:
        try:
            done = subprocess.run(
                [ast_grep_path(), "run", f"--pattern={pattern}", f"--lang={language}",
                 "--debug-query=pattern", "--", empty],
                capture_output=True, timeout=_PARSE_TIMEOUT_S, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return None
    lines = done.stderr.decode("utf-8", "replace").splitlines()
    lines += done.stdout.decode("utf-8", "replace").splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Debug Pattern:" and i + 1 < len(lines):
            return lines[i + 1].strip().split(" ")[0] or None
    return None


def misread_warning(call: ToolCall) -> str | None:
    """A sentence when the pattern looks like a call but ast-grep did not parse it as one."""
    if call.name is not ToolName.AST_GREP or "pattern" not in call.arguments:
        return None
    pattern = str(call.arguments["pattern"])
    if not _CALL_SHAPE.fullmatch(pattern):
        return None
    kind = parsed_kind(call)
    if kind is None or kind in CALL_KINDS:
        return None
    language = call.arguments["language"]
    name = pattern[: pattern.index("(")].strip()
    # A rule the studio's call schema takes: the call node, whose text starts with the name.
    rule = {"kind": "call_expression", "regex": "^" + re.escape(name) + r"\s*\("}
    hint = _HINTS.get(kind, "see how it parsed with `ast-grep run --debug-query=pattern`")
    hint = hint.replace("{rule}", json.dumps(rule)).replace("{name}", name)
    return (
        f"ast-grep read the pattern as a {kind}, not a call, in {language}: it can match no "
        f"call, so finding nothing says nothing about the code. {hint[0].upper()}{hint[1:]}."
    )
