"""What every query builder works from: the random source, the table, and a probe into it."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..backends import SqliteBackend
from ..tasks import TableInfo
from .conditions import Conditions, Ref, no_alias
from .domains import CATEGORY, Column, Domain, TableMaker
from .subqueries import Subqueries

ASC_WORDS = ("in ascending order", "ascending", "from lowest to highest")
DESC_WORDS = ("in descending order", "descending", "from highest to lowest")


@dataclass(frozen=True)
class Built:
    """A built task before its truth is known: the reference statements and the instruction;
    `empty` when the question's right answer is no rows (its condition names a value no row
    has), which the truth must then be."""

    statements: tuple[str, ...]
    instruction: str
    empty: bool = False


@dataclass
class Context:
    """One task in the making: the domain, its table, and helpers bound to them."""

    rng: random.Random
    domain: Domain
    table: TableInfo
    maker: TableMaker
    probe_backend: SqliteBackend = field(default_factory=SqliteBackend)

    def __post_init__(self) -> None:
        names = [c.name for c in self.table.column_info_list]
        self.records: list[dict[str, Any]] = [
            dict(zip(names, row, strict=True)) for row in self.table.row_list
        ]
        self.conditions = Conditions(self.rng, self.domain, self.records)
        self.subqueries = Subqueries(self.conditions)
        self.probe_backend.start(self.table)

    def probe(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows a query returns on the task's table (SQLite); an error is a bug here."""
        result = self.probe_backend.execute(sql)
        if result.error is not None:
            raise ValueError(f"generated SQL failed: {result.error}: {sql}")
        return list(result.rows or [])

    def close(self) -> None:
        """Drop the probe database."""
        self.probe_backend.close()

    def alias(self, wanted: bool) -> tuple[str, Ref]:
        """The FROM clause and the column reference, with a table alias when `wanted`."""
        if not wanted:
            return self.domain.table, no_alias
        letter = self.domain.table[0]
        return f"{self.domain.table} AS {letter}", lambda name: f"{letter}.{name}"

    def columns(self, *roles: str) -> list[Column]:
        """The domain's columns with any of `roles`."""
        return [c for c in self.domain.columns if c.role in roles]

    def unique_columns(self) -> list[Column]:
        """Columns in which no two rows share a value (a total sort order)."""
        return [c for c in self.domain.columns if c.unique and c.role != CATEGORY]

    def grouping_columns(self) -> list[Column]:
        """Columns whose values repeat: categories and non-unique integers."""
        return [c for c in self.domain.columns if not c.unique or c.role == CATEGORY]

    def direction(self, descending: bool) -> str:
        """How an instruction says a sort direction."""
        return self.rng.choice(DESC_WORDS if descending else ASC_WORDS)

    def order_words(self, keys: list[tuple[str, bool]]) -> str:
        """The wording of a sort by (column wording, descending) keys."""
        first, *rest = keys
        words = f"sorted by {first[0]} {self.direction(first[1])}"
        for name, descending in rest:
            words += f", then by {name} {self.direction(descending)}"
        return words

    def limit(self, total: int, offset: bool) -> tuple[str, str] | None:
        """A LIMIT (with OFFSET when asked) that keeps some but not all of `total` rows."""
        if total < 3:
            return None
        if not offset:
            k = self.rng.randint(1, min(total - 1, 10))
            rows = "row" if k == 1 else f"{k} rows"
            return f" LIMIT {k}", self.rng.choice(
                (f"return only the first {rows}", f"keep just the first {rows}")
            )
        k = self.rng.randint(1, min(total - 2, 10))
        m = self.rng.randint(1, total - k)
        skipped = "row" if m == 1 else f"{m} rows"
        return f" LIMIT {k} OFFSET {m}", self.rng.choice(
            (
                f"skip the first {skipped} and return the next {k}",
                f"leave out the first {skipped}, then return the following {k}",
            )
        )
