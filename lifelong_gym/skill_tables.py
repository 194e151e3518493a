"""An environment's skill taxonomy: its skills, their groups and their prerequisites.

Each environment declares its own (`lifelong_gym.envs.X.skills.TAXONOMY`) and its task
class carries it (`Task.taxonomy`), so the controlled stream orders read the tables of the
tasks they order and need not be told which environment a task set is of. A skill the
taxonomy does not name (a custom task file's own `skill_list`) is a group of its own and
has no prerequisites; a task of no environment (the plain `Task`) has an empty taxonomy.
tests/test_orders.py checks that each environment's taxonomy is the one its tasks and its
generator use.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SkillTaxonomy:
    """The skills of one environment, in `groups` and with `prerequisites`.

    `skills` in the order the environment lists them (its generator draws them in this
    order); `groups` are (name, skills) pairs in precedence order: a task with skills of
    several groups belongs to the last one it touches. `prerequisites` maps a skill to the
    skills it directly builds on: the parts a task with the skill is made of (acyclic).
    """

    skills: tuple[str, ...] = ()
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    prerequisites: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @functools.cached_property
    def _group_of(self) -> dict[str, tuple[int, str]]:
        return {
            skill: (rank, group)
            for rank, (group, skills) in enumerate(self.groups)
            for skill in skills
        }

    def group(self, skills: tuple[str, ...]) -> str:
        """The group of a task with these skills: the last group in precedence it touches.

        A skill of no group is its own group and outranks the known ones (by name, among
        themselves): a custom skill is what sets such a task apart. No skills: "none".
        """
        known = self._group_of
        ranked = [known.get(skill, (len(known), skill)) for skill in skills]
        return max(ranked, default=(-1, "none"))[1]

    def all_prerequisites(self, skill: str) -> frozenset[str]:
        """Every skill `skill` builds on, directly or through others."""
        direct = self.prerequisites.get(skill, ())
        return frozenset(direct).union(*(self.all_prerequisites(p) for p in direct))

    def depth(self, skill: str) -> int:
        """How many prerequisites deep a skill is: 0 for a skill that builds on none."""
        return max((self.depth(p) + 1 for p in self.prerequisites.get(skill, ())), default=0)
