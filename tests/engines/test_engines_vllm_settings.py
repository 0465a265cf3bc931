"""What the vLLM engine is built with: eager left to the machine, the tool template's choice."""

from __future__ import annotations

import pytest

from codesearch_core.engines import PROJECT_TOOL_FORMAT, TOOL_TEMPLATES, VllmSettings
from codesearch_core.errors import EngineError


def test_eager_is_left_to_the_machine_unless_set() -> None:
    # None: `platform_defaults` makes a CPU eager (a start in seconds) and leaves a GPU compiled.
    assert "enforce_eager" not in VllmSettings(model="m").llm_kwargs()
    assert VllmSettings(model="m", enforce_eager=False).llm_kwargs()["enforce_eager"] is False
    assert VllmSettings(model="m", enforce_eager=True).llm_kwargs()["enforce_eager"] is True


def test_the_project_tool_template_asks_for_its_own_syntax_under_its_grammar() -> None:
    assert TOOL_TEMPLATES == ("auto", "model", "project")
    forced = VllmSettings(model="m", tool_format="json", tool_template="project")
    assert forced.format is PROJECT_TOOL_FORMAT
    # Hermes markers are held by a structural tag, which needs xgrammar.
    assert forced.llm_kwargs()["structured_outputs_config"]["backend"] == "xgrammar"
    assert VllmSettings(model="m", tool_format="json").format.name == "json"
    with pytest.raises(EngineError, match="tool_template must be one of auto, model, project"):
        VllmSettings(model="m", tool_template="hermes")
