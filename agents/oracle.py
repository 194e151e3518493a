"""The oracle: replays each task's reference solution (the check of every scorer)."""

from __future__ import annotations

from lifelong_gym.session import Session
from lifelong_gym.tasks import TaskSet

from .base import Agent


class OracleAgent(Agent):
    """Replies with the reference solution of the session's task, step by step."""

    def __init__(self, tasks: TaskSet):
        self.tasks = tasks

    def act(self, session: Session) -> str:
        """The reference reply for the next turn of `session`'s task."""
        return self.tasks[session.task_index].oracle_reply(session.chat_history)
