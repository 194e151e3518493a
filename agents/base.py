"""What an agent is: something that turns a session's history into the next reply."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from lifelong_gym.session import Session, SessionStatus


class AgentError(Exception):
    """An agent could not produce a reply; `status` is what the session ends with."""

    status = SessionStatus.AGENT_UNKNOWN_ERROR


class AgentContextLimitError(AgentError):
    """The history no longer fits the model's context window."""

    status = SessionStatus.AGENT_CONTEXT_LIMIT


class AgentOutOfMemoryError(AgentError):
    """The model ran out of accelerator memory."""

    status = SessionStatus.AGENT_OUT_OF_MEMORY


class Agent(ABC):
    """Turns the session so far (task index, skills, chat history) into one reply.

    Agents see text and chat history only, never an environment.
    """

    @abstractmethod
    def act(self, session: Session) -> str:
        """The next reply for `session`."""

    def act_batch(self, sessions: Sequence[Session]) -> list[str]:
        """Replies for several sessions at once (back-ends that batch override this)."""
        return [self.act(session) for session in sessions]
