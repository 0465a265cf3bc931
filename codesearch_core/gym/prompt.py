"""What the agent is told: the system prompt (the rules of the episode) and the user turn (the
blueprint's intent and its corpus)."""

from __future__ import annotations

from typing import Any

from codesearch_core.gym.settings import READ_MAX_LINES, GymSettings
from codesearch_core.models import Blueprint


def system_prompt(settings: GymSettings) -> str:
    per_turn = (  # one call a turn: the MCP server's episodes (a harness calls one at a time)
        "each turn is one tool call"
        if settings.max_parallel == 1
        else f"each turn may hold up to {settings.max_parallel} tool calls, which run in parallel"
    )
    return (
        "You find code in a corpus of source files. Search with ripgrep_search (text and regular "
        "expressions) and ast_grep_search (code structure), read lines with read_file (at most "
        f"{READ_MAX_LINES} a call), then call submit with the location (path, start_line, "
        "end_line) of every piece of code the task asks for, and nothing else. You have at most "
        f"{settings.max_turns} turns; {per_turn}. Paths are relative to the corpus root. Fewer "
        "turns and calls are better; an episode that never submits scores 0."
    )


def user_prompt(blueprint: Blueprint) -> str:
    return f"Corpus: {blueprint.corpus}\nTask: {blueprint.intent}"


def prompt_messages(blueprint: Blueprint, settings: GymSettings) -> list[dict[str, Any]]:
    """The episode's opening messages in chat form (system, then user)."""
    return [
        {"role": "system", "content": system_prompt(settings)},
        {"role": "user", "content": user_prompt(blueprint)},
    ]
