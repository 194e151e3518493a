"""The plain-question style: questions and changes worded as people ask for them, over one
table with human column names (`docs/db-tasks.md`, "Styles")."""

from __future__ import annotations

import random
from collections.abc import Callable

from .context import Built
from .domains import TableMaker
from .sheets import GROUP, Column, MadeSheet, label_values, literal, quoted, value

# (SQL operator, ways to say it)
_COMPARISONS = (
    (">", ("more than", "greater than", "over", "above")),
    ("<", ("less than", "fewer than", "below", "under")),
    (">=", ("at least", "no less than")),
    ("<=", ("at most", "no more than")),
)
_AGGREGATES = {
    "SUM": ("total", "combined", "overall"),
    "AVG": ("average", "mean"),
    "MAX": ("highest", "largest", "maximum", "biggest"),
    "MIN": ("lowest", "smallest", "minimum"),
}


class Plain:
    """One plain task in the making over a freshly made sheet."""

    def __init__(self, rng: random.Random, maker: TableMaker, made: MadeSheet):
        self.rng, self.maker, self.made = rng, maker, made
        self.table = quoted(made.table.name)
        self.records = made.records
        self.label = made.columns[0]

    def pick(self, columns: list[Column]) -> Column | None:
        return self.rng.choice(columns) if columns else None

    def others(self) -> list[Column]:
        return list(self.made.columns[1:])

    def condition(self, avoid: tuple[Column, ...] = ()) -> tuple[Column, str, str]:
        """An equality test on a label or group column (none of `avoid`), its value taken
        from a row: (column, SQL, words)."""
        rng = self.rng
        choices = [c for c in self.made.columns if c.field.kind == GROUP and c not in avoid]
        if self.label not in avoid and (not choices or rng.random() < 0.3):
            choices = [self.label]
        column = rng.choice(choices)
        seen = rng.choice(self.records)[column.name]
        sql = f"{quoted(column.name)} = {literal(column, seen)}"
        words = rng.choice(("the {} is {}", "{} is {}", "the {} was {}", "{} equals {}"))
        return column, sql, words.format(column.name, seen)

    def conditions(self, avoid: Column | None = None) -> tuple[str, str]:
        """One condition, sometimes two on different columns joined by AND: (SQL, words)."""
        kept = (avoid,) if avoid is not None else ()
        first, sql, words = self.condition(kept)
        groups = [c for c in self.made.columns if c.field.kind == GROUP and c not in kept]
        if first is not self.label and len(groups) > 1 and self.rng.random() < 0.25:
            _, more_sql, more_words = self.condition((*kept, first, self.label))
            return f"{sql} AND {more_sql}", f"{words} and {more_words}"
        return sql, words


def _lookup(p: Plain) -> Built | None:
    target = p.pick(p.others())
    assert target is not None
    where, cond = p.conditions(avoid=target)
    text = p.rng.choice(
        (
            "What is the {t} when {c}?",
            "What are the {t} values where {c}?",
            "Tell me the {t} when {c}.",
            "Name the {t} for which {c}.",
            "What {t} is listed where {c}?",
            "Which {t} goes with the row where {c}?",
        )
    ).format(t=target.name, c=cond)
    return Built((f"SELECT {quoted(target.name)} FROM {p.table} WHERE {where}",), text)


def _count(p: Plain) -> Built | None:
    where, cond = p.conditions()
    sheet = p.made.sheet
    text = p.rng.choice(
        (
            "How many {n} are there where {c}?",
            "What is the number of {n} when {c}?",
            "Count the {n} for which {c}.",
            "How many entries are listed when {c}?",
            "What is the total number of {n} where {c}?",
        )
    ).format(n=sheet.plural, c=cond)
    return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {where}",), text)


