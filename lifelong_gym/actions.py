"""What an environment's parser makes of a reply: a parsed action (in either format, text or
native tool call), or why there is none."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol


def not_text(text: str, what: str) -> str | None:
    """Why `text` cannot be sent on as UTF-8 (a lone surrogate, which no model writes but a
    fuzzer does), naming it `what`; None when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"{what} is not valid text (character {error.start} is a lone surrogate)"
    return None


@dataclass(frozen=True)
class InvalidReply:
    """A reply in none of the environment's action formats; `reason` tells the agent why."""

    reason: str


@dataclass(frozen=True)
class ToolCall:
    """One call: the function's name and its arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def openai(self, call_id: str = "call_0") -> dict[str, Any]:
        """The call as an entry of an OpenAI message's `tool_calls` (arguments as JSON text)."""
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }

    def reply(self) -> str:
        """The call as an OpenAI assistant message in JSON (what `step` accepts)."""
        return json.dumps({"role": "assistant", "content": None, "tool_calls": [self.openai()]})


class ParsedAction(Protocol):
    """A valid action, which can be written back in either action format."""

    def key(self) -> str | None:
        """One spelling for actions that do the same thing (the voting key); None: none."""

    def text(self) -> str:
        """The action as a reply in the benchmark's text format."""

    def tool_call(self) -> ToolCall:
        """The action as a native tool call."""


@dataclass(frozen=True)
class TextAction:
    """The reply itself, for environments without an action format of their own."""

    content: str

    def key(self) -> str:
        """The text with its white space folded."""
        return " ".join(self.content.split())

    def text(self) -> str:
        """The reply as it was."""
        return self.content

    def tool_call(self) -> ToolCall:
        """A call of `reply(text)`."""
        return ToolCall("reply", {"text": self.content})
