"""What an agent is: something that turns a session's history into the next reply."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from lifelong_gym.errors import AgentContextLimitError as AgentContextLimitError
from lifelong_gym.errors import AgentError as AgentError
from lifelong_gym.errors import AgentOutOfMemoryError as AgentOutOfMemoryError
from lifelong_gym.session import Session
from lifelong_gym.tasks import TaskSet


class Agent(ABC):
    """Turns the session so far (task index, skills, chat history) into one reply.

    Agents see text and chat history only, never an environment.
    """

    @abstractmethod
    def act(self, session: Session) -> str:
        """The next reply for `session`."""

    def use_probe_tasks(self, tasks: TaskSet) -> None:  # noqa: B027 - optional hook
        """The probe set of a run (docs/metrics.md): a probe session's `task_index` is one of
        its tasks. Agents that look a task up by its index (the oracle) keep it."""

    def act_batch(self, sessions: Sequence[Session]) -> list[str]:
        """Replies for several sessions at once (back-ends that batch override this)."""
        return [self.act(session) for session in sessions]
