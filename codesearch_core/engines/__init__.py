"""Proposal engines: where candidate tool calls for a blueprint's intent come from.

All engines share one interface (`base.Engine.propose`) and one path from text to `Proposal`
(`base.proposal_from_text`: parse, repair, validate). Importing this package never imports vLLM.
Imports `corpora`, `tools` and below; never the store.
"""

from codesearch_core.engines.base import (
    MAX_N,
    Engine,
    ProgressFn,
    SamplingSettings,
    proposal_to_json,
)
from codesearch_core.engines.import_engine import ENGINE_NAME as IMPORT_ENGINE
from codesearch_core.engines.import_engine import ImportEngine
from codesearch_core.engines.mutations import ENGINE_NAME as MUTATIONS_ENGINE
from codesearch_core.engines.mutations import MutationEngine
from codesearch_core.engines.openai_engine import ENGINE_NAME as OPENAI_ENGINE
from codesearch_core.engines.openai_engine import OpenAIEngine, OpenAISettings
from codesearch_core.engines.presets import DEFAULT_PRESET, PRESETS, get_preset
from codesearch_core.engines.prompt import (
    DEFAULT_RULES,
    DEFAULT_SYSTEM,
    Example,
    PromptConfig,
    SchemaMode,
    build_messages,
    messages_to_text,
)
from codesearch_core.engines.vllm_engine import ENGINE_NAME as VLLM_ENGINE
from codesearch_core.engines.vllm_engine import VllmEngine, VllmSettings, get_vllm_engine

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_RULES",
    "DEFAULT_SYSTEM",
    "IMPORT_ENGINE",
    "MAX_N",
    "MUTATIONS_ENGINE",
    "OPENAI_ENGINE",
    "PRESETS",
    "VLLM_ENGINE",
    "Engine",
    "Example",
    "ImportEngine",
    "MutationEngine",
    "OpenAIEngine",
    "OpenAISettings",
    "ProgressFn",
    "PromptConfig",
    "SamplingSettings",
    "SchemaMode",
    "VllmEngine",
    "VllmSettings",
    "build_messages",
    "get_preset",
    "get_vllm_engine",
    "messages_to_text",
    "proposal_to_json",
]
