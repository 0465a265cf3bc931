"""The project's tool template: tools and calls for a model whose chat template has no tool support.

SmolLM2-135M-Instruct's chat template renders each message's `role` and `content` and nothing
else: `tools=` and an assistant turn's `tool_calls` vanish, so the model is never shown the tools
nor, in training, the calls it is taught. Such a model gets the project's tool template instead:
the conversation is rewritten into plain messages that its own template does render (its own
role tokens kept), in the Hermes style (Qwen2.5's template writes the same):

- the system message ends with the tools, compact JSON inside `<tools></tools>`, and how to call
  one (a system message is added when the conversation has none);
- an assistant turn's calls become its text: one `<tool_call>\\n{compact JSON}\\n</tool_call>`
  block each, exactly what the engines' grammar (the `hermes` format, compact JSON) lets the
  model write, so what it is trained on is what it is asked for and what is read back;
- tool results become one user turn of `<tool_response>` blocks, which keeps the user/assistant
  alternation some templates insist on.

One definition for every place a model meets the tools: a trainer renders an export's
`messages` + `tools` through `tool_template_messages` (the training layouts), the vLLM engine
sends its prompts through it (`VllmEngine`), and so does the gym's agent (`gym.chat.VllmChat`).
`renders_tools` tells a template that shows tools from one that drops them, by rendering a probe
conversation with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from codesearch_core.engines.tool_format import TOOL_FORMATS, ToolFormat

Message = dict[str, Any]

#: The syntax the project's tool template teaches and the engines then read.
PROJECT_TOOL_FORMAT: Final = TOOL_FORMATS["hermes"]

_COMPACT: Final = (",", ":")
#: Words only a template that renders them can put in its output (`renders_tools`).
_PROBE_DESCRIPTION: Final = "codesearch-probe-tool-description"
_PROBE_ARGUMENT: Final = "codesearch-probe-call-argument"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_COMPACT)


def tools_system_text(
    tools: Sequence[Mapping[str, Any]], tool_format: ToolFormat = PROJECT_TOOL_FORMAT
) -> str:
    """The tools and how to call one, as the end of the system message."""
    listed = "\n".join(_compact(dict(tool)) for tool in tools)
    body = f'{{"name":<function-name>,"{tool_format.arguments_key}":<args-json-object>}}'
    example = tool_format.begin + (f"[{body}]" if tool_format.as_list else body) + tool_format.end
    if tool_format.begin:
        how = (
            "For each function call, return a json object with function name and arguments "
            f"within {tool_format.begin.strip()}{tool_format.end.strip()} tags:\n{example}"
        )
    else:
        how = (
            "For each function call, return one json object with function name and arguments, "
            f"and nothing else:\n{example}"
        )
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{listed}\n</tools>\n\n{how}"
    )


def _arguments(value: Any) -> Any:
    """A call's arguments as a value: the OpenAI layout holds them as a JSON string."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # written as the model wrote it: not ours to mend
    return value


def _calls_text(calls: Sequence[Any], tool_format: ToolFormat) -> str:
    blocks = []
    for call in calls:
        function = call.get("function", call) if isinstance(call, Mapping) else {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = _arguments(function.get("arguments")) if isinstance(function, Mapping) else {}
        blocks.append(tool_format.render_call(str(name), arguments, compact=True))
    return "\n".join(blocks)


def tool_template_messages(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tool_format: ToolFormat = PROJECT_TOOL_FORMAT,
) -> list[Message]:
    """`messages` (OpenAI chat layout, `tool_calls` and `tool` turns included) and `tools` as
    plain role/content messages in the project's tool template (module docstring)."""
    out: list[Message] = []
    tools_text = tools_system_text(tools, tool_format) if tools else ""
    if tools_text and (not messages or messages[0].get("role") != "system"):
        out.append({"role": "system", "content": tools_text})
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "system" and not out and tools_text:
            out.append({"role": "system", "content": f"{content.strip()}\n\n{tools_text}".strip()})
        elif role == "assistant" and message.get("tool_calls"):
            calls = _calls_text(message["tool_calls"], tool_format)
            out.append({"role": "assistant", "content": f"{content.strip()}\n{calls}".strip()})
        elif role == "tool":
            response = f"<tool_response>\n{content}\n</tool_response>"
            if out and out[-1].get("role") == "user" and out[-1].get("_responses"):
                out[-1]["content"] += "\n" + response
            else:
                out.append({"role": "user", "content": response, "_responses": True})
        else:
            out.append({"role": role, "content": content})
    return [{k: v for k, v in m.items() if k != "_responses"} for m in out]


def _probe() -> tuple[list[Message], list[Message]]:
    tool = {
        "type": "function",
        "function": {
            "name": "codesearch_probe",
            "description": _PROBE_DESCRIPTION,
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    call = {"name": "codesearch_probe", "arguments": {"q": _PROBE_ARGUMENT}}
    messages: list[Message] = [
        {"role": "system", "content": "probe"},
        {"role": "user", "content": "probe"},
        {
            "role": "assistant",
            "content": "",
            # Nine alphanumerics: the id shape the strictest templates (Mistral) accept.
            "tool_calls": [{"id": "probe0001", "type": "function", "function": call}],
        },
        {"role": "tool", "tool_call_id": "probe0001", "content": "probe"},
    ]
    return messages, [tool]


def renders_tools(tokenizer: Any, chat_template: str | None = None) -> bool:
    """Whether a chat template (the tokenizer's, or `chat_template`) shows the model both the tools
    and an assistant turn's calls: a probe conversation is rendered and searched for each.

    A template that fails on tools or calls (it raises) does not render them either."""
    messages, tools = _probe()
    options: dict[str, Any] = {"chat_template": chat_template} if chat_template else {}
    try:
        text = tokenizer.apply_chat_template(
            messages, tools=tools, tokenize=False, add_generation_prompt=False, **options
        )
    except Exception:  # any template's own error: it cannot render tools
        return False
    return isinstance(text, str) and _PROBE_DESCRIPTION in text and _PROBE_ARGUMENT in text
