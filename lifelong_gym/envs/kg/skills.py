"""The KG environment's skill taxonomy: a task's skills are the actions its reference uses."""

from __future__ import annotations

from lifelong_gym.envs.kg.sexpr import ACTIONS
from lifelong_gym.skill_tables import SkillTaxonomy

#: Plain traversal, then the operators in the order they close a question (intersection,
#: count, superlative). An action builds on the traversal that gives it a variable,
#: superlatives on reading attributes.
TAXONOMY = SkillTaxonomy(
    skills=ACTIONS,
    groups=(
        ("traversal", ("get_relations", "get_neighbors")),
        ("intersection", ("intersection",)),
        ("count", ("count",)),
        ("superlative", ("get_attributes", "argmax", "argmin")),
    ),
    prerequisites={
        "get_neighbors": ("get_relations",),
        "intersection": ("get_neighbors",),
        "count": ("get_neighbors",),
        "get_attributes": ("get_neighbors",),
        "argmax": ("get_attributes",),
        "argmin": ("get_attributes",),
    },
)
SKILLS = TAXONOMY.skills
