"""Synthesis: draft blueprints made from a corpus, no author needed.

Rule templates (`synthesis.rules`, their reference calls in `synthesis.rule_calls`) mine the corpus
with the real tools (`synthesis.mine`: one text pass per rule and language names every candidate,
and its reference runs on the files that pass named; targets in size bounds that reproduce); the
text baselines of a batch share a few rg passes (`synthesis.baselines`); intents come from the
templates' wordings or a model's samples (`synthesis.intents`, `synthesis.model_intents`);
`synthesis.pipeline` runs it all, de-duplicates (same findings, too-close intents, with rapidfuzz)
and writes each draft to the store on its own.

Public API: `synthesize`, `candidates`, `Candidate`, `SynthesisReport`, `SynthesisCounts`,
`TemplateWriter`, `ModelWriter`, `IntentWriter`, `vllm_writer`, `openai_writer`,
`NothingToMineError`, `IntentIndex` and `normalize_intent` (the near-duplicate intent check), `stored_intents`, `stored_draft_ids`, `ray_map` (`synthesis.ray_fanout`: the
tool runs as Ray tasks), `TEMPLATES`, `INTENT_SCHEMA`, `LANGUAGE_LABELS`; the second opinion on an
item (`synthesis.second_opinion`: the verify layer's `Judge` by the rules' checks): `Judge`,
`Subject`, `subject_of`, `checks_of`, `Check` (`models`), `NO_SECOND_OPINION`. Imports `verify` (the seed audit's keyword
baselines), `store` (the `Draft` record), `engines` and below.
"""

from codesearch_core.models import Check
from codesearch_core.synthesis.intents import (
    INTENT_SCHEMA,
    IntentWriter,
    TemplateWriter,
    WrittenIntent,
    check_sample,
)
from codesearch_core.synthesis.mine import (
    Candidate,
    NothingToMineError,
    Target,
    candidates,
    corpus_languages,
)
from codesearch_core.synthesis.model_intents import (
    ModelWriter,
    intent_messages,
    openai_writer,
    vllm_writer,
)
from codesearch_core.synthesis.pipeline import (
    STAGES,
    IntentIndex,
    MapFn,
    SynthesisCounts,
    SynthesisReport,
    draft_id,
    normalize_intent,
    stored_draft_ids,
    stored_intents,
    synthesize,
)
from codesearch_core.synthesis.ray_fanout import ray_map
from codesearch_core.synthesis.rule_kinds import LANGUAGE_LABELS, RuleTemplate
from codesearch_core.synthesis.rules import TEMPLATES
from codesearch_core.synthesis.second_opinion import (
    NO_SECOND_OPINION,
    Judge,
    Subject,
    checks_of,
    subject_of,
)

__all__ = [
    "INTENT_SCHEMA",
    "LANGUAGE_LABELS",
    "NO_SECOND_OPINION",
    "STAGES",
    "TEMPLATES",
    "Candidate",
    "Check",
    "IntentIndex",
    "IntentWriter",
    "Judge",
    "MapFn",
    "ModelWriter",
    "NothingToMineError",
    "RuleTemplate",
    "Subject",
    "SynthesisCounts",
    "SynthesisReport",
    "Target",
    "TemplateWriter",
    "WrittenIntent",
    "candidates",
    "check_sample",
    "checks_of",
    "corpus_languages",
    "draft_id",
    "intent_messages",
    "normalize_intent",
    "openai_writer",
    "ray_map",
    "stored_draft_ids",
    "stored_intents",
    "subject_of",
    "synthesize",
    "vllm_writer",
]
