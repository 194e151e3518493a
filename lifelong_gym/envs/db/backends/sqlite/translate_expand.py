"""MySQL constructs SQLite lacks, spelled out in ones it has, before the rewrite for SQLite.

- `x > ALL (subquery)`, `x = ANY (...)`, `SOME`: with SQL's three-valued answer (true on
  an empty ALL, NULL when a NULL leaves it open), as one aggregate over the subquery;
  `= ANY` is `IN` and `<> ALL` is `NOT IN`, which answer the same way.
- `GROUP BY ... WITH ROLLUP`: one grouping per level, the rolled-up keys NULL outside
  aggregates (in the select list and HAVING, as MySQL does), put together in MariaDB's
  order: by the keys, each subtotal after its group, the grand total last.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..error_replies import mysql_error, unknown_column


class NotServed(SqlglotError):
    """A MySQL statement the embedded back-end cannot answer faithfully."""


class Refused(SqlglotError):
    """A statement MySQL itself refuses (the message is MySQL's reply, `../error_replies.py`)."""


# the words of the constructs spelled out here (CUBE, to be refused in MySQL's words)
EXPANDED_WORDS = ("ROLLUP", "CUBE", "ALL", "ANY", "SOME")
_ORDERED = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)
_ROLLUP_ORDER = "Incorrect usage of CUBE/ROLLUP and ORDER BY"
_GENERAL = exp.Var(this="utf8mb4_general_ci")  # MySQL's default collation


def expand(tree: exp.Expression, columns: dict[str, str]) -> exp.Expression:
    """`tree` with its quantified comparisons and rollups spelled out (`columns`: the
    declared types of the tables' columns by lower-case name)."""
    budget = _Budget()
    quantified = list(tree.find_all(exp.All, exp.Any))
    for number, node in enumerate(reversed(quantified)):  # inner ones first
        comparison = node.parent
        if not isinstance(comparison, _ORDERED) or comparison.expression is not node:
            raise NotServed("ALL / ANY / SOME must follow a comparison operator")
        as_in = type(comparison) is (exp.NEQ if isinstance(node, exp.All) else exp.EQ)  # IN
        budget.spend(node, copies=0 if as_in else 4)
        tree = _swap(tree, comparison, _quantified(comparison, node, f"lgym_q{number}"))
    for select in reversed(list(tree.find_all(exp.Select))):  # inner ones first
        group = select.args.get("group")
        if group is not None and group.args.get("cube"):
            raise Refused(mysql_error(1235, "This version of MariaDB doesn't yet support 'CUBE'"))
        if group is not None and group.args.get("rollup"):
            budget.spend(select, copies=len(group.expressions) + 1)
            tree = _swap(tree, select, _rollup(select, columns))
    return tree


class _Budget:
    """The nodes the expansions may copy for one statement: each expansion copies what it
    expands (ALL/ANY up to 4 times, a rollup once a level), so nesting them would grow the
    statement exponentially; beyond the budget the statement is not served."""

    NODES = 20_000

    def __init__(self) -> None:
        self.left = self.NODES

    def spend(self, node: exp.Expression, copies: int) -> None:
        self.left -= copies * sum(1 for _ in node.walk())
        if self.left < 0:
            raise NotServed(
                "this statement nests ALL / ANY / WITH ROLLUP too deeply for the embedded back-end"
            )


def _swap(tree: exp.Expression, old: exp.Expression, new: exp.Expression) -> exp.Expression:
    if old is tree:
        return new
    old.replace(new)
    return tree


def _quantified(comparison: exp.Binary, node: exp.All | exp.Any, name: str) -> exp.Expression:
    query = node.this.this if isinstance(node.this, exp.Subquery) else node.this
    if not isinstance(query, exp.Query):
        raise Refused("You have an error in your SQL syntax near ALL / ANY: a subquery must follow")
    if query.args.get("limit"):
        raise Refused(
            mysql_error(
                1235,
                "This version of MariaDB doesn't yet support 'LIMIT & IN/ALL/ANY/SOME subquery'",
            )
        )
    every = isinstance(node, exp.All)
    value = comparison.this
    if isinstance(comparison, exp.EQ) and not every:
        return exp.In(this=value, query=exp.Subquery(this=query))
    if isinstance(comparison, exp.NEQ) and every:
        return exp.Not(this=exp.In(this=value, query=exp.Subquery(this=query)))
    first = query
    while isinstance(first, exp.SetOperation):
        first = first.this
    if not isinstance(first, exp.Select) or len(first.expressions) != 1:
        raise Refused(mysql_error(1241, "Operand should contain 1 column(s)"))
    if isinstance(value, exp.Tuple) or isinstance(first.expressions[0], exp.Star):
        raise NotServed("a row compared with ALL / ANY is not supported by the embedded back-end")
    shown = first.expressions[0]
    column = shown.alias if isinstance(shown, exp.Alias) else "lgym_value"
    if not isinstance(shown, exp.Alias):
        shown.replace(exp.alias_(shown, column))

    def over(aggregate: exp.Expression) -> exp.Subquery:
        """`aggregate` over the subquery's rows; the compared value stays outside, where it
        may be an aggregate of the outer query (`HAVING SUM(x) >= ALL (...)`)."""
        rows = exp.Subquery(this=query.copy(), alias=exp.TableAlias(this=exp.to_identifier(name)))
        return exp.Subquery(this=exp.Select(expressions=[aggregate]).from_(rows))

    def extreme(aggregate: type[exp.Min] | type[exp.Max]) -> exp.Expression:
        # a scalar subquery loses its column's collation in SQLite: text compares as MySQL's
        return exp.Collate(this=over(aggregate(this=values.copy())), expression=_GENERAL)

    values = exp.column(column, name)
    kind = type(comparison)
    if kind in (exp.EQ, exp.NEQ):  # = ALL: equal to the least and the greatest; <> ANY: not
        joined = exp.and_ if every else exp.or_
        decided = joined(
            kind(this=value.copy(), expression=extreme(exp.Min)),
            kind(this=value, expression=extreme(exp.Max)),
        )
    else:  # as MySQL rewrites them: x > ALL (...) is x > MAX(...), x > ANY (...) x > MIN(...)
        upward = kind in (exp.GT, exp.GTE)
        bound = exp.Max if upward == every else exp.Min
        decided = kind(this=value, expression=extreme(bound))
    # ALL is true of no rows, false if the bound fails, else NULL if a row is NULL;
    # ANY is false of no rows, true if the bound holds, else NULL if a row is NULL
    sure, other = (0, 1) if every else (1, 0)
    nulls = exp.Sub(this=exp.Count(this=exp.Star()), expression=exp.Count(this=values.copy()))
    unsure = exp.Case(
        ifs=[exp.If(this=exp.GT(this=over(nulls), expression=_number(0)), true=exp.Null())],
        default=_number(other),
    )
    settled = exp.Case(
        this=decided,
        ifs=[
            exp.If(this=_number(sure), true=_number(sure)),
            exp.If(this=_number(other), true=unsure),
        ],
    )
    empty = exp.EQ(this=over(exp.Count(this=exp.Star())), expression=_number(0))
    return exp.Case(ifs=[exp.If(this=empty, true=_number(other))], default=settled)


