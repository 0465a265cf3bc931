"""Proposal engines: where candidate tool calls for a blueprint's intent come from.

All engines share one interface (`base.Engine.propose`) and one path from text to `Proposal`
(`base.proposal_from_text`: parse, repair, validate; `base.read_call` is that path without the
Proposal, and also counts the calls the text wrote). Importing this package never imports vLLM.
JSON samples for other tasks than tool calls (synthesis's intents): `engines.json_samples`.
The tool format is one definition (`tool_format`: how each syntax is asked for and read back,
`answer_format`: which one an imported answer is in), and so is the project's tool template for
models whose chat template drops the tools (`tool_template`), which the exports' training
layouts, the vLLM engine and the gym's agent turns all render with.
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
from codesearch_core.engines.stopping import (
    STOP_GRACE_S,
    Stopped,
    engine_stop_path,
    run_supervised,
    stop_path_open,
)
from codesearch_core.engines.tool_format import (
    DEFAULT_TOOL_FORMAT,
    TOOL_FORMATS,
    ToolFormat,
    answer_format,
    get_tool_format,
)
from codesearch_core.engines.tool_template import (
    PROJECT_TOOL_FORMAT,
    renders_tools,
    tool_template_messages,
    tools_system_text,
)
from codesearch_core.engines.vllm_engine import ENGINE_NAME as VLLM_ENGINE
from codesearch_core.engines.vllm_engine import (
    VllmEngine,
    get_vllm_engine,
    shutdown_vllm_engine,
)
from codesearch_core.engines.vllm_server import ServerCommand, server_command
from codesearch_core.engines.vllm_settings import TOOL_TEMPLATES, VllmSettings

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
    "PROJECT_TOOL_FORMAT",
    "SCHEMA_MODES",
    "STOP_GRACE_S",
    "TOOL_FORMATS",
    "TOOL_TEMPLATES",
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
    "Stopped",
    "ToolFormat",
    "VllmEngine",
    "VllmSettings",
    "answer_format",
    "build_messages",
    "engine_stop_path",
    "get_preset",
    "get_tool_format",
    "get_vllm_engine",
    "messages_to_text",
    "openai_json_sampler",
    "proposal_from_text",
    "proposal_to_json",
    "read_call",
    "renders_tools",
    "run_supervised",
    "server_command",
    "shutdown_vllm_engine",
    "stop_path_open",
    "tool_template_messages",
    "tools_system_text",
    "vllm_json_sampler",
]
