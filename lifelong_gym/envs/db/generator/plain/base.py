"""What every plain task is built from: the made sheet, and tests on its columns drawn from its
rows (an equality on a named value, or a comparison of a number)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..domains import TableMaker
from ..sheets import DATE, GROUP, NUMBERS, YEAR, Column, MadeSheet, literal, quoted
from .wording import COMPARISONS, CONDITION_VOICES, WIKI_COMPARISONS, WIKI_VOICES

#: Kinds of column an equality test is drawn on, besides the label.
_NAMED = (GROUP, DATE, YEAR)


@dataclass(frozen=True)
class Test:
    """A condition on one column: its SQL, and the words a plain or a wiki-style question says."""

    column: Column
    sql: str
    plain: str
    wiki: str


class Plain:
    """One plain task in the making over a freshly made sheet."""

    def __init__(self, rng: random.Random, maker: TableMaker, made: MadeSheet):
        self.rng, self.maker, self.made = rng, maker, made
        self.table = quoted(made.table.name)
        self.records = made.records
        self.label = made.columns[0]
        self.others = list(made.columns[1:])
        self.ordered = [c for c in self.others if c.ordered]

    def nouns(self) -> dict[str, str]:
        """The sheet's nouns and the table's name, as phrasings name them."""
        sheet = self.made.sheet
        return {
            "row": sheet.singular,
            "a_row": ("an " if sheet.singular[0] in "aeiou" else "a ") + sheet.singular,
            "rows": sheet.plural,
            "label": self.label.name,
            "table": self.made.table.name,
        }

    def say(self, phrasings: tuple[str, ...], **words: object) -> str:
        """One of `phrasings`, filled in with `words` and the sheet's nouns."""
        return self.rng.choice(phrasings).format(**self.nouns(), **words)

    def equality(self, avoid: tuple[Column, ...] = (), numbers: bool = False) -> Test:
        """An equality test on a label, group, date or year column (or, with `numbers`, any
        number column), none of `avoid`, its value taken from a row."""
        rng = self.rng
        choices = self.testable(avoid, numbers)
        if self.label not in avoid and (not choices or rng.random() < 0.3):
            choices = [self.label]
        column = rng.choice(choices)
        seen = rng.choice(self.records)[column.name]
        sql = f"{quoted(column.name)} = {literal(column, seen)}"
        plain = rng.choice(CONDITION_VOICES).format(column.name, seen)
        return Test(column, sql, plain, rng.choice(WIKI_VOICES).format(column.name, seen))

    def testable(self, avoid: tuple[Column, ...], numbers: bool) -> list[Column]:
        """The non-label columns an equality may test, none of `avoid`."""
        kinds = (*_NAMED, *(NUMBERS if numbers else ()))
        return [c for c in self.others if c.kind in kinds and c not in avoid]

    def conditions(self, avoid: Column | None = None) -> tuple[str, str]:
        """One equality, sometimes two on different columns joined by AND: (SQL, words)."""
        kept = (avoid,) if avoid is not None else ()
        first = self.equality(kept)
        if (
            first.column is not self.label
            and len(self.testable(kept, False)) > 1
            and self.rng.random() < 0.25
        ):
            more = self.equality((*kept, first.column, self.label))
            return f"{first.sql} AND {more.sql}", f"{first.plain} and {more.plain}"
        return first.sql, first.plain

    def comparison(
        self, avoid: tuple[Column, ...] = (), typed: bool = True
    ) -> tuple[Test, dict[str, object]] | None:
        """A test of a number column against a value of a row, or None when there is no such
        column. Typed columns compare as they are; with `typed` False, TEXT ones may be drawn
        too, compared through a CAST (SQLite would compare their text, MariaDB the number)."""
        rng = self.rng
        pool = [c for c in self.others if c.numeric and (c.typed or not typed)]
        pool = [c for c in pool if c not in avoid]
        if not pool:
            return None
        column = rng.choice(pool)
        operator, spoken = rng.choice(COMPARISONS)
        bound = rng.choice(self.records)[column.name]
        name = quoted(column.name)
        tested = name if column.typed else f"CAST({name} AS DECIMAL(10,1))"
        words = {"column": column.name, "compared": rng.choice(spoken), "bound": bound}
        wiki = rng.choice(WIKI_COMPARISONS[operator]).format(column.name, bound)
        plain = f"the {column.name} is {words['compared']} {bound}"
        return Test(column, f"{tested} {operator} {bound}", plain, wiki), words

    def tests(self, avoid: Column, most: int = 2) -> list[Test]:
        """One to `most` tests for a wiki-style question: an equality first, then perhaps a
        comparison of a number or another equality (none on `avoid`)."""
        found = [self.equality((avoid,), numbers=True)]
        while len(found) < most and self.rng.random() < 0.45:
            used = (avoid, *(t.column for t in found))
            more = self.comparison(used, typed=False) if self.rng.random() < 0.6 else None
            if more is not None:
                found.append(more[0])
            elif self.testable(used, True):
                found.append(self.equality((*used, self.label), numbers=True))
        return found