def _number(value: int) -> exp.Literal:
    return exp.Literal.number(value)


def _rollup(select: exp.Select, columns: dict[str, str]) -> exp.Select:
    """One SELECT ... GROUP BY ... WITH ROLLUP as a union of its levels, in MariaDB's order."""
    if select.args.get("order"):
        raise Refused(mysql_error(1221, _ROLLUP_ORDER))
    if select.args.get("distinct") or any(e.is_star for e in select.expressions):
        raise NotServed("WITH ROLLUP with DISTINCT or * is not supported by the embedded back-end")
    shown = [e.unalias() for e in select.expressions]
    names = [e.alias_or_name or e.sql("mysql") for e in select.expressions]
    keys = [_key(key, select, columns) for key in select.args["group"].expressions]
    limit, offset = select.args.get("limit"), select.args.get("offset")
    levels = []
    for level in range(len(keys), -1, -1):
        rolled = keys[level:]
        part = select.copy()
        for argument in ("group", "limit", "offset"):
            part.set(argument, None)
        hidden = []
        for position, key in enumerate(keys):
            hidden.append(exp.alias_(_number(int(position >= level)), f"lgym_g{position}"))
            # ordered as MySQL orders text (numbers are unaffected by a collation)
            value = (
                exp.Null()
                if position >= level
                else exp.Collate(this=key.copy(), expression=_GENERAL)
            )
            hidden.append(exp.alias_(value, f"lgym_k{position}"))
        part.set(
            "expressions",
            [exp.alias_(_nulled(e.copy(), rolled), f"lgym_c{j}") for j, e in enumerate(shown)]
            + hidden,
        )
        # the grand total groups by a constant: of no rows it is no row, as in MySQL
        grouped = [key.copy() for key in keys[:level]] or [exp.Null()]
        part.set("group", exp.Group(expressions=grouped))
        having = part.args.get("having")
        if having is not None:
            having.set("this", _nulled(having.this, rolled))
        levels.append(part)
    union: exp.Query = levels[0]
    for part in levels[1:]:
        union = exp.union(union, part, distinct=False)
    outer = exp.Select(
        expressions=[
            exp.alias_(exp.column(f"lgym_c{j}"), name, quoted=True) for j, name in enumerate(names)
        ]
    ).from_(exp.Subquery(this=union, alias=exp.TableAlias(this=exp.to_identifier("lgym_rollup"))))
    order = [exp.column(f"lgym_{kind}{p}") for p in range(len(keys)) for kind in "gk"]
    outer = outer.order_by(*order, copy=False)
    outer.set("limit", limit)
    outer.set("offset", offset)
    return outer


def _key(key: exp.Expression, select: exp.Select, columns: dict[str, str]) -> exp.Expression:
    """A GROUP BY key as an expression: a position or a select alias resolved (MySQL looks
    a name up among the tables' columns first, then among the aliases)."""
    if isinstance(key, exp.Literal) and key.is_int:
        position = int(key.name)
        if not 1 <= position <= len(select.expressions):
            raise Refused(unknown_column(str(position), "GROUP BY"))
        return select.expressions[position - 1].unalias()
    if isinstance(key, exp.Column) and not key.table and key.name.lower() not in columns:
        for shown in select.expressions:
            if isinstance(shown, exp.Alias) and shown.alias.lower() == key.name.lower():
                return shown.this
    return key


def _nulled(node: exp.Expression, rolled: list[exp.Expression]) -> exp.Expression:
    """`node` with the rolled-up keys NULL wherever they are not inside an aggregate."""
    if isinstance(node, exp.AggFunc) or not rolled:
        return node
    if any(_same(node, key) for key in rolled):
        return exp.Null()
    for child in list(node.iter_expressions()):
        new = _nulled(child, rolled)
        if new is not child:
            child.replace(new)
    return node


def _same(node: exp.Expression, key: exp.Expression) -> bool:
    if isinstance(node, exp.Column) and isinstance(key, exp.Column):
        tables = {node.table.lower(), key.table.lower()} - {""}
        return node.name.lower() == key.name.lower() and len(tables) <= 1
    return node == key
