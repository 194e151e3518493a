"""`LanguageModelAgent`: the session's chat history to a model, its reply back."""

from __future__ import annotations

from collections.abc import Sequence

from lifelong_gym.session import Session, to_messages

from .base import Agent
from .models import LanguageModel


class LanguageModelAgent(Agent):
    """One model call per turn; `act_batch` sends several sessions to the model as one batch.

    The environment's first observation already holds the instructions and the task, so
    the agent adds nothing but an optional system prompt.
    """

    def __init__(self, model: LanguageModel, system_prompt: str | None = None):
        self.model = model
        self.system_prompt = system_prompt

    def act(self, session: Session) -> str:
        """The model's reply to `session`'s history."""
        return self.act_batch([session])[0]

    def act_batch(self, sessions: Sequence[Session]) -> list[str]:
        """The model's replies to several histories, generated together."""
        return self.model.generate(
            [to_messages(s.chat_history, self.system_prompt) for s in sessions]
        )
