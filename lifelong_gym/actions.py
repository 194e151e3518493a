"""What an environment's parser makes of a reply: a parsed action, or why there is none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lifelong_gym.tool_calls import ToolCall


@dataclass(frozen=True)
class InvalidReply:
    """A reply in none of the environment's action formats; `reason` tells the agent why."""

    reason: str


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
        from lifelong_gym.tool_calls import ToolCall

        return ToolCall("reply", {"text": self.content})
