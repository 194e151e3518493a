"""The oracle: replays each task's reference solution (the check of every scorer)."""

from __future__ import annotations

from lifelong_gym.session import Session
from lifelong_gym.tasks import TaskSet

from .base import Agent, AgentError


class OracleAgent(Agent):
    """Replies with the reference solution of the session's task, step by step.

    `action_format="tools"` replies with native tool calls (OpenAI assistant messages).
    """

    def __init__(self, tasks: TaskSet, action_format: str = "text"):
        self.tasks = tasks
        self.action_format = action_format
        self.probe_tasks: TaskSet | None = None

    def use_probe_tasks(self, tasks: TaskSet) -> None:
        """Answer probe sessions from the probe set's references."""
        self.probe_tasks = tasks

    def act(self, session: Session) -> str:
        """The reference reply for the next turn of `session`'s task."""
        if session.probe and self.probe_tasks is None:
            raise AgentError("the oracle was not given the probe set (use_probe_tasks)")
        task = (self.probe_tasks if session.probe else self.tasks)[session.task_index]
        if self.action_format == "text":
            return task.oracle_reply(session.chat_history)
        return task.oracle_reply(session.chat_history, self.action_format)
