"""The Propose page's logic: run an engine over blueprints into the store, with progress; few-shot
examples from accepted items; a check that an OpenAI-compatible server answers."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import httpx

from codesearch_core.engines import Engine, Example, PromptConfig, SamplingSettings
from codesearch_core.errors import EngineError
from codesearch_core.models import Blueprint
from codesearch_core.store import BlueprintFilters, DecisionState, QueueFilters, Store
from codesearch_core.tools import parse_tool_call

# --- proposing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProposeProgress:
    """Running totals of a proposing run, reported after each chunk of blueprints."""

    blueprints_done: int
    blueprints_total: int
    proposals: int
    new: int
    invalid: int


def propose_into_store(
    store: Store,
    engine: Engine,
    blueprints: Sequence[Blueprint],
    *,
    n: int = 1,
    settings: SamplingSettings | None = None,
    chunk_size: int = 32,
    prompt: PromptConfig | None = None,
    examples: Sequence[Example] = (),
    on_chunk: Callable[[ProposeProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ProposeProgress:
    """Ask `engine` for proposals `chunk_size` blueprints at a time and store each chunk at once.

    A chunk is the unit of stopping: `should_stop` is checked between chunks, and whatever was
    proposed before the stop (or before an engine error) is already in the store.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    progress = ProposeProgress(0, len(blueprints), 0, 0, 0)
    for start in range(0, len(blueprints), chunk_size):
        if should_stop is not None and should_stop():
            break
        chunk = blueprints[start : start + chunk_size]
        proposals = engine.propose(chunk, n=n, settings=settings, prompt=prompt, examples=examples)
        report = store.add_proposals_report(proposals, source=f"{engine.name}:{engine.model}")
        progress = ProposeProgress(
            blueprints_done=progress.blueprints_done + len(chunk),
            blueprints_total=len(blueprints),
            proposals=progress.proposals + len(proposals),
            new=progress.new + report.new,
            invalid=progress.invalid + sum(not p.valid for p in proposals),
        )
        if on_chunk is not None:
            on_chunk(progress)
    return progress


def accepted_examples(store: Store, limit: int) -> list[Example]:
    """Few-shot examples for a prompt: the first `limit` accepted proposals (intent and call)."""
    examples: list[Example] = []
    if limit < 1:
        return examples
    rows = store.export_rows(QueueFilters(decision=DecisionState.ACCEPTED), kind="accepted")
    for row in rows:
        if row.call_json is not None:
            examples.append(Example(row.intent, parse_tool_call(json.loads(row.call_json))))
        if len(examples) >= limit:
            break
    return examples


def all_blueprints(store: Store, filters: BlueprintFilters, *, limit: int) -> list[Blueprint]:
    """Up to `limit` blueprints matching `filters`, in the store's order, fetched page by page."""
    out: list[Blueprint] = []
    page = 1000
    while len(out) < limit:
        batch = store.blueprints.list(filters, offset=len(out), limit=min(page, limit - len(out)))
        out.extend(batch.items)
        if len(batch.items) < page or len(out) >= batch.total:
            break
    return out


def probe_openai_server(base_url: str, api_key: str | None, *, timeout_s: float = 5.0) -> list[str]:
    """The model ids an OpenAI-compatible server serves; EngineError saying how to fix it when the
    server cannot be reached or refuses (so a run does not turn into a pile of failed proposals)."""
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as err:
        raise EngineError(
            f"cannot reach {url}: {err or type(err).__name__}. Is the server running "
            "(e.g. `vllm serve MODEL --port 8000`) and does the URL end in /v1?"
        ) from None
    if response.status_code in (401, 403):
        raise EngineError(f"{url} refused the API key (HTTP {response.status_code})")
    if response.status_code != 200:
        raise EngineError(
            f"{url} answered HTTP {response.status_code}; the base URL should end in /v1"
        )
    try:
        data = response.json().get("data", [])
        return [str(m["id"]) for m in data if isinstance(m, Mapping) and "id" in m]
    except (ValueError, AttributeError):
        raise EngineError(f"{url} did not answer like an OpenAI-compatible server") from None
