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

    Example (a stand-in model that replies as the oracle does, so every group agrees):
        >>> import gymnasium as gym
        >>> import lifelong_gym
        >>> from lifelong_gym.agents import LanguageModel, OracleAgent
        >>> from lifelong_gym.wrappers import GroupSelfConsistency
        >>> class Copycat(LanguageModel):
        ...     def generate(self, batch, tools=None):
        ...         return [oracle.act(env.unwrapped.session) for _ in batch]
        >>> env = GroupSelfConsistency(gym.make("LifelongDB-v0"), Copycat(), groups=1)
        >>> oracle = OracleAgent(env.unwrapped.tasks)
        >>> for index in (0, 1):  # task 1 is voted on with the experience of task 0
        ...     obs, info = env.reset(options={"task_index": index})
        ...     terminated = truncated = False
        ...     while not (terminated or truncated):
        ...         reply = oracle.act(env.unwrapped.session)
        ...         obs, reward, terminated, truncated, info = env.step(reply)
        >>> [vote["chosen_by"] for vote in info["self_consistency"]], reward
        (['majority', 'majority'], 1.0)
        >>> env.close()
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
