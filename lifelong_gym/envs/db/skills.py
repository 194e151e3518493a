"""The DB environment's skill taxonomy (22 skills, their groups and prerequisites), and tagging
a statement with the skills its SQL uses."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from lifelong_gym.skill_tables import SkillTaxonomy

SKILLS: tuple[str, ...] = (
    "select",
    "insert",
    "update",
    "delete",
    "where_single_condition",
    "where_multiple_conditions",
    "where_nested_conditions",
    "order_by_single_column",
    "order_by_multiple_columns_same_direction",
    "order_by_multiple_columns_different_directions",
    "limit_only",
    "limit_and_offset",
    "group_by_single_column",
    "group_by_multiple_columns",
    "having_single_condition_with_aggregate",
    "having_multiple_conditions_with_aggregate",
    "having_aggregate_calculation",
    "column_alias",
    "table_alias",
    "subquery_single",
    "subquery_multiple",
    "subquery_nested",
)

#: The clause families in the order a query grows (where, order by, limit, grouping,
#: having, subqueries), and writes last: a write is another kind of task (its answer is the
#: table it leaves), so an UPDATE with a WHERE is a write, not a where task. Prerequisites
#: chain one condition, several, nested; one subquery, several, nested; one sort column,
#: several, in two directions; HAVING builds on grouping by one column (a HAVING needs a
#: GROUP BY, not one over several columns).
TAXONOMY = SkillTaxonomy(
    skills=SKILLS,
    groups=(
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
    prerequisites={
        "where_multiple_conditions": ("where_single_condition",),
        "where_nested_conditions": ("where_multiple_conditions",),
        "order_by_multiple_columns_same_direction": ("order_by_single_column",),
        "order_by_multiple_columns_different_directions": (
            "order_by_multiple_columns_same_direction",
        ),
        "limit_and_offset": ("limit_only",),
        "group_by_multiple_columns": ("group_by_single_column",),
        "having_single_condition_with_aggregate": ("group_by_single_column",),
        "having_multiple_conditions_with_aggregate": ("having_single_condition_with_aggregate",),
        "having_aggregate_calculation": ("having_single_condition_with_aggregate",),
        "subquery_single": ("where_single_condition",),
        "subquery_multiple": ("subquery_single",),
        "subquery_nested": ("subquery_multiple",),
    },
)  # fmt: skip

_STATEMENTS = {
    exp.Select: "select",
    exp.Insert: "insert",
    exp.Update: "update",
    exp.Delete: "delete",
}
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)


def skills_of(statements: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The skills the statements use, in the order of `SKILLS` (read from their syntax trees)."""
    found: set[str] = set()
    for sql in [statements] if isinstance(statements, str) else statements:
        found |= _statement_skills(sqlglot.parse_one(sql, read="mysql"))
    return tuple(skill for skill in SKILLS if skill in found)


def _statement_skills(tree: exp.Expression) -> set[str]:
    found = {name for kind, name in _STATEMENTS.items() if isinstance(tree, kind)}
    for where in tree.find_all(exp.Where):
        count, nested = _shape(where.this)
        found.add(
            "where_nested_conditions"
            if nested
            else "where_multiple_conditions"
            if count > 1
            else "where_single_condition"
        )
    for order in tree.find_all(exp.Order):
        keys = order.expressions
        if len(keys) == 1:
            found.add("order_by_single_column")
        elif len({bool(key.args.get("desc")) for key in keys}) == 1:
            found.add("order_by_multiple_columns_same_direction")
        else:
            found.add("order_by_multiple_columns_different_directions")
    for select in tree.find_all(exp.Select):
        limit = select.args.get("limit")
        if limit is not None:
            offset = select.args.get("offset") or limit.args.get("offset")
            found.add("limit_and_offset" if offset is not None else "limit_only")
    for group in tree.find_all(exp.Group):
        many = len(group.expressions) > 1
        found.add("group_by_multiple_columns" if many else "group_by_single_column")
    for having in tree.find_all(exp.Having):
        count, _ = _shape(having.this)
        found.add(
            "having_multiple_conditions_with_aggregate"
            if count > 1
            else "having_single_condition_with_aggregate"
        )
        if any(node.find(exp.AggFunc) for node in having.find_all(*_ARITHMETIC)):
            found.add("having_aggregate_calculation")
    if any(isinstance(alias.parent, exp.Select) for alias in tree.find_all(exp.Alias)):
        found.add("column_alias")
    if tree.find(exp.TableAlias) is not None:
        found.add("table_alias")
    found |= _subquery_skills(tree)
    return found


def _shape(condition: exp.Expression) -> tuple[int, bool]:
    """How many simple conditions a boolean expression joins, and whether AND/OR nest."""
    node = _unparen(condition)
    if isinstance(node, exp.Not) and isinstance(_unparen(node.this), exp.Connector):
        return _shape(node.this)[0], True
    if not isinstance(node, exp.Connector):
        return 1, False
    count, nested = 0, False
    for side in (node.this, node.expression):
        child = _unparen(side)
        nested |= isinstance(child, exp.Connector) and type(child) is not type(node)
        child_count, child_nested = _shape(child)
        count += child_count
        nested |= child_nested
    return count, nested


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _subquery_skills(tree: exp.Expression) -> set[str]:
    depths = []
    for select in tree.find_all(exp.Select):
        if select is tree:
            continue
        depth, parent = 0, select.parent
        while parent is not None:
            depth += isinstance(parent, exp.Select) or parent is tree
            parent = parent.parent
        depths.append(depth)
    if any(depth > 1 for depth in depths):
        return {"subquery_nested"} | ({"subquery_multiple"} if depths.count(1) > 1 else set())
    if depths.count(1) > 1:
        return {"subquery_multiple"}
    return {"subquery_single"} if depths else set()
