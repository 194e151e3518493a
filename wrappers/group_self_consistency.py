"""`GroupSelfConsistency`: each action replaced by a vote over experience-primed inferences."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lifelong_gym.methods import GroupSelfConsistencyMethod


class GroupSelfConsistency(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """The paper's group self-consistency for a plain Gymnasium loop.

    `model` is a `lifelong_gym.agents.LanguageModel` (the one that produced the actions,
    or another). Each `step(action)` asks it once per group of remembered experiences,
    votes, and steps the environment with the winner; `info["self_consistency"]` records
    the vote. Solved sessions are remembered as the run goes.
    """

    def __init__(self, env: gym.Env[str, str], model: Any, groups: int = 2, per_group: int = 2):
        RecordConstructorArgs.__init__(self, groups=groups, per_group=per_group)
        gym.Wrapper.__init__(self, env)
        self.model = model
        self.method = GroupSelfConsistencyMethod(groups, per_group)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a task; its opening is what the groups' prompts are built on."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.method.start(self.env.unwrapped.session)
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Vote on `action`, step with the winner, remember the task when it ends solved."""
        env = self.env.unwrapped
        action = self.method.vote(self.model, env.normalize_action, env.session, action)
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self.method.finish(env.session)
        return obs, reward, terminated, truncated, info
