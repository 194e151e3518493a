"""Conditions for WHERE clauses and subqueries: SQL and the words that say the same."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .domains import CATEGORY, DAY, INTEGER, KEY, MONEY, NAME, Column, Domain

Ref = Callable[[str], str]


@dataclass(frozen=True)
class Cond:
    """A condition: its SQL, its wording, and how many subqueries deep it reaches."""

    sql: str
    text: str
    depth: int = 0


def literal(column: Column, value: Any) -> str:
    """A value as an SQL literal for its column."""
    if column.role == MONEY:
        return f"{value:.2f}"
    if column.role in (INTEGER, KEY):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def spoken(column: Column, value: Any) -> str:
    """A value as the instruction states it."""
    if column.role in (CATEGORY, NAME):
        return f"'{value}'"
    return literal(column, value).strip("'")


def no_alias(name: str) -> str:
    """A column referred to by its bare name."""
    return name


_COMPARE = {
    ">": ("{c} is greater than {v}", "{c} exceeds {v}", "{c} is above {v}"),
    "<": ("{c} is less than {v}", "{c} is below {v}", "{c} is under {v}"),
    ">=": ("{c} is at least {v}", "{c} is {v} or more"),
    "<=": ("{c} is at most {v}", "{c} is {v} or less"),
}
_DATES = {
    ">": ("{c} is after {v}", "{c} falls later than {v}"),
    "<": ("{c} is before {v}", "{c} falls earlier than {v}"),
    ">=": ("{c} is on or after {v}",),
    "<=": ("{c} is on or before {v}",),
}


class Conditions:
    """Makes conditions on one domain's table that hold for some rows but not for all."""

    def __init__(self, rng: random.Random, domain: Domain, records: list[dict[str, Any]]):
        self.rng = rng
        self.domain = domain
        self.records = records

    def values(self, column: Column) -> list[Any]:
        """The column's values, sorted."""
        return sorted(record[column.name] for record in self.records)

    def pick(self, column: Column) -> Any:
        """A value of the column from the middle half of its range."""
        values = self.values(column)
        low, high = len(values) // 4, max(len(values) // 4, (3 * len(values)) // 4 - 1)
        return values[self.rng.randint(low, high)]

    def simple(
        self, ref: Ref, avoid: frozenset[str] | set[str] = frozenset()
    ) -> tuple[Cond, Column]:
        """One condition on a column not in `avoid`."""
        rng = self.rng
        choices = [c for c in self.domain.columns if c.role != "key" and c.name not in avoid]
        column = rng.choice(choices)
        name = ref(column.name)
        if column.role == CATEGORY:
            present = sorted({r[column.name] for r in self.records})
            value = rng.choice(present)
            form = rng.choice(("=", "=", "<>", "in") if len(present) > 2 else ("=", "<>"))
            if form == "in":
                pair = sorted(rng.sample(present, 2))
                sql = f"{name} IN ({', '.join(literal(column, v) for v in pair)})"
                words = f"{column.name} is {spoken(column, pair[0])} or {spoken(column, pair[1])}"
                return Cond(sql, words), column
            words = "is" if form == "=" else "is not"
            return (
                Cond(
                    f"{name} {form} {literal(column, value)}",
                    f"{column.name} {words} {spoken(column, value)}",
                ),
                column,
            )
        if column.role == NAME:
            letter = rng.choice(sorted({r[column.name][0] for r in self.records}))
            return (
                Cond(f"{name} LIKE '{letter}%'", f"{column.name} starts with the letter {letter}"),
                column,
            )
        if rng.random() < 0.2:
            low, high = sorted(rng.sample(self.values(column)[1:-1] or self.values(column), 2))
            return (
                Cond(
                    f"{name} BETWEEN {literal(column, low)} AND {literal(column, high)}",
                    f"{column.name} is between {spoken(column, low)} and "
                    f"{spoken(column, high)} (both included)",
                ),
                column,
            )
        op = rng.choice((">", "<", ">=", "<="))
        value = self.pick(column)
        template = rng.choice((_DATES if column.role == DAY else _COMPARE)[op])
        return (
            Cond(
                f"{name} {op} {literal(column, value)}",
                template.format(c=column.name, v=spoken(column, value)),
            ),
            column,
        )

    def combine(self, ref: Ref, shape: str) -> Cond:
        """A WHERE condition of the shape `single`, `multiple` or `nested`."""
        count = {"single": 1, "multiple": self.rng.choice((2, 2, 3)), "nested": 3}[shape]
        parts: list[Cond] = []
        used: set[str] = set()
        for _ in range(count):
            cond, column = self.simple(ref, used)
            used.add(column.name)
            parts.append(cond)
        if shape == "single":
            return parts[0]
        if shape == "multiple":
            joiner = self.rng.choice(("AND", "AND", "OR"))
            words = ", ".join(p.text for p in parts[:-1]) + f" {joiner.lower()} {parts[-1].text}"
            if joiner == "OR":
                words += " (at least one of these)"
            return Cond(f" {joiner} ".join(p.sql for p in parts), words)
        a, b, c = parts
        if self.rng.random() < 0.5:
            return Cond(
                f"({a.sql} AND {b.sql}) OR {c.sql}",
                f"either both {a.text} and {b.text}, or {c.text}",
            )
        return Cond(
            f"{a.sql} AND ({b.sql} OR {c.sql})",
            f"{a.text}, and also either {b.text} or {c.text}",
        )
