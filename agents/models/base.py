"""The language-model interface every back-end implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

Message = dict[str, str]
"""One chat message in the OpenAI shape: {"role": "system" | "user" | "assistant", "content"}."""


class LanguageModel(ABC):
    """Turns chat histories into replies; one object per model, shared by its users."""

    @abstractmethod
    def generate(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """One reply per history in `batch`; raises an AgentError subclass on failure."""

    def count_tokens(self, messages: Sequence[Message]) -> int | None:
        """The prompt length of `messages` in tokens, or None when the back-end cannot tell."""
        return None

    def close(self) -> None:  # noqa: B027 (most back-ends hold nothing to free)
        """Free what the model holds (connections, accelerator memory)."""
