"""A user's own agents and plugin, as `--agent tests.agents.user_agent:…` and `--plugin
tests.agents.user_agent` name them from the command line."""

from __future__ import annotations

from lifelong_gym.agents import Agent, OracleAgent
from lifelong_gym.run import Callback, register_callback

NO_ACTION = "I will not answer this one."


class EveryOtherOracle(Agent):
    """Replies as the oracle does, except on tasks whose index is a multiple of `skip_every`
    (0: never), where it replies with text that is no action."""

    def __init__(self, tasks, skip_every: int = 0):
        self.oracle = OracleAgent(tasks)
        self.skip_every = skip_every

    def use_probe_tasks(self, tasks) -> None:
        self.oracle.use_probe_tasks(tasks)

    def act(self, session):
        if self.skip_every and session.task_index % self.skip_every == 0 and not session.probe:
            return NO_ACTION
        return self.oracle.act(session)


class NeedsGreeting(Agent):
    """An agent with a required argument and no task set."""

    def __init__(self, greeting: str):
        self.greeting = greeting

    def act(self, session):
        return self.greeting


class NotAnAgent:
    """Not an agent at all."""


@register_callback("user_counter")
class TaskCounter(Callback):
    """Counts the finished tasks, from `start`, in its saved state (the run's state.json)."""

    state_attributes = ("count",)

    def __init__(self, start: int = 0):
        self.count = start

    def on_environment_complete(self, run, state, control, **kwargs):
        self.count += 1
