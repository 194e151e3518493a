"""Realistic tables over several domains, made from a seeded random source and Faker."""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from faker import Faker

from lifelong_gym.tasks import DATA_DIR

from ..tasks import ColumnInfo, TableInfo

# Column roles: how values are made and how instructions and queries may use them.
KEY, NAME, CATEGORY, INTEGER, MONEY, DAY = "key", "name", "category", "integer", "money", "day"
_PLAIN_WORD = re.compile(r"[A-Z][a-z]+")


@dataclass(frozen=True)
class Column:
    """A column of a domain's table: name, SQL type, role, and the values it may take."""

    name: str
    type: str
    role: str
    choices: tuple[str, ...] = ()  # categories
    low: float = 0  # integers and money: the range; days: years
    high: float = 0
    unique: bool = True  # whether no two rows share a value (categories never do)

    @property
    def numeric(self) -> bool:
        """Whether the column holds numbers that can be compared and aggregated."""
        return self.role in (INTEGER, MONEY)


@dataclass(frozen=True)
class Domain:
    """One kind of table: its name, the noun for a row, and its columns."""

    table: str
    singular: str
    plural: str
    columns: tuple[Column, ...]
    naming: str  # how NAME values are made: person, title, code

    def column(self, role: str) -> list[Column]:
        """The columns with a role."""
        return [c for c in self.columns if c.role == role]


SPEC_FILE = DATA_DIR / "db" / "generator-domains.txt"


def _parse(spec: str) -> tuple[Domain, ...]:
    """The domains written in `spec` (the format of `SPEC_FILE`)."""
    domains: list[Domain] = []
    head: list[str] = []
    columns: list[Column] = []
    lines = [line for line in spec.splitlines() if line.strip() and not line.startswith("#")]
    for line in [*lines, ""]:
        if line.startswith("  "):
            name, sql_type, role, *rest = line.split()
            if role == CATEGORY:
                columns.append(Column(name, sql_type, role, choices=tuple(rest), unique=False))
            elif rest:
                low, high = float(rest[0]), float(rest[1])
                columns.append(
                    Column(name, sql_type, role, low=low, high=high, unique=len(rest) < 3)
                )
            else:
                columns.append(Column(name, sql_type, role))
            continue
        if head:
            table, singular, plural, naming = head
            domains.append(Domain(table, singular, plural, tuple(columns), naming))
        head, columns = line.split(), []
    return tuple(domains)


DOMAINS = _parse(SPEC_FILE.read_text(encoding="utf-8"))

_ADJECTIVES = (
    "Silent",
    "Golden",
    "Hidden",
    "Broken",
    "Crimson",
    "Distant",
    "Frozen",
    "Gentle",
    "Hollow",
    "Iron",
    "Lucky",
    "Midnight",
    "Paper",
    "Quiet",
    "Rapid",
    "Scarlet",
    "Velvet",
    "Wild",
    "Amber",
    "Bright",
    "Clever",
    "Silver",
    "Sunny",
    "Stone",
    "Tiny",
    "Urban",
    "Winter",
)
_NOUNS = (
    "River",
    "Garden",
    "Lantern",
    "Harbor",
    "Forest",
    "Mirror",
    "Compass",
    "Falcon",
    "Meadow",
    "Engine",
    "Bridge",
    "Castle",
    "Island",
    "Journey",
    "Kettle",
    "Ladder",
    "Orchard",
    "Planet",
    "Rocket",
    "Signal",
    "Tower",
    "Valley",
    "Whistle",
    "Anchor",
    "Beacon",
    "Canyon",
    "Summit",
)


class TableMaker:
    """Makes a domain's table: unique rows, typed values, 5 to 60 of them."""

    def __init__(self, rng: random.Random, faker: Faker):
        self.rng = rng
        self.faker = faker

    def table(self, domain: Domain, rows: int) -> TableInfo:
        """The domain's table with `rows` rows (ids start at a random base)."""
        base = self.rng.choice((1, 1, 101, 1001))
        names = self.names(domain, rows)
        columns = [self._values(domain, column, rows, base, names) for column in domain.columns]
        return TableInfo(
            name=domain.table,
            column_info_list=tuple(ColumnInfo(name=c.name, type=c.type) for c in domain.columns),
            row_list=tuple(zip(*columns, strict=True)),
        )

    def names(self, domain: Domain, count: int, avoid: set[str] | None = None) -> list[str]:
        """`count` distinct NAME values (none of `avoid`), capitalised plain ASCII words."""
        made: list[str] = []
        taken = set(avoid or ())
        make: Callable[[], str] = {
            "person": self._person,
            "title": self._title,
            "code": self._code,
            "place": self._place,
        }[domain.naming]
        while len(made) < count:
            name = make()
            if name not in taken:
                taken.add(name)
                made.append(name)
        return made

    def value(self, column: Column, taken: set[Any] | frozenset[Any] = frozenset()) -> Any:
        """One fresh value for a non-key, non-name column, avoiding `taken` when unique."""
        while True:
            value = self._one(column)
            if not column.unique or value not in taken:
                return value

    def _values(
        self, domain: Domain, column: Column, rows: int, base: int, names: list[str]
    ) -> list[Any]:
        if column.role == KEY:
            return list(range(base, base + rows))
        if column.role == NAME:
            return names
        values: list[Any] = []
        taken: set[Any] = set()
        for _ in range(rows):
            value = self.value(column, taken)
            taken.add(value)
            values.append(value)
        if column.role == CATEGORY and len(set(values)) < 2:
            values[0] = next(c for c in column.choices if c != values[1 % rows])
        return values

    def _one(self, column: Column) -> Any:
        rng = self.rng
        if column.role == CATEGORY:
            return rng.choice(column.choices)
        if column.role == INTEGER:
            return rng.randint(int(column.low), int(column.high))
        if column.role == MONEY:
            cents = rng.randint(int(column.low * 100), int(column.high * 100))
            return cents / 100 if cents % 100 else cents // 100
        start = datetime.date(int(column.low), 1, 1).toordinal()
        end = datetime.date(int(column.high), 12, 31).toordinal()
        return datetime.date.fromordinal(rng.randint(start, end)).isoformat()

    def _person(self) -> str:
        while True:
            first, last = self.faker.first_name(), self.faker.last_name()
            if _PLAIN_WORD.fullmatch(first) and _PLAIN_WORD.fullmatch(last):
                return f"{first} {last}"

    def _title(self) -> str:
        return f"{self.rng.choice(_ADJECTIVES)} {self.rng.choice(_NOUNS)}"

    def _code(self) -> str:
        letters = "".join(self.rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(2))
        return f"{letters}{self.rng.randint(100, 9999)}"

    def _place(self) -> str:
        return self.place(self.rng.choice(("Market", "Depot", "Corner", "Plaza")))

    def place(self, suffix: str) -> str:
        """A town of Faker's written in plain words, then `suffix` (none when empty)."""
        while True:
            city = self.faker.city()
            if all(_PLAIN_WORD.fullmatch(word) for word in city.split()):
                return f"{city} {suffix}".rstrip()
