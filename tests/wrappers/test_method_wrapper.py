"""`Method.as_wrapper`: a method in a plain Gymnasium loop through `MethodWrapper`."""

from __future__ import annotations

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.methods import Method
from lifelong_gym.wrappers import MethodWrapper

NOTE = "Count carefully."


class Seen(Method):
    """Inserts a note and keeps the outcome of every task that ended."""

    def __init__(self):
        self.outcomes: list[str] = []

    def start(self, session):
        session.insert_memory(NOTE, title="note")

    def finish(self, session):
        self.outcomes.append(session.outcome.value)


def test_the_wrapper_inserts_at_reset_and_learns_at_the_end():
    method = Seen()
    env = method.as_wrapper(gym.make("LifelongDB-v0"))
    assert isinstance(env, MethodWrapper) and env.method is method
    oracle = OracleAgent(env.unwrapped.tasks)
    for index in env.unwrapped.tasks.order[:2]:
        opening, info = env.reset(options={"task_index": index})
        assert opening == env.unwrapped.session.chat_history[0].content
        start = opening.index(NOTE)
        assert info["memory"] == [
            {"text": NOTE, "title": "note", "start": start, "chars": len(NOTE)}
        ]
        assert f"\n\n{NOTE}\n\nTask: " in opening
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(oracle.act(env.unwrapped.session))
            done = terminated or truncated
    assert method.outcomes == ["correct", "correct"]
    env.close()
