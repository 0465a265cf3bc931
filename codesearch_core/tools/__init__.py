"""Running `rg` and `ast-grep` once: the tool-call JSON Schemas, argv builders, binary discovery,
corpus path resolution, PCRE2 detection, the stream parsers and the process runner.

Public API: `run_tool_call` / `run_plan` (a validated call in, a `RunResult` out), `parse_tool_call`
/ `parse_plan` (JSON in, validated call out), the schemas (`TOOL_CALL_SCHEMA`, `TOOL_DESCRIPTIONS`,
...), `resolve_in_corpus`, `requires_pcre2` and `rg_occurrences` (many patterns in one lean rg
pass, for synthesis), and `observation_text` / `summary_text` (a tool's answer as a model is shown
it). Imports only the ground floor (`models`, `errors`, `config`).
"""

from codesearch_core.tools.argv import ArgvError, check_runnable
from codesearch_core.tools.binaries import (
    ToolNotFoundError,
    check_tools,
    rg_path,
    rg_type_names,
    tool_versions,
    tool_versions_json,
)
from codesearch_core.tools.definitions import (
    OPENAI_TOOLS,
    XLAM_TOOLS_JSON,
    openai_tools,
    xlam_tools,
)
from codesearch_core.tools.observation import (
    OBSERVATION_MAX_LINE,
    OBSERVATION_MAX_MATCHES,
    SUMMARY_MAX_LOCATIONS,
    observation_text,
    summary_text,
)
from codesearch_core.tools.occurrences import Occurrence, rg_occurrences
from codesearch_core.tools.paths import resolve_in_corpus
from codesearch_core.tools.pcre2 import requires_pcre2
from codesearch_core.tools.process import pid_alive
from codesearch_core.tools.runner import (
    DEFAULT_MAX_FINDINGS,
    DEFAULT_TIMEOUT_S,
    run_plan,
    run_result_to_dict,
    run_tool_call,
)
from codesearch_core.tools.schemas import (
    AST_GREP_LANGUAGES,
    AST_GREP_PATTERN_ARGUMENTS,
    AST_GREP_RULE_ARGUMENTS,
    RIPGREP_ARGUMENTS,
    TOOL_CALL_SCHEMA,
    TOOL_DESCRIPTIONS,
    arguments_schema,
    parse_plan,
    parse_tool_call,
    plan_to_dict,
)

__all__ = [
    "AST_GREP_LANGUAGES",
    "AST_GREP_PATTERN_ARGUMENTS",
    "AST_GREP_RULE_ARGUMENTS",
    "DEFAULT_MAX_FINDINGS",
    "DEFAULT_TIMEOUT_S",
    "OBSERVATION_MAX_LINE",
    "OBSERVATION_MAX_MATCHES",
    "OPENAI_TOOLS",
    "RIPGREP_ARGUMENTS",
    "SUMMARY_MAX_LOCATIONS",
    "TOOL_CALL_SCHEMA",
    "TOOL_DESCRIPTIONS",
    "XLAM_TOOLS_JSON",
    "ArgvError",
    "Occurrence",
    "ToolNotFoundError",
    "arguments_schema",
    "check_runnable",
    "check_tools",
    "observation_text",
    "openai_tools",
    "parse_plan",
    "parse_tool_call",
    "pid_alive",
    "plan_to_dict",
    "requires_pcre2",
    "resolve_in_corpus",
    "rg_occurrences",
    "rg_path",
    "rg_type_names",
    "run_plan",
    "run_result_to_dict",
    "run_tool_call",
    "summary_text",
    "tool_versions",
    "tool_versions_json",
    "xlam_tools",
]
