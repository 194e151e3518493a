"""Plain questions: a value given conditions, counts, totals, extremes, comparisons, listings,
and the short forms of crowd-written table QA ("Which Club has a Goals of 5?"); some name a
value no row has, and their right answer is no rows."""

from __future__ import annotations

from ..context import Built
from ..sheets import COUNT, GROUP, Column, literal, quoted
from .base import Plain, Test
from .wording import AGGREGATES, EARLIEST, EXTREMES, IN_TABLE, LATEST, PHRASINGS

#: How often a question that can name a value no row has does so.
ABSENT_SHARE = 0.3


def _absent(p: Plain, share: float = ABSENT_SHARE) -> bool:
    return p.rng.random() < share


def _conditions(p: Plain, avoid: Column | None, absent: bool) -> Test | None:
    return p.absent_conditions(avoid) if absent else p.conditions(avoid)


def lookup(p: Plain) -> Built | None:
    target = p.rng.choice(p.others)
    absent = _absent(p)
    test = _conditions(p, target, absent)
    if test is None:
        return None
    words = {"column": target.name, "condition": test.plain, "first": test.first}
    text = p.say(PHRASINGS["lookup"], **words)
    return Built((f"SELECT {quoted(target.name)} FROM {p.table} WHERE {test.sql}",), text, absent)


def how_many(p: Plain) -> Built | None:
    """A count column's value asked as "How many Goals did Ann Lee have?" (not a COUNT)."""
    counts = [c for c in p.others if c.field.kind == COUNT]
    if not counts:
        return None
    target = p.rng.choice(counts)
    test = p.conditions(target)
    text = p.say(PHRASINGS["how_many"], column=target.name, first=test.first)
    return Built((f"SELECT {quoted(target.name)} FROM {p.table} WHERE {test.sql}",), text)


def count(p: Plain) -> Built | None:
    test = _conditions(p, None, _absent(p, ABSENT_SHARE / 2))  # none counted: 0
    if test is None:
        return None
    text = p.say(PHRASINGS["count"], condition=test.plain, first=test.first)
    return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {test.sql}",), text)


def _aggregated(p: Plain) -> tuple[Column, str, str]:
    """A number column, an aggregate of it (MAX and MIN only when typed), and its word."""
    target = p.rng.choice([c for c in p.others if c.numeric])
    functions = ("SUM", "AVG", "MAX", "MIN") if target.ordered else ("SUM", "AVG")
    function = p.rng.choice(functions)
    return target, function, p.rng.choice(AGGREGATES[function])


def aggregate(p: Plain) -> Built | None:
    rng = p.rng
    target, function, word = _aggregated(p)
    sql = f"SELECT {function}({quoted(target.name)}) FROM {p.table}"
    scope = ""
    if rng.random() < 0.7:
        test = p.conditions(target)
        sql += f" WHERE {test.sql}"
        voice = rng.choice((" when {}", " where {}", " for which {}", " if {}", " for"))
        scope = f" for {test.first}" if voice == " for" else voice.format(test.plain)
    text = p.say(PHRASINGS["aggregate"], aggregate=word, column=target.name, scope=scope)
    return Built((sql,), text)


def extreme(p: Plain) -> Built | None:
    rng = p.rng
    if not p.ordered:
        return None
    target = rng.choice(p.ordered)
    most = rng.random() < 0.5
    values = sorted((r[target.name] for r in p.records), reverse=most)
    if len(values) > 1 and values[0] == values[1]:
        return None  # a tie: no single answer
    sql = (
        f"SELECT {quoted(p.label.name)} FROM {p.table} "
        f"ORDER BY {quoted(target.name)} {'DESC' if most else 'ASC'} LIMIT 1"
    )
    word = rng.choice(EXTREMES[most])
    return Built((sql,), p.say(PHRASINGS["extreme"], extreme=word, column=target.name))


def extreme_among(p: Plain) -> Built | None:
    """The row with the most or the least of a number among those that hold a group's value
    ("Of the players that had Northside, which player had the most Goals?"), without a tie."""
    rng = p.rng
    groups = [c for c in p.others if c.field.kind == GROUP]
    if not p.ordered or not groups:
        return None
    target, column = rng.choice(p.ordered), rng.choice(groups)
    seen = rng.choice(p.records)[column.name]
    most = rng.random() < 0.5
    among = sorted((r[target.name] for r in p.records if r[column.name] == seen), reverse=most)
    if len(among) > 1 and among[0] == among[1]:
        return None  # a tie: no single answer
    test = p.equal_to(column, seen)
    sql = (
        f"SELECT {quoted(p.label.name)} FROM {p.table} WHERE {test.sql} "
        f"ORDER BY {quoted(target.name)} {'DESC' if most else 'ASC'} LIMIT 1"
    )
    word = rng.choice(EXTREMES[most])
    words = {"first": test.first, "has": test.wiki, "condition": test.plain}
    return Built(
        (sql,), p.say(PHRASINGS["extreme_among"], extreme=word, column=target.name, **words)
    )


