"""What the controlled stream orders know of skills: their groups and their prerequisites.

The tables are per environment, but the three environments' skill names are disjoint (SQL
clauses, shell commands, graph actions), so one table of each kind serves all three, and
the orders need not be told which environment a task set is of. A skill none of them
names (a custom task file's own `skill_list`) is a group of its own and has no
prerequisites. tests/test_orders.py checks that the tables cover every environment's
skills.
"""

from __future__ import annotations

import functools

#: Each environment's skill groups in precedence order: a task with skills of several
#: groups belongs to the last one it touches. For DB the clause families come in the order
#: a query grows (where, order by, limit, grouping, having, subqueries), and writes last:
#: a write is another kind of task (its answer is the table it leaves), so an UPDATE with a
#: WHERE is a write, not a where task. For OS, files come before the text tools that read
#: them, permissions after, and user and group accounts last; for KG, plain traversal,
#: then the operators in the order they close a question (intersection, count, superlative).
SKILL_GROUPS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "db": (
        ("select", ("select", "column_alias", "table_alias")),
        ("where", ("where_single_condition", "where_multiple_conditions",
                   "where_nested_conditions")),
        ("order_by", ("order_by_single_column", "order_by_multiple_columns_same_direction",
                      "order_by_multiple_columns_different_directions")),
        ("limit", ("limit_only", "limit_and_offset")),
        ("group_by", ("group_by_single_column", "group_by_multiple_columns")),
        ("having", ("having_single_condition_with_aggregate",
                    "having_multiple_conditions_with_aggregate", "having_aggregate_calculation")),
        ("subquery", ("subquery_single", "subquery_multiple", "subquery_nested")),
        ("write", ("insert", "update", "delete")),
    ),
    "os": (
        ("shell", ("echo", "exit", "sleep")),
        ("files", ("cat", "cd", "cp", "find", "ln", "ls", "mkdir", "mv", "rm", "tee", "touch")),
        ("text", ("awk", "grep", "sed", "vi", "wc")),
        ("permissions", ("chmod", "chown", "chgrp")),
        ("accounts", ("useradd", "usermod", "chage", "chsh", "addgroup", "groupadd", "gpasswd")),
    ),
    "kg": (
        ("traversal", ("get_relations", "get_neighbors")),
        ("intersection", ("intersection",)),
        ("count", ("count",)),
        ("superlative", ("get_attributes", "argmax", "argmin")),
    ),
}  # fmt: skip

#: A skill's direct prerequisites: the parts a task with the skill is made of. Chains
#: follow the issue's examples (one condition, several, nested; one subquery, several,
#: nested; one sort column, several, in two directions); HAVING builds on grouping by one
#: column (a HAVING needs a GROUP BY, not one over several columns). OS commands build on
#: what makes their object (a file to copy, a user to modify); KG actions on the
#: traversal that gives them a variable, superlatives on reading attributes.
PREREQUISITES: dict[str, tuple[str, ...]] = {
    # db
    "where_multiple_conditions": ("where_single_condition",),
    "where_nested_conditions": ("where_multiple_conditions",),
    "order_by_multiple_columns_same_direction": ("order_by_single_column",),
    "order_by_multiple_columns_different_directions": ("order_by_multiple_columns_same_direction",),
    "limit_and_offset": ("limit_only",),
    "group_by_multiple_columns": ("group_by_single_column",),
    "having_single_condition_with_aggregate": ("group_by_single_column",),
    "having_multiple_conditions_with_aggregate": ("having_single_condition_with_aggregate",),
    "having_aggregate_calculation": ("having_single_condition_with_aggregate",),
    "subquery_single": ("where_single_condition",),
    "subquery_multiple": ("subquery_single",),
    "subquery_nested": ("subquery_multiple",),
    # os
    "tee": ("echo",),
    "cd": ("mkdir",),
    "cp": ("touch",),
    "mv": ("touch",),
    "rm": ("touch",),
    "ln": ("touch",),
    "find": ("ls",),
    "grep": ("cat",),
    "wc": ("cat",),
    "awk": ("grep",),
    "sed": ("grep",),
    "chmod": ("touch",),
    "chown": ("touch",),
    "chgrp": ("chown",),
    "usermod": ("useradd",),
    "chage": ("useradd",),
    "chsh": ("useradd",),
    "gpasswd": ("groupadd", "useradd"),
    # kg
    "get_neighbors": ("get_relations",),
    "intersection": ("get_neighbors",),
    "count": ("get_neighbors",),
    "get_attributes": ("get_neighbors",),
    "argmax": ("get_attributes",),
    "argmin": ("get_attributes",),
}

_GROUP_OF = {
    skill: (rank, group)
    for table in SKILL_GROUPS.values()
    for rank, (group, skills) in enumerate(table)
    for skill in skills
}


def skill_group(skills: tuple[str, ...]) -> str:
    """The group of a task with these skills: the last group in precedence it touches.

    A skill of no table is its own group and outranks the known ones (by name, among
    themselves): a custom skill is what sets such a task apart. No skills: "none".
    """
    ranked = [_GROUP_OF.get(skill, (len(_GROUP_OF), skill)) for skill in skills]
    return max(ranked, default=(-1, "none"))[1]


@functools.cache
def prerequisites(skill: str) -> frozenset[str]:
    """Every skill `skill` builds on, directly or through others (the table is acyclic)."""
    direct = PREREQUISITES.get(skill, ())
    return frozenset(direct).union(*(prerequisites(p) for p in direct))


def depth(skill: str) -> int:
    """How many prerequisites deep a skill is: 0 for a skill that builds on none."""
    return max((depth(p) + 1 for p in PREREQUISITES.get(skill, ())), default=0)
