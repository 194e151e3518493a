"""Tables as people keep them: a title and column names with spaces and capitals, numbers often
stored as TEXT (as scraped tables hold them), for the plain-question style."""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, replace
from typing import Any

from lifelong_gym.tasks import DATA_DIR

from ..tasks import ColumnInfo, TableInfo
from .domains import Domain, TableMaker

# Field kinds: how values are made and what a question may do with them.
LABEL, GROUP, COUNT, DECIMAL = "label", "group", "count", "decimal"
YEAR, DATE = "year", "date"  # a year (typed or TEXT); a day written out as text
NUMBERS = (COUNT, DECIMAL)
#: The ways a date column writes its days (one per table, as a sheet keeps one).
DATE_FORMATS = ("{day} {month} {year}", "{month} {day}, {year}")


@dataclass(frozen=True)
class Field:
    """A column of a sheet: its name, its kind, and the values it may take."""

    name: str
    kind: str
    choices: tuple[str, ...] = ()  # groups, and labels that list their values
    suffixes: tuple[str, ...] = ()  # labels: town names end with one of these
    low: float = 0  # counts and decimals: the range
    high: float = 0


@dataclass(frozen=True)
class Sheet:
    """One kind of table: possible titles, the noun for a row, the naming of its labels."""

    titles: tuple[str, ...]
    singular: str
    plural: str
    naming: str  # person, title, place, code (as `TableMaker.names` makes them) or listed
    fields: tuple[Field, ...]  # the first is the row's label


@dataclass(frozen=True)
class Column:
    """A column of a made table: its field, whether its numbers are typed (else TEXT), and how
    it writes a date."""

    field: Field
    typed: bool
    date_format: str = DATE_FORMATS[0]

    @property
    def name(self) -> str:
        return self.field.name

    @property
    def kind(self) -> str:
        return self.field.kind

    @property
    def numeric(self) -> bool:
        return self.field.kind in NUMBERS

    @property
    def ordered(self) -> bool:
        """Whether SQL compares and sorts its values as numbers (TEXT sorts them as text)."""
        return self.numeric and self.typed

    @property
    def dated(self) -> bool:
        """A typed year: its MIN and MAX are the earliest and the latest."""
        return self.field.kind == YEAR and self.typed


SPEC_FILE = DATA_DIR / "db" / "generator-sheets.txt"


def _parse(spec: str) -> tuple[Sheet, ...]:
    """The sheets written in `spec` (the format of `SPEC_FILE`)."""
    sheets: list[Sheet] = []
    for line in spec.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, *rest = line.strip().split(" | ")
        if not line.startswith("  "):
            singular, plural, naming = name.split()
            sheets.append(Sheet(tuple(rest), singular, plural, naming, ()))
            continue
        kind, *values = rest
        if kind == LABEL and values and all(v.startswith("*") for v in values):
            field = Field(name, kind, suffixes=tuple(v[1:].strip() for v in values))
        elif kind in (GROUP, LABEL):
            field = Field(name, kind, choices=tuple(values))
        elif values:
            field = Field(name, kind, low=float(values[0]), high=float(values[1]))
        else:
            field = Field(name, kind)
        sheets[-1] = replace(sheets[-1], fields=(*sheets[-1].fields, field))
    for sheet in sheets:
        if not any(f.kind in NUMBERS for f in sheet.fields):
            raise ValueError(f"sheet {sheet.titles[0]!r} has no count or decimal column")
    return tuple(sheets)


