"""Proposal engines: where candidate tool calls for a blueprint's intent come from.

All engines share one interface (`base.Engine.propose`) and one path from text to `Proposal`
(`base.proposal_from_text`: parse, repair, validate; `base.read_call` is that path without the
Proposal, and also counts the calls the text wrote). Importing this package never imports vLLM.
JSON samples for other tasks than tool calls (synthesis's intents): `engines.json_samples`.
Imports `corpora`, `tools` and below; never the store.
"""

from codesearch_core.engines.base import (
    MAX_N,
    Engine,
    ProgressFn,
    ReadCall,
    SamplingSettings,
    proposal_from_text,
    proposal_to_json,
    read_call,
)
from codesearch_core.engines.import_engine import ENGINE_NAME as IMPORT_ENGINE
from codesearch_core.engines.import_engine import ImportEngine
from codesearch_core.engines.json_samples import (
    JsonSampler,
    openai_json_sampler,
    vllm_json_sampler,
)
from codesearch_core.engines.mutations import ENGINE_NAME as MUTATIONS_ENGINE
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.engines.openai_engine import ENGINE_NAME as OPENAI_ENGINE
from codesearch_core.engines.openai_engine import SCHEMA_MODES, OpenAIEngine, OpenAISettings
from codesearch_core.engines.openai_engine import SchemaMode as OpenAISchemaMode
from codesearch_core.engines.presets import DEFAULT_PRESET, PRESETS, ModelPreset, get_preset
from codesearch_core.engines.prompt import (
    DEFAULT_RULES,
    DEFAULT_SYSTEM,
    Example,
    PromptConfig,
    SchemaMode,
    build_messages,
    messages_to_text,
)
from codesearch_core.engines.tool_format import (
    DEFAULT_TOOL_FORMAT,
    TOOL_FORMATS,
    ToolFormat,
    get_tool_format,
)
from codesearch_core.engines.vllm_engine import ENGINE_NAME as VLLM_ENGINE
from codesearch_core.engines.vllm_engine import (
    VllmEngine,
    VllmSettings,
    get_vllm_engine,
    shutdown_vllm_engine,
)
from codesearch_core.engines.vllm_platform import interrupts_reach_main_thread
from codesearch_core.engines.vllm_server import ServerCommand, server_command

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_RULES",
    "DEFAULT_SYSTEM",
    "DEFAULT_TOOL_FORMAT",
    "IMPORT_ENGINE",
    "MAX_N",
    "MUTATIONS_ENGINE",
    "OPENAI_ENGINE",
    "PRESETS",
    "SCHEMA_MODES",
    "TOOL_FORMATS",
    "VLLM_ENGINE",
    "Engine",
    "Example",
    "ImportEngine",
    "JsonSampler",
    "ModelPreset",
    "MutationEngine",
    "OpenAIEngine",
    "OpenAISchemaMode",
    "OpenAISettings",
    "ProgressFn",
    "PromptConfig",
    "ReadCall",
    "SamplingSettings",
    "SchemaMode",
    "ServerCommand",
    "ToolFormat",
    "VllmEngine",
    "VllmSettings",
    "build_messages",
    "get_preset",
    "get_tool_format",
    "get_vllm_engine",
    "interrupts_reach_main_thread",
    "messages_to_text",
    "openai_json_sampler",
    "proposal_from_text",
    "proposal_to_json",
    "read_call",
    "server_command",
    "shutdown_vllm_engine",
    "vllm_json_sampler",
]
