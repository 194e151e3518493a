"""A small real DB run in which a scripted agent fails in several ways, for the report tests."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import Agent, OracleAgent
from lifelong_gym.run import ExperienceReplayCallback, Runner
from lifelong_gym.session import Session

# an agent reply that would run script in the page if the report showed text as markup
HOSTILE_REPLY = (
    "<script>window.__pwned = 'script'</script></script><!-- <script>"
    '<img src="x" onerror="window.__pwned = \'img\'"> I will not follow the format'
)
WRONG_ANSWER = 'Action: Answer\nFinal Answer: [("nothing",)]'
STALL = "Action: Operation\n```sql\nSELECT 1;\n```"


class ScriptedAgent(Agent):
    """Solves most tasks, answers some wrongly, breaks the format or stalls on others.

    By the session's position in the run: every third is answered wrongly, the 4th and
    11th break the format (the 4th with markup), the 8th stalls until the turn limit.
    """

    def __init__(self, tasks):
        self.oracle = OracleAgent(tasks)
        self.position = -1

    def act(self, session: Session) -> str:
        if len(session.chat_history) == 1:
            self.position += 1
        if self.position == 3:
            return HOSTILE_REPLY
        if self.position == 10:
            return "I think the answer is 42."
        if self.position == 7:
            return STALL
        if self.position % 3 == 2:
            return WRONG_ANSWER
        return self.oracle.act(session)


def scripted_run(folder: Path, sessions: int = 12, replay: int = 0) -> Path:
    """Run the scripted agent over the first tasks of the shipped DB set into `folder`."""
    env = gym.make("LifelongDB-v0")
    try:
        callbacks = [ExperienceReplayCallback(n=replay)] if replay else []
        agent = ScriptedAgent(env.unwrapped.tasks)
        Runner(env, agent, callbacks, output=folder, max_tasks=sessions, progress=False).run()
    finally:
        env.close()
    return folder


def oracle_run(folder: Path, env_id: str, sessions: int, **env_kwargs) -> Path:
    """Run the oracle over the first tasks of an environment's shipped set into `folder`."""
    env = gym.make(env_id, **env_kwargs)
    try:
        agent = OracleAgent(env.unwrapped.tasks)
        Runner(env, agent, [], output=folder, max_tasks=sessions, progress=False).run()
    finally:
        env.close()
    return folder
