"""Exports of curated data for training, one layout per trainer (xLAM, Hugging Face chat and
preference, GRPO prompts, OpenAI SFT and DPO, LLaMA-Factory ShareGPT), the atomic writers with
their manifest and dataset card, and the RL reward (`CodeSearchReward`) for TRL's GRPOTrainer.

Public API: `export` (one entry point for every format), `preview`, `ExportFormat`, `manifest_path`,
`EPISODE_FORMATS` (the gym's episodes, multi-turn: written with the gym's `EpisodeFrame`, and read
back by `read_turns` for the gym's replay check; `episode_turns`: the turns a stored episode
exports; `agent_conversation`: an episode played now as an `hf-agent` row; `GYM_FORMATS`: those and
`dpo-steps`, a reviewer's corrected call over the original's), `single_call_records` (the one-call layouts of rows from no store: a data set build's
items), `write_jsonl_atomic`, `tool_versions`, `code_version`,
`CodeSearchReward`, `Observer` (each call run once per export; its observation turns are
`tools.observation_text`, as the gym's are); evaluation (`evaluate`: an engine's answers run and graded into an eval run
the store keeps, `compare`, `import_json_runs`). Imports `store`, `engines` (the prompt and the
repair of model output) and below.
"""

from codesearch_core.export.card import READERS as FORMAT_READERS
from codesearch_core.export.card import tool_versions
from codesearch_core.export.episodes import (
    EpisodeFrame,
    agent_conversation,
    episode_turns,
    read_turns,
)
from codesearch_core.export.evaluation import (
    METRICS,
    JsonImport,
    compare,
    evaluate,
    full_summary,
    import_json_runs,
    left_out,
)
from codesearch_core.export.items import single_call_records
from codesearch_core.export.observe import Observer
from codesearch_core.export.records import (
    ALWAYS_REFERENCE,
    EPISODE_FORMATS,
    GYM_FORMATS,
    OBSERVED,
    RANKED,
    ExportFormat,
    episode_counts,
)
from codesearch_core.export.rl_reward import PARSE_FAILURE_REWARD, CodeSearchReward, completion_text
from codesearch_core.export.writers import (
    EXPORT_RULE,
    Manifest,
    code_version,
    export,
    export_path,
    manifest_path,
    preview,
    write_jsonl_atomic,
)

__all__ = [
    "ALWAYS_REFERENCE",
    "EPISODE_FORMATS",
    "EXPORT_RULE",
    "FORMAT_READERS",
    "GYM_FORMATS",
    "METRICS",
    "OBSERVED",
    "PARSE_FAILURE_REWARD",
    "RANKED",
    "CodeSearchReward",
    "EpisodeFrame",
    "ExportFormat",
    "JsonImport",
    "Manifest",
    "Observer",
    "agent_conversation",
    "code_version",
    "compare",
    "completion_text",
    "episode_counts",
    "episode_turns",
    "evaluate",
    "export",
    "export_path",
    "full_summary",
    "import_json_runs",
    "left_out",
    "manifest_path",
    "preview",
    "read_turns",
    "single_call_records",
    "tool_versions",
    "write_jsonl_atomic",
]
