"""Held-out evaluation of a policy: success with its 95% interval, valid actions, per skill.

Episodes are played by `collect_episodes` on copies of the standard environment (its
prompt, its turn limit, its binary reward), one episode per chosen task, so the figure is
the benchmark's success rate on those tasks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from lifelong_gym.decoding.policy import TransformersPolicy
from lifelong_gym.metrics import wilson_interval
from lifelong_gym.registration import checked_env_kwargs

from .episode import TokenEpisode
from .rollout import collect_episodes


@dataclass
class HeldOutResult:
    """The episodes of an evaluation, and the figures read from them."""

    episodes: list[TokenEpisode]

    @property
    def solved(self) -> int:
        """Episodes whose task was solved (reward 1)."""
        return sum(1 for e in self.episodes if e.reward >= 1.0)

    @property
    def success_rate(self) -> float:
        """The share of episodes solved."""
        return self.solved / len(self.episodes) if self.episodes else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the success rate."""
        return wilson_interval(self.solved, len(self.episodes))

    @property
    def valid_action_rate(self) -> float:
        """The share of episodes in which no reply broke the action format."""
        valid = sum(1 for e in self.episodes if e.status != "agent_validation_failed")
        return valid / len(self.episodes) if self.episodes else 0.0

    def per_skill(self) -> dict[str, tuple[int, int]]:
        """Skill -> (solved, episodes) over the episodes whose task exercises it."""
        count: Counter[str] = Counter()
        solved: Counter[str] = Counter()
        for episode in self.episodes:
            for skill in dict.fromkeys(episode.skills):
                count[skill] += 1
                solved[skill] += episode.reward >= 1.0
        return {skill: (solved[skill], n) for skill, n in sorted(count.items())}

    def statuses(self) -> dict[str, int]:
        """How many episodes ended with each status."""
        return dict(sorted(Counter(e.status for e in self.episodes).items()))

    def summary(self) -> str:
        """One line: success with its interval, valid actions, statuses."""
        low, high = self.interval
        return (
            f"success {self.success_rate:.3f} ({self.solved}/{len(self.episodes)}, "
            f"95% CI {low:.3f}-{high:.3f})  valid actions {self.valid_action_rate:.3f}  "
            f"statuses {self.statuses()}"
        )


def evaluate_policy(
    policy: TransformersPolicy,
    env_id: str = "LifelongDB-v0",
    *,
    task_indices: Sequence[int] | None = None,
    episodes: int | None = None,
    num_envs: int = 8,
    **env_kwargs: Any,
) -> HeldOutResult:
    """Play one episode per task of `gym.make(env_id, **env_kwargs)` and score them.

    `task_indices` picks the tasks (default: the set's order, the first `episodes` of it).
    The policy's own sampling settings are used (`temperature=0` for greedy figures).
    """
    kwargs = checked_env_kwargs(env_id, env_kwargs)
    first = gym.make(env_id, **kwargs)
    order = list(task_indices) if task_indices is not None else list(first.unwrapped.tasks.order)
    chosen = order[:episodes] if episodes else order
    copies = [first] + [gym.make(env_id, **kwargs) for _ in range(min(num_envs, len(chosen)) - 1)]
    envs = gym.vector.SyncVectorEnv(
        [lambda env=env: env for env in copies], autoreset_mode=AutoresetMode.DISABLED
    )
    try:
        played = collect_episodes(envs, policy, len(chosen), task_indices=chosen)
    finally:
        envs.close()
    return HeldOutResult(played)
