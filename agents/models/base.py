"""The language-model interface every back-end implements."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

Message = dict[str, Any]
"""One chat message in the OpenAI shape: {"role", "content"}, and `tool_calls` or
`tool_call_id` in a conversation with tools (see `lifelong_gym.session.to_messages`)."""


@dataclass(frozen=True)
class Usage:
    """What one reply cost, as the back-end counted it; None where it did not say."""

    prompt_tokens: int | None
    generated_tokens: int | None


class UsageLog:
    """Every reply's usage, in the order the replies were made (thread-safe)."""

    def __init__(self) -> None:
        self._records: list[Usage] = []
        self._lock = threading.Lock()

    def add(self, usages: Sequence[Usage]) -> None:
        """Append the usage of the replies of one call, in the batch's order."""
        with self._lock:
            self._records.extend(usages)

    def mark(self) -> int:
        """How many replies are logged so far (a point to read `since` from)."""
        with self._lock:
            return len(self._records)

    def since(self, mark: int) -> list[Usage]:
        """The usage of the replies logged after `mark`."""
        with self._lock:
            return self._records[mark:]


class LanguageModel(ABC):
    """Turns chat histories into replies; one object per model, shared by its users.

    A back-end that sets `reports_usage` logs one `Usage` per reply it returns (after the
    whole batch succeeded, in the batch's order) into `usage`; the runner reads it to
    cost each task.
    """

    reports_usage: ClassVar[bool] = False

    @property
    def usage(self) -> UsageLog:
        """The log of this model's replies' usage (made on first use)."""
        return self.__dict__.setdefault("_usage_log", UsageLog())

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
