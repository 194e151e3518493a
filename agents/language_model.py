"""`LanguageModelAgent`: the session's chat history to a model, its reply back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lifelong_gym.session import Session, to_messages

from .base import Agent
from .models import LanguageModel


class LanguageModelAgent(Agent):
    """One model call per turn; `act_batch` sends several sessions to the model as one batch.

    The environment's first observation already holds the instructions and the task, so
    the agent adds nothing but an optional system prompt. With `tools` (an environment's
    `env.unwrapped.tools` when its `action_format` is "tools") the model is offered those
    functions, and sees its past calls and their results as tool calls and tool messages.
    """

    def __init__(
        self,
        model: LanguageModel,
        system_prompt: str | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ):
        self.model = model
        self.system_prompt = system_prompt
        self.tools = list(tools) if tools else None

    def act(self, session: Session) -> str:
        """The model's reply to `session`'s history."""
        return self.act_batch([session])[0]

    def act_batch(self, sessions: Sequence[Session]) -> list[str]:
        """The model's replies to several histories, generated together."""
        with_tools = self.tools is not None
        batch = [
            to_messages(s.chat_history, self.system_prompt, tool_calls=with_tools) for s in sessions
        ]
        return (
            self.model.generate(batch, tools=self.tools)
            if with_tools
            else self.model.generate(batch)
        )