def _aggregate(p: Plain) -> Built | None:
    rng = p.rng
    numeric = [c for c in p.others() if c.numeric]
    target = p.pick(numeric)
    if target is None:
        return None
    kinds = ("SUM", "AVG", "MAX", "MIN") if target.ordered else ("SUM", "AVG")
    function = rng.choice(kinds)
    sql = f"SELECT {function}({quoted(target.name)}) FROM {p.table}"
    scope = ""
    if rng.random() < 0.7:
        where, cond = p.conditions(avoid=target)
        sql += f" WHERE {where}"
        scope = rng.choice((" when {}", " where {}", " for which {}", " if {}")).format(cond)
    text = rng.choice(
        (
            "What is the {a} {t}{s}?",
            "What was the {a} {t}{s}?",
            "Give the {a} {t}{s}.",
            "Tell me the {a} {t}{s}.",
            "Name the {a} {t}{s}.",
        )
    ).format(a=rng.choice(_AGGREGATES[function]), t=target.name, s=scope)
    return Built((sql,), text)


def _extreme(p: Plain) -> Built | None:
    rng = p.rng
    target = p.pick([c for c in p.others() if c.ordered])
    if target is None:
        return None
    most = rng.random() < 0.5
    values = sorted((r[target.name] for r in p.records), reverse=most)
    if len(values) > 1 and values[0] == values[1]:
        return None  # a tie: no single answer
    sql = (
        f"SELECT {quoted(p.label.name)} FROM {p.table} "
        f"ORDER BY {quoted(target.name)} {'DESC' if most else 'ASC'} LIMIT 1"
    )
    word = rng.choice(("most", "highest", "largest") if most else ("least", "lowest", "fewest"))
    text = rng.choice(
        (
            "Which {n} has the {w} {t}?",
            "What {l} has the {w} {t}?",
            "Name the {n} with the {w} {t}.",
            "Tell me which {n} had the {w} {t}.",
            "Which {l} comes with the {w} {t}?",
        )
    ).format(n=p.made.sheet.singular, l=p.label.name, w=word, t=target.name)
    return Built((sql,), text)


def _comparison(p: Plain) -> Built | None:
    rng = p.rng
    target = p.pick([c for c in p.others() if c.ordered])
    if target is None:
        return None
    operator, words = rng.choice(_COMPARISONS)
    bound = rng.choice(p.records)[target.name]
    test = f"{quoted(target.name)} {operator} {bound}"
    say = rng.choice(words)
    sheet = p.made.sheet
    if rng.random() < 0.35:
        text = rng.choice(
            (
                "How many {n} have {o} {b} {t}?",
                "What is the number of {n} with {t} {o} {b}?",
                "Count the {n} whose {t} is {o} {b}.",
                "How many rows have a {t} of {o} {b}?",
            )
        ).format(n=sheet.plural, o=say, b=bound, t=target.name)
        return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {test}",), text)
    text = rng.choice(
        (
            "Which {n} have {o} {b} {t}?",
            "List the {l} with {o} {b} {t}.",
            "What are the {l} values where {t} is {o} {b}?",
            "Show every {s} whose {t} is {o} {b}.",
        )
    ).format(n=sheet.plural, s=sheet.singular, l=p.label.name, o=say, b=bound, t=target.name)
    return Built((f"SELECT {quoted(p.label.name)} FROM {p.table} WHERE {test}",), text)


def _listing(p: Plain) -> Built | None:
    rng = p.rng
    where, cond = p.conditions(avoid=p.label)
    shown = [p.label]
    extra = p.pick([c for c in p.others() if c.field.kind != GROUP])
    if extra is not None and rng.random() < 0.4:
        shown.append(extra)
    sql = f"SELECT {', '.join(quoted(c.name) for c in shown)} FROM {p.table} WHERE {where}"
    names = " and ".join(c.name for c in shown)
    order = ""
    key = p.pick([c for c in p.others() if c.ordered])
    if key is not None and rng.random() < 0.4:
        if len({r[key.name] for r in p.records}) < len(p.records):
            return None  # ties: the order would not be one
        descending = rng.random() < 0.5
        sql += f" ORDER BY {quoted(key.name)} {'DESC' if descending else 'ASC'}"
        way = "from highest to lowest" if descending else "from lowest to highest"
        order = rng.choice((", sorted by {} {}", ", ordered by {} {}")).format(key.name, way)
    text = rng.choice(
        (
            "List all {x} where {c}{o}.",
            "Show the {x} of the {n} when {c}{o}.",
            "Which {x} are there where {c}{o}?",
            "Give me every {x} for which {c}{o}.",
        )
    ).format(x=names, n=p.made.sheet.plural, c=cond, o=order)
    return Built((sql,), text)


