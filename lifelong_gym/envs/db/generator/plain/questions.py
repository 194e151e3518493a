"""Plain questions: a value given conditions, counts, totals, extremes, comparisons, listings,
and the short forms of crowd-written table QA ("Which Club has a Goals of 5?")."""

from __future__ import annotations

from ..context import Built
from ..sheets import GROUP, Column, literal, quoted
from .base import Plain, Test
from .wording import AGGREGATES, EARLIEST, IN_TABLE, LATEST, PHRASINGS


def lookup(p: Plain) -> Built | None:
    target = p.rng.choice(p.others)
    where, cond = p.conditions(avoid=target)
    text = p.say(PHRASINGS["lookup"], column=target.name, condition=cond)
    return Built((f"SELECT {quoted(target.name)} FROM {p.table} WHERE {where}",), text)


def count(p: Plain) -> Built | None:
    where, cond = p.conditions()
    text = p.say(PHRASINGS["count"], condition=cond)
    return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {where}",), text)


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
        where, cond = p.conditions(avoid=target)
        sql += f" WHERE {where}"
        scope = rng.choice((" when {}", " where {}", " for which {}", " if {}")).format(cond)
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
    word = rng.choice(("most", "highest", "largest") if most else ("least", "lowest", "fewest"))
    return Built((sql,), p.say(PHRASINGS["extreme"], extreme=word, column=target.name))


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
    where, cond = p.conditions(avoid=p.label)
    shown = [p.label]
    extras = [c for c in p.others if c.field.kind != GROUP]
    if extras and rng.random() < 0.4:
        shown.append(rng.choice(extras))
    sql = f"SELECT {', '.join(quoted(c.name) for c in shown)} FROM {p.table} WHERE {where}"
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
    text = p.say(PHRASINGS["listing"], shown=names, condition=cond, order=order)
    return Built((sql,), text)


def short(p: Plain, kind: str, select: str, tests: list[Test], **words: object) -> Built:
    """A short-form question of `kind` selecting `select` under `tests` (the WHERE is left out
    when the drawn phrasing names no condition)."""
    phrasing = p.rng.choice(PHRASINGS[kind])
    in_table = p.rng.choice(IN_TABLE).format(table=p.made.table.name)
    text = phrasing.format(
        **p.nouns(),
        **words,
        in_table=in_table,
        tests=" and ".join(t.plain for t in tests),
        has="a " + ", and a ".join(t.wiki for t in tests),
        lead=", and a ".join(t.wiki for t in tests),
    )
    sql = f"SELECT {select} FROM {p.table}"
    if any(f"{{{slot}}}" in phrasing for slot in ("tests", "has", "lead")):
        sql += " WHERE " + " AND ".join(t.sql for t in tests)
    return Built((sql,), text)


def short_lookup(p: Plain) -> Built | None:
    target = p.rng.choice(p.made.columns)
    return short(p, "short_lookup", quoted(target.name), p.tests(target), column=target.name)


def name_for(p: Plain) -> Built | None:
    target = p.rng.choice(p.others)
    seen = p.rng.choice(p.records)[p.label.name]
    sql = (
        f"SELECT {quoted(target.name)} FROM {p.table} "
        f"WHERE {quoted(p.label.name)} = {literal(p.label, seen)}"
    )
    in_table = p.rng.choice(IN_TABLE).format(table=p.made.table.name)
    text = p.say(PHRASINGS["name_for"], column=target.name, value=seen, in_table=in_table)
    return Built((sql,), text)


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
    return short(p, "earliest", select, p.tests(target), column=target.name, first=word)
