"""The language-model interface every back-end implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]
"""One chat message in the OpenAI shape: {"role", "content"}, and `tool_calls` or
`tool_call_id` in a conversation with tools (see `lifelong_gym.session.to_messages`)."""


class LanguageModel(ABC):
    """Turns chat histories into replies; one object per model, shared by its users."""

    @abstractmethod
    def generate(
        self, batch: Sequence[Sequence[Message]], tools: Sequence[dict[str, Any]] | None = None
    ) -> list[str]:
        """One reply per history in `batch`; raises an AgentError subclass on failure.

        `tools` are OpenAI-style function schemas the model may call; a reply that calls one
        is a tool call an environment with `action_format="tools"` accepts.
        """

    def count_tokens(self, messages: Sequence[Message]) -> int | None:
        """The prompt length of `messages` in tokens, or None when the back-end cannot tell."""
        return None

    def close(self) -> None:  # noqa: B027 (most back-ends hold nothing to free)
        """Free what the model holds (connections, accelerator memory)."""