SHEETS = _parse(SPEC_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class MadeSheet:
    """A sheet's table as made for one task, with its columns' typing and its rows as dicts."""

    sheet: Sheet
    columns: tuple[Column, ...]
    table: TableInfo

    @property
    def records(self) -> list[dict[str, Any]]:
        names = [c.name for c in self.columns]
        return [dict(zip(names, row, strict=True)) for row in self.table.row_list]


def make_sheet(rng: random.Random, maker: TableMaker, sheet: Sheet, rows: int) -> MadeSheet:
    """The sheet under one of its titles with `rows` rows; each number column is typed or
    TEXT by chance, and one or two number columns are sometimes left out (every sheet
    keeps its label and at least two group columns, which conditions are drawn from)."""
    fields = list(sheet.fields)
    for _ in range(rng.choice((0, 0, 1, 2))):
        numbers = [f for f in fields if f.kind in NUMBERS]
        if len(numbers) > 1:
            fields.remove(rng.choice(numbers))
    columns = tuple(
        Column(f, f.kind in (*NUMBERS, YEAR) and rng.random() < 0.6, rng.choice(DATE_FORMATS))
        for f in fields
    )
    if sheet.fields[0].choices:  # a few listed labels are kept back for inserts
        rows = min(rows, len(sheet.fields[0].choices) - 2)
    labels = label_values(maker, sheet, rows)
    data = [labels] + [[value(rng, c) for _ in range(rows)] for c in columns[1:]]
    table = TableInfo(
        name=table_name(rng, maker, rng.choice(sheet.titles)),
        column_info_list=tuple(ColumnInfo(name=c.name, type=sql_type(c)) for c in columns),
        row_list=tuple(zip(*data, strict=True)),
    )
    return MadeSheet(sheet, columns, table)


#: How often a table's title carries a year, a season or a town, as tables people name do.
QUALIFIED_SHARE = 0.3


def table_name(rng: random.Random, maker: TableMaker, title: str) -> str:
    """The title, now and then with a year, a season or a town after it, written in the
    title's own case ("Cup Results in Dover", "game_results_2011", "MatchLogInDover"); a title
    with a year in it already is kept as it is."""
    if rng.random() >= QUALIFIED_SHARE or any(c.isdigit() for c in title):
        return title
    year = rng.randint(1995, 2024)
    words = rng.choice(
        ([str(year)], [f"{year}-{(year + 1) % 100:02d}"], ["in", *maker.place("").split()])
    )
    if " " in title:
        return " ".join((title, *words))
    if "_" in title or title.islower():
        return "_".join((title, *words))
    return title + "".join(w[0].upper() + w[1:] for w in words)


def label_values(
    maker: TableMaker, sheet: Sheet, count: int, avoid: set[str] | None = None
) -> list[str]:
    """`count` distinct row labels for the sheet, none of `avoid` (fewer when the sheet lists
    its labels and not enough are left): listed, town names with a suffix, or by naming."""
    listed = sheet.fields[0].choices
    if listed:
        left = [v for v in listed if v not in (avoid or ())]
        return maker.rng.sample(left, min(count, len(left)))
    suffixes = sheet.fields[0].suffixes
    if suffixes:
        made: list[str] = []
        while len(made) < count:
            name = maker.place(maker.rng.choice(suffixes))
            if name not in made and name not in (avoid or ()):
                made.append(name)
        return made
    naming = Domain(sheet.titles[0], sheet.singular, sheet.plural, (), sheet.naming)
    return maker.names(naming, count, avoid)


def value(rng: random.Random, column: Column) -> Any:
    """One value for a non-label column, as its type stores it."""
    field = column.field
    if field.kind == GROUP:
        return rng.choice(field.choices)
    if field.kind == DATE:
        start = datetime.date(int(field.low), 1, 1).toordinal()
        day = datetime.date.fromordinal(
            rng.randint(start, start + 365 * int(field.high - field.low))
        )
        words = {"day": day.day, "month": f"{day:%B}", "year": day.year}
        return column.date_format.format(**words)
    if field.kind in (COUNT, YEAR):
        number: float = rng.randint(int(field.low), int(field.high))
    else:
        number = round(rng.uniform(field.low, field.high), 1)
    return number if column.typed else str(number)


def sql_type(column: Column) -> str:
    """The declared SQL type: TEXT unless the column holds typed numbers."""
    if not column.typed:
        return "TEXT"
    return "DECIMAL(10,1)" if column.field.kind == DECIMAL else "INT"


def quoted(name: str) -> str:
    """A table or column name as SQL must write it (backticks, doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


def literal(column: Column, value: Any) -> str:
    """A value as an SQL literal for its column (NULL for None)."""
    if value is None:
        return "NULL"
    if column.typed:
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"
