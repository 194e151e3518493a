"""What every plain task is built from: the made sheet, and tests on its columns drawn from its
rows (an equality on a named value, or a comparison of a number), or, for a question whose
right answer is no rows, an equality on a value no row has."""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..domains import TableMaker
from ..sheets import (
    DATE,
    GROUP,
    NUMBERS,
    YEAR,
    Column,
    MadeSheet,
    label_values,
    literal,
    quoted,
    value,
)
from .wording import COMPARISONS, CONDITION_VOICES, WIKI_COMPARISONS, WIKI_VOICES

#: Kinds of column an equality test is drawn on, besides the label.
_NAMED = (GROUP, DATE, YEAR)
#: Draws of a column's value before giving up on one no row has.
_ABSENT_TRIES = 20


@dataclass(frozen=True)
class Test:
    """A condition on one column: its SQL, and the words a plain or a wiki-style question says,
    and those that name the value first ("11 Points", "1992", "Northside", after "for")."""

    column: Column
    sql: str
    plain: str
    wiki: str
    first: str

    def join(self, other: Test) -> Test:
        """Both tests, joined by AND (the column is the first's)."""
        return Test(
            self.column,
            f"{self.sql} AND {other.sql}",
            f"{self.plain} and {other.plain}",
            f"{self.wiki}, and a {other.wiki}",
            f"{self.first} and {other.first}",
        )


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
        column = self.tested_column(avoid, numbers)
        return self.equal_to(column, self.rng.choice(self.records)[column.name])

    def absent_equality(self, avoid: tuple[Column, ...] = (), numbers: bool = False) -> Test | None:
        """As `equality`, on a value of the column's kind that no row has (None when none is
        found): a question whose right answer is no rows."""
        column = self.tested_column(avoid, numbers)
        seen = self.absent(column)
        return None if seen is None else self.equal_to(column, seen)

    def tested_column(self, avoid: tuple[Column, ...], numbers: bool) -> Column:
        """The column an equality tests: the label now and then, else a testable one."""
        choices = self.testable(avoid, numbers)
        if self.label not in avoid and (not choices or self.rng.random() < 0.3):
            choices = [self.label]
        return self.rng.choice(choices)

    def equal_to(self, column: Column, seen: object) -> Test:
        """The test that `column` holds `seen`, in each voice."""
        rng = self.rng
        sql = f"{quoted(column.name)} = {literal(column, seen)}"
        plain = rng.choice(CONDITION_VOICES).format(column.name, seen)
        wiki = rng.choice(WIKI_VOICES).format(column.name, seen)
        return Test(column, sql, plain, wiki, self.value_first(column, seen))

    def value_first(self, column: Column, seen: object) -> str:
        """A tested value as people name it after "for" or "with": a number before its
        column ("11 Points"), a year or a name alone or after its column."""
        if column.numeric:
            return f"{seen} {column.name}"
        if column is self.label or self.rng.random() < 0.7:
            return str(seen)
        return f"the {column.name} {seen}"

    def absent(self, column: Column) -> object | None:
        """A value of the column's kind that no row has, or None when none is found."""
        taken = {str(r[column.name]) for r in self.records}
        if column is self.label:
            fresh = label_values(self.maker, self.made.sheet, 1, taken)
            return fresh[0] if fresh else None
        for _ in range(_ABSENT_TRIES):
            drawn = value(self.rng, column)
            if str(drawn) not in taken:
                return drawn
        return None

    def testable(self, avoid: tuple[Column, ...], numbers: bool) -> list[Column]:
        """The non-label columns an equality may test, none of `avoid`."""
        kinds = (*_NAMED, *(NUMBERS if numbers else ()))
        return [c for c in self.others if c.kind in kinds and c not in avoid]

    def conditions(self, avoid: Column | None = None, first: Test | None = None) -> Test:
        """One equality (`first` when given), sometimes two on different columns joined by
        AND."""
        kept = (avoid,) if avoid is not None else ()
        first = first or self.equality(kept)
        if (
            first.column is not self.label
            and len(self.testable(kept, False)) > 1
            and self.rng.random() < 0.25
        ):
            return first.join(self.equality((*kept, first.column, self.label)))
        return first

    def absent_conditions(self, avoid: Column | None = None) -> Test | None:
        """As `conditions`, the first naming a value no row has (None when none is found)."""
        first = self.absent_equality((avoid,) if avoid is not None else ())
        return None if first is None else self.conditions(avoid, first)

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
        first = f"{words['compared']} {bound} {column.name}"
        return Test(column, f"{tested} {operator} {bound}", plain, wiki, first), words

    def tests(self, avoid: Column, most: int = 2, first: Test | None = None) -> list[Test]:
        """One to `most` tests for a wiki-style question: an equality first (`first` when
        given), then perhaps a comparison of a number or another equality (none on `avoid`)."""
        found = [first or self.equality((avoid,), numbers=True)]
        while len(found) < most and self.rng.random() < 0.45:
            used = (avoid, *(t.column for t in found))
            more = self.comparison(used, typed=False) if self.rng.random() < 0.6 else None
            if more is not None:
                found.append(more[0])
            elif self.testable(used, True):
                found.append(self.equality((*used, self.label), numbers=True))
        return found

    def absent_tests(self, avoid: Column) -> list[Test] | None:
        """As `tests`, the first naming a value no row has (None when none is found)."""
        first = self.absent_equality((avoid,), numbers=True)
        return None if first is None else self.tests(avoid, first=first)
