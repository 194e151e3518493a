"""`ScriptedAgent`: replays fixed replies (for tests and demonstrations)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lifelong_gym.session import Session

from .base import Agent, AgentError


class ScriptedAgent(Agent):
    """Reply number n of a session is `replies[n]`; per-task scripts when given a mapping.

    A script that runs out raises AgentError (the session ends as agent_unknown_error).
    """

    def __init__(self, replies: Sequence[str] | Mapping[int, Sequence[str]]):
        self.replies = replies

    def act(self, session: Session) -> str:
        """The next scripted reply for `session`."""
        if isinstance(self.replies, Mapping):
            script = self.replies.get(session.task_index)
            if script is None:
                raise AgentError(f"no scripted replies for task {session.task_index}")
        else:
            script = self.replies
        turn = session.agent_turns
        if turn >= len(script):
            raise AgentError(
                f"the script has {len(script)} replies; turn {turn + 1} asked for more"
            )
        return script[turn]
