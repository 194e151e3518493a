"""`OnlineTraining`: the policy's weights updated every N tasks of a plain Gymnasium loop."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lifelong_gym.methods.online_training import DETAILS, Learner, OnlineTrainingMethod

from .group_self_consistency import GroupSelfConsistency

GRPO_NEEDS_GROUPS = (
    "OnlineTraining(mode='grpo') learns from the reply groups self-consistency samples: "
    "wrap a GroupSelfConsistency, OnlineTraining(GroupSelfConsistency(env, model), learner, "
    "mode='grpo')"
)


class OnlineTraining(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Online training for a plain Gymnasium loop.

    `learner` owns the weights: `lifelong_gym.training.online.LoraLearner(model)` puts
    LoRA adapters on the model that acts (a `TransformersModel` or `TransformersPolicy`).
    Every `every` tasks the learner makes `steps` steps, and `info["online_training"]`
    holds the update's record. `mode` "rft": when a task ends solved its conversation is
    kept, and each step takes `batch` conversations from the last `buffer`. `mode` "grpo":
    the reply groups of a `GroupSelfConsistency` this wrapper wraps (with the model that
    acts) are kept when their rewards differ, and each step goes over all of them.
    `learner.save(path)` and `learner.load(path)` keep the weights;
    `wrapper.method.state()` the rest.

    Example (a stand-in learner that takes its steps without weights):
        >>> import gymnasium as gym
        >>> import lifelong_gym
        >>> from lifelong_gym.agents import OracleAgent
        >>> from lifelong_gym.wrappers import OnlineTraining
        >>> class NoWeights:
        ...     def sft(self, batches):
        ...         return {"loss": 0.0}
        ...     def grpo(self, conversations, rewards, groups, steps, batch):
        ...         return {"loss": 0.0}
        >>> env = OnlineTraining(gym.make("LifelongDB-v0"), NoWeights(), every=1, batch=1)
        >>> oracle = OracleAgent(env.unwrapped.tasks)
        >>> obs, info = env.reset(options={"task_index": 0})
        >>> terminated = truncated = False
        >>> while not (terminated or truncated):
        ...     reply = oracle.act(env.unwrapped.session)
        ...     obs, reward, terminated, truncated, info = env.step(reply)
        >>> info["online_training"]
        {'update': 1, 'mode': 'rft', 'loss': 0.0}
        >>> env.close()
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
        mode: str = "rft",
    ):
        RecordConstructorArgs.__init__(
            self, every=every, steps=steps, batch=batch, buffer=buffer, seed=seed, mode=mode
        )
        gym.Wrapper.__init__(self, env)
        self.method = OnlineTrainingMethod(mode, every, steps, batch, buffer, seed)
        if mode == "grpo" and not wraps(env, GroupSelfConsistency):
            raise ValueError(GRPO_NEEDS_GROUPS)
        self.method.bind(learner)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the task; when it ends, keep what it teaches and update when one is due."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            session = self.env.unwrapped.session
            self.method.finish(session)
            if DETAILS in session.details:
                info = {**info, DETAILS: dict(session.details[DETAILS])}
        return obs, reward, terminated, truncated, info


def wraps(env: gym.Env, kind: type[gym.Wrapper]) -> bool:
    """Whether a wrapper of `kind` is in `env`'s stack."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, kind):
            return True
        env = env.env
    return False
