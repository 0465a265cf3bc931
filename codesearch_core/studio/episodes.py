"""The Episodes queue's logic (Review page) and the Propose page's rollouts: which episode comes next
for a reviewer, the card's figures (reviews per reviewer, why it cannot be accepted), the other
episodes of its task it can be set beside, and the run `codesearch rollouts` makes, started from the
page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from codesearch_core.engines import Engine, OpenAIEngine, SamplingSettings, VllmEngine
from codesearch_core.errors import InputFileError
from codesearch_core.gym import (
    DEFAULT_SETTINGS,
    ChatPolicy,
    GymSettings,
    OpenAIChat,
    Policy,
    ReferencePolicy,
    RolloutReport,
    VllmChat,
    as_tasks,
    check_playable,
    check_rollout_args,
    missing_summary,
    rollouts,
)
from codesearch_core.models import Blueprint
from codesearch_core.store import EPISODE, DecisionEvent, Store, StoredEpisode, Voted
from codesearch_core.studio.propose import probe_openai_server

#: What makes episodes to review, said where the queue is empty (the issue's first command).
ROLLOUTS_COMMAND: Final = "codesearch rollouts --engine reference --k 1 --blueprints seeds"
#: The most episodes of one task the card offers to compare with: K rollouts and a few engines'.
COMPARE_LIMIT: Final = 50
#: Why an episode is rejected (the Reject button's reason; the note says more): what goes wrong
#: in a trajectory, the submitted locations first (the reward's own terms), then the search.
EPISODE_REJECT_REASONS: Final[tuple[str, ...]] = (
    "submitted wrong locations",
    "missed expected locations",
    "wasted calls on repeated or aimless searches",
    "wrong tool for the search",
    "gave up or ran out of turns",
    "other",
)


@dataclass(frozen=True, slots=True)
class EpisodeCard(Voted):
    """One episode on the Review page's card, with its reviews."""

    episode: StoredEpisode
    blueprint: Blueprint | None
    #: Each reviewer's live vote: reviewer -> (action, event id), in the order they voted.
    votes: Mapping[str, tuple[str, int]]
    history: tuple[DecisionEvent, ...]
    #: Why it cannot be accepted now (its corpus is gone), or None.
    blocker: str | None

    @property
    def episode_id(self) -> str:
        return self.episode.episode_id

    @property
    def state(self) -> str | None:
        """None (open), 'accept', 'reject' or 'conflict': what the reviews settled."""
        return self.episode.decision


def votes_from(history: Sequence[DecisionEvent]) -> dict[str, tuple[str, int]]:
    """Each reviewer's vote from an item's log: their latest live event that is not an undo nor a
    lead's final decision (what the store's votes table keeps)."""
    votes: dict[str, tuple[str, int]] = {}
    for e in history:
        if e.undone or e.final or e.action.value == "undo":
            continue
        votes.pop(e.reviewer, None)  # a later vote moves the reviewer to the end
        votes[e.reviewer] = (e.action.value, e.event_id)
    return votes


def episode_card(store: Store, episode_id: str) -> EpisodeCard | None:
    episode = store.episodes.get(episode_id)
    if episode is None:
        return None
    history = store.queue(EPISODE).history(episode_id)
    return EpisodeCard(
        episode=episode,
        blueprint=store.blueprints.get(episode.blueprint_id),
        votes=votes_from(history),
        history=history,
        blocker=store.queue(EPISODE).accept_blocker(episode_id),
    )


def other_episodes(store: Store, episode: StoredEpisode) -> list[StoredEpisode]:
    """The other stored episodes of `episode`'s blueprint (its K rollouts, other engines' and
    models'), oldest first, at most `COMPARE_LIMIT`: what the card can set beside it."""
    same_task = store.episodes.list(blueprint_id=episode.blueprint_id, limit=COMPARE_LIMIT + 1)
    return [e for e in same_task if e.episode_id != episode.episode_id][:COMPARE_LIMIT]


def episode_label(episode: StoredEpisode) -> str:
    """An episode in a picker: who played it, its reward, turns and id."""
    who = episode.engine + (
        f" · {episode.model}" if episode.model and episode.model != episode.engine else ""
    )
    return f"{who} · reward {episode.reward:.3f} · `{episode.episode_id[:10]}`"


# --- rollouts from the Propose page -----------------------------------------------------------


def rollout_policy(engine: Engine | None, sampling: SamplingSettings | None) -> Policy:
    """Who plays: the blueprints' own calls (no engine: `--engine reference`), or the chat model
    the page configured (an OpenAI-compatible server, vLLM in this process)."""
    if engine is None:
        return ReferencePolicy()
    chosen = sampling or SamplingSettings()
    if isinstance(engine, OpenAIEngine):
        # A server that is down fails here, not as a run of episodes that each score 0.
        for url in engine.settings.base_urls:
            probe_openai_server(url, engine.settings.api_key)
        return ChatPolicy(OpenAIChat(engine, chosen))
    if isinstance(engine, VllmEngine):
        return ChatPolicy(VllmChat(engine, chosen))
    raise InputFileError(
        f"episodes are played by the reference, an OpenAI-compatible server or vLLM, not by "
        f"{engine.name}"
    )


@dataclass(frozen=True, slots=True)
class RolloutRun:
    report: RolloutReport
    #: Why some blueprints were left out (their corpus is not here), or "".
    missing: str


def rollouts_into_store(
    store: Store,
    policy: Policy,
    blueprints: Sequence[Blueprint],
    label: str,
    *,
    k: int = 1,
    min_reward: float,
    settings: GymSettings = DEFAULT_SETTINGS,
    on_progress: Callable[[int, int], None] | None = None,
) -> RolloutRun:
    """What `codesearch rollouts` does (`gym.rollouts`), on the blueprints the page chose."""
    check_rollout_args(k, min_reward)
    tasks = check_playable(as_tasks(blueprints), label)
    report = rollouts(
        policy, tasks.tasks, store, k=k, min_reward=min_reward, settings=settings,
        on_progress=on_progress,
    )  # fmt: skip
    return RolloutRun(report, missing_summary(tasks.missing))
