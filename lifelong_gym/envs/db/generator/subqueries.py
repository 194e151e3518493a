"""Conditions that hold subqueries: one level, or one nested inside another."""

from __future__ import annotations

from .conditions import Cond, Conditions, Ref, literal, spoken
from .domains import CATEGORY, Column


class Subqueries:
    """Subquery conditions over one domain's table (the subqueries read the same table)."""

    def __init__(self, conditions: Conditions):
        self.c = conditions
        self.rng = conditions.rng
        self.domain = conditions.domain

    def _numeric(self, unique: bool = False) -> Column:
        columns = [c for c in self.domain.columns if c.numeric and (c.unique or not unique)]
        return self.rng.choice(columns)

    def _category(self) -> Column:
        return self.rng.choice(self.domain.column(CATEGORY))

    def single(self, ref: Ref, correlated: bool = False) -> Cond:
        """A condition with one subquery, one level deep."""
        table, plural = self.domain.table, self.domain.plural
        num = self._numeric()
        kind = "correlated" if correlated else self.rng.choice(("average", "extreme", "member"))
        if kind == "average":
            return self._versus_average(ref, num, "", f"all {plural}", 1)
        cat = self._category()
        if kind == "correlated":
            scope = f" WHERE {cat.name} = {ref(cat.name)}"
            return self._versus_average(
                ref, num, scope, f"the {plural} with the same {cat.name}", 1
            )
        if kind == "extreme":
            value = self.rng.choice(sorted({r[cat.name] for r in self.c.records}))
            op, agg, word = self.rng.choice(
                ((">", "MAX", "higher than every"), ("<", "MIN", "lower than every"))
            )
            return Cond(
                f"{ref(num.name)} {op} (SELECT {agg}({num.name}) FROM {table} "
                f"WHERE {cat.name} = {literal(cat, value)})",
                f"{num.name} is {word} {num.name} found among the {plural} whose "
                f"{cat.name} is {spoken(cat, value)}",
                1,
            )
        value = self.c.pick(num)
        return Cond(
            f"{ref(cat.name)} IN (SELECT {cat.name} FROM {table} "
            f"WHERE {num.name} > {literal(num, value)})",
            f"{cat.name} is one that at least one {self.domain.singular} with {num.name} "
            f"greater than {spoken(num, value)} also has",
            1,
        )

    def nested(self, ref: Ref) -> Cond:
        """A condition whose subquery holds another subquery."""
        table, plural = self.domain.table, self.domain.plural
        if self.rng.random() < 0.5:
            cat, num = self._category(), self._numeric(unique=True)
            agg, word = self.rng.choice((("MAX", "highest"), ("MIN", "lowest")))
            return Cond(
                f"{ref(cat.name)} = (SELECT {cat.name} FROM {table} WHERE {num.name} = "
                f"(SELECT {agg}({num.name}) FROM {table}))",
                f"{cat.name} is the same as that of the {self.domain.singular} with the "
                f"{word} {num.name}",
                2,
            )
        first = self._numeric()
        second = self.rng.choice([c for c in self.domain.columns if c.numeric and c != first])
        scope = f" WHERE {second.name} > (SELECT AVG({second.name}) FROM {table})"
        words = f"those {plural} whose {second.name} is above the overall average {second.name}"
        return self._versus_average(ref, first, scope, words, 2)

    def _versus_average(self, ref: Ref, num: Column, scope: str, words: str, depth: int) -> Cond:
        """`num` above or below its average over the rows `scope` keeps."""
        op, word = self.rng.choice(((">", "above"), ("<", "below")))
        return Cond(
            f"{ref(num.name)} {op} (SELECT AVG({num.name}) FROM {self.domain.table}{scope})",
            f"{num.name} is {word} the average {num.name} of {words}",
            depth,
        )
