"""Which training tasks a GRPO step plays: the ones whose groups are likely to be mixed.

A group whose episodes all fail, or all succeed, has advantage 0 and teaches nothing; with
a success rate p a group of g episodes is mixed with probability 1 - p^g - (1-p)^g, which
is largest near p = 1/2. `SkillSampler` estimates each skill's sampled success from the
rollouts it has seen (a Beta posterior per skill), gives a task the mean of its skills'
estimates, and draws tasks without replacement with weight p(1-p) plus a floor, so that
no skill is starved and the estimates of unplayed skills keep being refreshed. It is the
filter of online difficulty filtering and of DAPO's dynamic sampling moved before the
rollouts, where it costs nothing, instead of after them, where it costs the rollouts.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from ..tasks import Task


class SkillSampler:
    """Draws task positions of `tasks`, weighting those of middling estimated success."""

    def __init__(
        self,
        tasks: Sequence[Task],
        *,
        seed: int = 0,
        floor: float = 0.02,
        prior: tuple[float, float] = (1.0, 1.0),
    ) -> None:
        if not tasks:
            raise ValueError("SkillSampler needs at least one task")
        if floor <= 0:
            raise ValueError(f"floor must be > 0, not {floor}")
        self._skills = [task.skills or ("",) for task in tasks]
        self._position = {task.index: i for i, task in enumerate(tasks)}
        self._floor = floor
        self._prior = prior
        self._counts: dict[str, list[float]] = {}  # skill -> [successes, failures]
        self._rng = random.Random(seed)

    def skill_success(self, skill: str) -> float:
        """The posterior mean of `skill`'s success over the episodes observed so far."""
        successes, failures = self._counts.get(skill, (0.0, 0.0))
        alpha, beta = self._prior
        return (alpha + successes) / (alpha + beta + successes + failures)

    def task_success(self, position: int) -> float:
        """A task's estimated success: the mean of its skills' estimates."""
        skills = self._skills[position]
        return sum(map(self.skill_success, skills)) / len(skills)

    def weight(self, position: int) -> float:
        p = self.task_success(position)
        return p * (1 - p) + self._floor

    def sample(self, count: int) -> list[int]:
        """`count` distinct task positions, drawn with probability in proportion to their
        weights (Efraimidis-Spirakis keys: u^(1/w), the largest `count` kept)."""
        count = min(count, len(self._skills))
        keys = [(self._rng.random() ** (1 / self.weight(i)), i) for i in range(len(self._skills))]
        return [i for _, i in sorted(keys, reverse=True)[:count]]

    def observe(self, task_index: int, rewards: Iterable[float]) -> None:
        """Count a task's episodes: a reward of 1 or more is a success, anything else not."""
        solved = [float(reward) >= 1.0 for reward in rewards]
        for skill in self._skills[self._position[task_index]]:
            counts = self._counts.setdefault(skill, [0.0, 0.0])
            counts[0] += sum(solved)
            counts[1] += len(solved) - sum(solved)
