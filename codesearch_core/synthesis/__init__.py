"""Synthesis: draft blueprints made from a corpus, no author needed.

Rule templates (`synthesis.rules`) mine the corpus with the real tools (`synthesis.mine`: targets
in size bounds, where a text baseline scores clearly below the reference, that reproduce); intents
come from the templates' wordings or a model's samples (`synthesis.intents`,
`synthesis.model_intents`); `synthesis.pipeline` runs it all, de-duplicates (same findings, too-close
intents, with rapidfuzz) and writes each draft to the store on its own.

Public API: `synthesize`, `SynthesisReport`, `SynthesisCounts`, `TemplateWriter`, `ModelWriter`,
`IntentWriter`, `NothingToMineError`, `ray_map` (`synthesis.ray_fanout`: the tool runs as
Ray tasks), `TEMPLATES`, `INTENT_SCHEMA`. Imports `verify` (the seed
audit's keyword baselines), `store` (the `Draft` record), `engines` and below.
"""

from codesearch_core.synthesis.intents import (
    INTENT_SCHEMA,
    IntentWriter,
    TemplateWriter,
    WrittenIntent,
    check_sample,
)
from codesearch_core.synthesis.mine import NothingToMineError, Target, corpus_languages
from codesearch_core.synthesis.model_intents import ModelWriter, intent_messages
from codesearch_core.synthesis.pipeline import (
    STAGES,
    MapFn,
    SynthesisCounts,
    SynthesisReport,
    draft_id,
    stored_intents,
    synthesize,
)
from codesearch_core.synthesis.ray_fanout import ray_map
from codesearch_core.synthesis.rules import TEMPLATES, RuleTemplate

__all__ = [
    "INTENT_SCHEMA",
    "STAGES",
    "TEMPLATES",
    "IntentWriter",
    "MapFn",
    "ModelWriter",
    "NothingToMineError",
    "RuleTemplate",
    "SynthesisCounts",
    "SynthesisReport",
    "Target",
    "TemplateWriter",
    "WrittenIntent",
    "check_sample",
    "corpus_languages",
    "draft_id",
    "intent_messages",
    "ray_map",
    "stored_intents",
    "synthesize",
]
