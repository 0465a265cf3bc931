"""Proposal engines: where candidate tool calls for a blueprint's intent come from.

All engines share one interface (`base.Engine.propose`) and one path from text to `Proposal`
(`base.proposal_from_text`: parse, repair, validate). Importing this package never imports vLLM.
"""

from codesearch_core.engines.base import Engine, SamplingSettings, proposal_from_text
from codesearch_core.engines.import_engine import ImportEngine
from codesearch_core.engines.mutations import MutationEngine, MutationKind, mutate
from codesearch_core.engines.openai_engine import OpenAIEngine, OpenAISettings
from codesearch_core.engines.prompt import Example, PromptConfig, build_messages
from codesearch_core.engines.repair import parse_model_output, validate_and_repair
from codesearch_core.engines.vllm_engine import VllmEngine, VllmSettings, get_vllm_engine

__all__ = [
    "Engine",
    "Example",
    "ImportEngine",
    "MutationEngine",
    "MutationKind",
    "OpenAIEngine",
    "OpenAISettings",
    "PromptConfig",
    "SamplingSettings",
    "VllmEngine",
    "VllmSettings",
    "build_messages",
    "get_vllm_engine",
    "mutate",
    "parse_model_output",
    "proposal_from_text",
    "validate_and_repair",
]
