"""Callbacks whose own code raises outside a session, named by `--callback module.Class`."""

from __future__ import annotations

from lifelong_gym.run import Callback


class Forgetful(Callback):
    """Keeps a count, then cannot read it back: `load_state` raises KeyError."""

    state_attributes = ("seen",)

    def __init__(self):
        self.seen = 0

    def on_environment_complete(self, run, state, control, **kwargs):
        self.seen += 1

    def load_state(self, state):
        raise KeyError("memory")


class RefusesToStart(Callback):
    """Its `__init__` raises ValueError."""

    def __init__(self):
        raise ValueError("no memory size given")


class BrokenSetup(Callback):
    """Its `setup` raises RuntimeError."""

    def setup(self, agent, env):
        raise RuntimeError("the index is not built")