def _insert(p: Plain) -> Built | None:
    rng = p.rng
    taken = {r[p.label.name] for r in p.records}
    row = [label_values(p.maker, p.made.sheet, 1, taken)[0]]
    row += [value(rng, c) for c in p.others()]
    columns = p.made.columns
    sql = (
        f"INSERT INTO {p.table} ({', '.join(quoted(c.name) for c in columns)}) "
        f"VALUES ({', '.join(literal(c, v) for c, v in zip(columns, row, strict=True))})"
    )
    pair = rng.choice(("{} {}", "{}: {}", "{} is {}"))
    described = ", ".join(pair.format(c.name, v) for c, v in zip(columns, row, strict=True))
    text = rng.choice(
        (
            "Add a new row to the table: {d}.",
            "Insert a {s} with {d}.",
            "Please record a new {s}: {d}.",
            "A new entry needs adding, with {d}.",
            "Put this {s} into the table - {d}.",
        )
    ).format(s=p.made.sheet.singular, d=described)
    return Built((sql,), text)


def _update(p: Plain) -> Built | None:
    rng = p.rng
    target = rng.choice(p.others())
    new = value(rng, target)
    where, cond = p.conditions(avoid=target)
    sql = f"UPDATE {p.table} SET {quoted(target.name)} = {literal(target, new)} WHERE {where}"
    text = rng.choice(
        (
            "Change the {t} to {v} where {c}.",
            "Set the {t} to {v} for every {s} where {c}.",
            "Update the table so that the {t} is {v} when {c}.",
            "The {t} should be {v} for the rows where {c}; fix it.",
            "when {c}, the {t} must now read {v}.",
        )
    ).format(t=target.name, v=new, s=p.made.sheet.singular, c=cond)
    return Built((sql,), text)


def _delete(p: Plain) -> Built | None:
    rng = p.rng
    sheet = p.made.sheet
    ordered = [c for c in p.others() if c.ordered]
    if ordered and rng.random() < 0.3:
        target = rng.choice(ordered)
        operator, words = rng.choice(_COMPARISONS)
        bound = rng.choice(p.records)[target.name]
        sql = f"DELETE FROM {p.table} WHERE {quoted(target.name)} {operator} {bound}"
        text = rng.choice(
            (
                "Delete all {n} with {o} {b} {t}.",
                "Remove every {s} whose {t} is {o} {b}.",
            )
        ).format(n=sheet.plural, s=sheet.singular, o=rng.choice(words), b=bound, t=target.name)
        return Built((sql,), text)
    where, cond = p.conditions()
    text = rng.choice(
        (
            "Delete the rows where {c}.",
            "Remove every {s} for which {c}.",
            "Get rid of all entries where {c}.",
            "Please delete each {s} when {c}.",
        )
    ).format(s=sheet.singular, c=cond)
    return Built((f"DELETE FROM {p.table} WHERE {where}",), text)


KINDS: dict[str, Callable[[Plain], Built | None]] = {
    "lookup": _lookup,
    "count": _count,
    "aggregate": _aggregate,
    "extreme": _extreme,
    "comparison": _comparison,
    "listing": _listing,
    "insert": _insert,
    "update": _update,
    "delete": _delete,
}


def plain_task(rng: random.Random, maker: TableMaker, made: MadeSheet) -> Built | None:
    """A plain task of a random kind over `made`, its wording varied in case and ending;
    None when the drawn kind does not fit the table."""
    built = rng.choice(tuple(KINDS.values()))(Plain(rng, maker, made))
    if built is None:
        return None
    text = built.instruction
    text = text[0].upper() + text[1:] if rng.random() < 0.6 else text[0].lower() + text[1:]
    if rng.random() < 0.2:
        text = text.rstrip("?.")
    return Built(built.statements, text)
