"""A deterministic, stateful, slowed-down callback for the CLI's crash test."""

from __future__ import annotations

import time

from lifelong_gym.run import Callback


class Saboteur(Callback):
    """Ends every task whose index is divisible by `every` at once; paces the run.

    Its state (how many sessions it saw, which it ended) must survive any number of kills.
    """

    state_attributes = ("seen", "ended")

    def __init__(self, every: int = 3, delay: float = 0.0):
        self.every, self.delay = every, delay
        self.seen = 0
        self.ended: list[int] = []

    def on_environment_reset(self, agent, env, session, history, control):
        self.seen += 1
        if session.task_index % self.every == 0:
            self.ended.append(session.task_index)
            control.end_session = True

    def on_environment_interact(self, agent, env, session, history, control):
        time.sleep(self.delay)  # so that kills land inside the run, not only at start-up