def compared(p: Plain) -> Built | None:
    found = p.comparison(typed=p.rng.random() < 0.5)
    if found is None:
        return None
    test, words = found
    if p.rng.random() < 0.35:
        text = p.say(PHRASINGS["count_compared"], **words)
        return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {test.sql}",), text)
    text = p.say(PHRASINGS["list_compared"], **words)
    return Built((f"SELECT {quoted(p.label.name)} FROM {p.table} WHERE {test.sql}",), text)


def listing(p: Plain) -> Built | None:
    rng = p.rng
    absent = _absent(p)
    test = _conditions(p, p.label, absent)
    if test is None:
        return None
    shown = [p.label]
    extras = [c for c in p.others if c.field.kind != GROUP]
    if extras and rng.random() < 0.4:
        shown.append(rng.choice(extras))
    sql = f"SELECT {', '.join(quoted(c.name) for c in shown)} FROM {p.table} WHERE {test.sql}"
    order = ""
    if p.ordered and rng.random() < 0.4:
        key = rng.choice(p.ordered)
        if len({r[key.name] for r in p.records}) < len(p.records):
            return None  # ties: the order would not be one
        descending = rng.random() < 0.5
        sql += f" ORDER BY {quoted(key.name)} {'DESC' if descending else 'ASC'}"
        way = "from highest to lowest" if descending else "from lowest to highest"
        order = rng.choice((", sorted by {} {}", ", ordered by {} {}")).format(key.name, way)
    names = " and ".join(c.name for c in shown)
    words = {"shown": names, "condition": test.plain, "first": test.first, "order": order}
    return Built((sql,), p.say(PHRASINGS["listing"], **words), absent)


def short(
    p: Plain, kind: str, select: str, tests: list[Test], empty: bool = False, **words: object
) -> Built:
    """A short-form question of `kind` selecting `select` under `tests` (the WHERE is left out
    when the drawn phrasing names no condition); `empty` when the tests name a value no row
    has."""
    phrasing = p.rng.choice(PHRASINGS[kind])
    in_table = p.rng.choice(IN_TABLE).format(table=p.made.table.name)
    text = phrasing.format(
        **p.nouns(),
        **words,
        in_table=in_table,
        tests=" and ".join(t.plain for t in tests),
        has="a " + ", and a ".join(t.wiki for t in tests),
        lead=", and a ".join(t.wiki for t in tests),
        first=" and ".join(t.first for t in tests),
    )
    sql = f"SELECT {select} FROM {p.table}"
    if any(f"{{{slot}}}" in phrasing for slot in ("tests", "has", "lead", "first")):
        sql += " WHERE " + " AND ".join(t.sql for t in tests)
    else:
        empty = False  # no condition, so the rows are all there
    return Built((sql,), text, empty)


def short_lookup(p: Plain) -> Built | None:
    target = p.rng.choice(p.made.columns)
    absent = _absent(p)
    tests = p.absent_tests(target) if absent else p.tests(target)
    if tests is None:
        return None
    return short(p, "short_lookup", quoted(target.name), tests, absent, column=target.name)


def name_for(p: Plain) -> Built | None:
    target = p.rng.choice(p.others)
    absent = _absent(p)
    seen = p.absent(p.label) if absent else p.rng.choice(p.records)[p.label.name]
    if seen is None:
        return None
    sql = (
        f"SELECT {quoted(target.name)} FROM {p.table} "
        f"WHERE {quoted(p.label.name)} = {literal(p.label, seen)}"
    )
    in_table = p.rng.choice(IN_TABLE).format(table=p.made.table.name)
    text = p.say(PHRASINGS["name_for"], column=target.name, value=seen, in_table=in_table)
    return Built((sql,), text, absent)


def count_of(p: Plain) -> Built | None:
    target = p.rng.choice(p.made.columns)
    select = f"COUNT({quoted(target.name)})"
    return short(p, "count_of", select, p.tests(target), column=target.name)


def short_aggregate(p: Plain) -> Built | None:
    target, function, word = _aggregated(p)
    select = f"{function}({quoted(target.name)})"
    return short(p, "short_aggregate", select, p.tests(target), column=target.name, aggregate=word)


def earliest(p: Plain) -> Built | None:
    years = [c for c in p.others if c.dated]
    if not years:
        return None
    target = p.rng.choice(years)
    first = p.rng.random() < 0.5
    word = p.rng.choice(EARLIEST if first else LATEST)
    select = f"{'MIN' if first else 'MAX'}({quoted(target.name)})"
    return short(p, "earliest", select, p.tests(target), column=target.name, earliest=word)
