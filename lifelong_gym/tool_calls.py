"""Native tool calls: reading a model's tool call from its reply, and writing one.

With `action_format="tools"` an environment takes the assistant turn as a tool call in
either of two shapes:

- an OpenAI chat message in JSON, `{"role": "assistant", "tool_calls": [{"type":
  "function", "function": {"name": ..., "arguments": "<JSON text>"}}]}` (the arguments may
  also be a JSON object), as the OpenAI API and vLLM return it;
- the markup of Qwen and Hermes chat templates, `<tool_call>{"name": ..., "arguments":
  {...}}</tool_call>`, as a model writes it in plain text.

One call a turn, as one action a turn in the text format. `step` also takes the message as
a dict (as an SDK returns it, or its `model_dump()`): it is read, and kept in the history,
as its JSON text (`message_text`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from lifelong_gym.actions import InvalidReply, ToolCall

_MARKUP = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
MAX_CALL_LENGTH = 200_000


def function_schema(name: str, description: str, **parameters: str) -> dict[str, Any]:
    """An OpenAI-style function tool whose parameters are all required strings."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "string", "description": text} for key, text in parameters.items()
                },
                "required": list(parameters),
                "additionalProperties": False,
            },
        },
    }


def parse_tool_call(reply: str) -> ToolCall | InvalidReply:
    """The one tool call of a reply, or why it holds none (or more than one)."""
    if len(reply) > MAX_CALL_LENGTH:
        return InvalidReply(f"the reply is longer than {MAX_CALL_LENGTH} characters")
    calls = _message_calls(reply)
    if calls is None:
        calls = [_decode(text) for text in _MARKUP.findall(reply)]
    if not calls:
        return InvalidReply(
            "the reply holds no tool call (an assistant message with `tool_calls`, or "
            "<tool_call>{...}</tool_call>)"
        )
    if len(calls) > 1:
        return InvalidReply(f"the reply holds {len(calls)} tool calls; make one call a turn")
    return _call(calls[0])


def message_text(message: Mapping[str, Any]) -> str:
    """An assistant message given as a dict, as the JSON text `parse_tool_call` reads.

    Fields an SDK leaves empty (`refusal`, `audio`, ... set to None) are left out, so the
    history shows what the model said and called.
    """
    shown = {key: value for key, value in message.items() if value is not None}
    try:
        return json.dumps(shown, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"the assistant message must hold JSON values only (pass an SDK message's "
            f".model_dump()): {error}"
        ) from None


def assistant_message(reply: str, call_id: str) -> dict[str, Any] | None:
    """A reply holding one valid call as the OpenAI assistant message that makes it; else None.

    The call keeps the id an OpenAI message gives it, else takes `call_id`; the text around
    `<tool_call>` markup is the message's content. This is how a model reads its own turn
    back in the chat history, with the tool result answering the call's id.
    """
    call = parse_tool_call(reply)
    if isinstance(call, InvalidReply):
        return None
    calls = _message_calls(reply)
    if calls is None:
        content = _MARKUP.sub("", reply).strip()
    else:
        content = _decode(reply.strip()).get("content")
        raw_id = calls[0].get("id") if isinstance(calls[0], dict) else None
        call_id = raw_id if isinstance(raw_id, str) and raw_id else call_id
    text = content if isinstance(content, str) else ""
    return {"role": "assistant", "content": text, "tool_calls": [call.openai(call_id)]}


def _message_calls(reply: str) -> list[Any] | None:
    """The `tool_calls` of a reply that is a JSON chat message; None when it is not one."""
    text = reply.strip()
    if not text.startswith("{"):
        return None
    message = _decode(text)
    if not isinstance(message, dict) or "tool_calls" not in message:
        return None
    calls = message["tool_calls"]
    return calls if isinstance(calls, list) else [calls]


def _call(raw: Any) -> ToolCall | InvalidReply:
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
        raw = raw["function"]  # the OpenAI shape: {"type": "function", "function": {...}}
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        return InvalidReply("a tool call must be a JSON object with a `name` and `arguments`")
    arguments = raw.get("arguments", {})
    if isinstance(arguments, str):
        arguments = _decode(arguments) if arguments.strip() else {}
    if not isinstance(arguments, dict):
        return InvalidReply(f"the arguments of `{raw['name']}` must be a JSON object")
    return ToolCall(raw["name"], arguments)


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def call_arguments(call: ToolCall, expected: tuple[str, ...]) -> tuple[str, ...] | InvalidReply:
    """The call's arguments in the order of `expected`, each text; or what is wrong."""
    missing = [name for name in expected if name not in call.arguments]
    unknown = [name for name in call.arguments if name not in expected]
    if missing or unknown:
        wanted = ", ".join(expected) or "no arguments"
        return InvalidReply(
            f"`{call.name}` takes {wanted}; got {', '.join(call.arguments) or 'none'}"
        )
    values = tuple(call.arguments[name] for name in expected)
    if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values):
        return InvalidReply(f"the arguments of `{call.name}` must be text")
    return tuple(str(v) for v in values)


def with_argument_objects(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with its calls' JSON-text arguments decoded (chat templates render objects)."""
    if not message.get("tool_calls"):
        return message
    calls = []
    for call in message["tool_calls"]:
        function = dict(call["function"])
        if isinstance(function.get("arguments"), str):
            try:
                function["arguments"] = json.loads(function["arguments"])
            except ValueError:
                pass  # not JSON: the template shows the text
        calls.append({**call, "function": function})
    return {**message, "tool_calls": calls}
