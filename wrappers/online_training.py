"""`OnlineTraining`: the policy's weights updated every N tasks of a plain Gymnasium loop."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lifelong_gym.methods.online_training import DETAILS, Learner, OnlineTrainingMethod


class OnlineTraining(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Online training (rejection-sampling fine-tuning) for a plain Gymnasium loop.

    `learner` owns the weights: `lifelong_gym.training.online.LoraLearner(model)` puts
    LoRA adapters on the model that acts (a `TransformersModel` or `TransformersPolicy`).
    When a task ends solved its conversation is kept; every `every` tasks the learner makes
    `steps` steps of `batch` conversations from the last `buffer`, and
    `info["online_training"]` holds the update's record. `learner.save(path)` and
    `learner.load(path)` keep the weights; `wrapper.method.state()` the rest.
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        learner: Learner,
        every: int = 4,
        steps: int = 4,
        batch: int = 4,
        buffer: int = 64,
        seed: int = 0,
    ):
        RecordConstructorArgs.__init__(
            self, every=every, steps=steps, batch=batch, buffer=buffer, seed=seed
        )
        gym.Wrapper.__init__(self, env)
        self.method = OnlineTrainingMethod("rft", every, steps, batch, buffer, seed)
        self.method.bind(learner)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the task; when it ends, keep it if solved and update when one is due."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            session = self.env.unwrapped.session
            self.method.finish(session)
            if DETAILS in session.details:
                info = {**info, DETAILS: dict(session.details[DETAILS])}
        return obs, reward, terminated, truncated, info
