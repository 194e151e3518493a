"""Policies on the tiny model and on SmolLM2; DB environments that record what they received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from lifelong_gym.envs.db.actions import operation_reply
from lifelong_gym.envs.db.env import LifelongDBEnv


@pytest.fixture(scope="session")
def tiny_policy(tiny_model_dir: Path):
    """The tiny random model as a policy: float32, sampling at temperature 1."""
    from lifelong_gym.training import TransformersPolicy

    return TransformersPolicy(tiny_model_dir, max_new_tokens=24, temperature=1.0, seed=0)


@pytest.fixture(scope="session")
def smollm2_policy():
    """SmolLM2-135M-Instruct from its GGUF file (about 30 s to load), or a skip."""
    pytest.importorskip("gguf", reason="loading GGUF files needs the gguf package")
    pytest.importorskip("accelerate", reason="loading GGUF files needs accelerate")
    from lifelong_gym.agents.models.gguf import smollm2_path
    from lifelong_gym.errors import ConfigError
    from lifelong_gym.training import TransformersPolicy

    try:
        path = smollm2_path()
    except ConfigError as error:  # the package or its file is missing
        pytest.skip(str(error))
    return TransformersPolicy(path, max_new_tokens=40, temperature=1.0, seed=0)


class Recorder(gym.Wrapper):
    """Keeps, per episode, the replies the environment received and the rewards it returned."""

    def __init__(self, env: gym.Env, log: list[dict[str, Any]]):
        super().__init__(env)
        self.log = log

    def reset(self, **kwargs):
        observation, info = self.env.reset(**kwargs)
        self.episode = {"task_index": info["task_index"], "replies": [], "rewards": []}
        self.log.append(self.episode)
        return observation, info

    def step(self, action):
        self.episode["replies"].append(action)
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.episode["rewards"].append(reward)
        self.episode["done"] = terminated or truncated
        return observation, reward, terminated, truncated, info


class QueryEveryReply(gym.Wrapper):
    """Runs a SELECT quoting each reply, so that any reply continues the episode.

    The random model never writes the action format; with this wrapper its episodes last
    until the turn limit, and the observations are real query results holding its text.
    """

    def step(self, action):
        quoted = str(action)[:30].replace("'", "''").replace("\\", "")
        return self.env.step(operation_reply(f"SELECT {len(str(action))} AS n, '{quoted}' AS t;"))


def db_env(log: list[dict[str, Any]], *, every_reply_queries: bool = False, max_turns: int = 3):
    """A recorded DB environment on SQLite (the shipped task set)."""
    env: gym.Env = LifelongDBEnv(max_turns=max_turns)
    if every_reply_queries:
        env = QueryEveryReply(env)
    return Recorder(env, log)
