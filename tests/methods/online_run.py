"""A stream of DB tasks with `online_training`, for the kill-and-resume test; and what
the online training tests share (the agent, the tiny model, a solved task, the adapters).

`python -m tests.methods.online_run MODEL OUTPUT TASKS [KILL]` runs TASKS tasks with the
tiny transformers model at MODEL (the oracle's replies, so tasks are solved and learned
from) and an update every 2 tasks; with KILL the process kills itself with SIGKILL when the
KILL-th stream task has been scored and its update made, before either is recorded.
"""

from __future__ import annotations

import os
import signal
import sys

import gymnasium as gym
import torch

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import ModelPool, OracleAgent
from lifelong_gym.methods.online_training import conversation
from lifelong_gym.run import Callback, Runner, make_callback
from tests.agents.episodes import run_task

SPEC = "online_training:every=2,steps=2,batch=2,lr=0.01"


class ModelOracle(OracleAgent):
    """The oracle's replies; `model` is the tiny transformers model the method trains."""

    def __init__(self, tasks, model):
        super().__init__(tasks)
        self.model = model


def tiny_model(folder) -> object:
    """A fresh copy of the tiny model (the method puts adapters on the one it is given)."""
    config = {"name": "tiny", "backend": "hf", "path": str(folder), "max_new_tokens": 4}
    return ModelPool([config]).get("tiny")


def solved_conversation(env, index: int) -> list[dict]:
    """Task `index` played by the oracle, as the chat messages it would be trained on."""
    run_task(env, OracleAgent(env.unwrapped.tasks), index)
    return conversation(env.unwrapped.session)


def adapters(learner) -> dict[str, torch.Tensor]:
    """The learner's LoRA adapter weights, by name."""
    return {k: v for k, v in learner.tensors().items() if k.startswith("adapter/")}


class KillAfter(Callback):
    """Kills the process once the `count`-th stream task is scored (0: never)."""

    def __init__(self, count: int):
        self.count = count

    def on_environment_complete(self, run, state, control, *, session, **kwargs):
        if self.count and not session.probe and len(run.history) + 1 == self.count:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    model_dir, output, tasks, *kill = sys.argv[1:]
    env = gym.make("LifelongDB-v0")
    agent = ModelOracle(env.unwrapped.tasks, tiny_model(model_dir))
    callbacks = [make_callback(SPEC), KillAfter(int(kill[0]) if kill else 0)]
    Runner(
        env, agent, callbacks, output=output, max_tasks=int(tasks), progress=False, plots=False
    ).run()
