"""The plain-question style: questions and changes worded as people ask for them, over one
table with human column names (`docs/db-tasks.md`, "Styles")."""

from __future__ import annotations

import random
from collections.abc import Callable

from .context import Built
from .domains import TableMaker
from .sheets import GROUP, Column, MadeSheet, label_values, literal, quoted, value

#: The skills plain tasks use (one table, flat conditions, one sort key, LIMIT 1, writes).
PLAIN_SKILLS = (
    "select", "insert", "update", "delete", "where_single_condition",
    "where_multiple_conditions", "order_by_single_column", "limit_only",
)  # fmt: skip

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


#: How each kind of task may be worded (at least four ways for each question).
_PHRASINGS: dict[str, tuple[str, ...]] = {
    "lookup": (
        "What is the {column} when {condition}?",
        "What are the {column} values where {condition}?",
        "Tell me the {column} when {condition}.",
        "Name the {column} for which {condition}.",
        "What {column} is listed where {condition}?",
        "Which {column} goes with the row where {condition}?",
    ),
    "count": (
        "How many {rows} are there where {condition}?",
        "What is the number of {rows} when {condition}?",
        "Count the {rows} for which {condition}.",
        "How many entries are listed when {condition}?",
        "What is the total number of {rows} where {condition}?",
    ),
    "aggregate": (
        "What is the {aggregate} {column}{scope}?",
        "What was the {aggregate} {column}{scope}?",
        "Give the {aggregate} {column}{scope}.",
        "Tell me the {aggregate} {column}{scope}.",
        "Name the {aggregate} {column}{scope}.",
    ),
    "extreme": (
        "Which {row} has the {extreme} {column}?",
        "What {label} has the {extreme} {column}?",
        "Name the {row} with the {extreme} {column}.",
        "Tell me which {row} had the {extreme} {column}.",
        "Which {label} comes with the {extreme} {column}?",
    ),
    "count_compared": (
        "How many {rows} have {compared} {bound} {column}?",
        "What is the number of {rows} with {column} {compared} {bound}?",
        "Count the {rows} whose {column} is {compared} {bound}.",
        "How many rows have {column} {compared} {bound}?",
    ),
    "list_compared": (
        "Which {rows} have {compared} {bound} {column}?",
        "List the {label} with {compared} {bound} {column}.",
        "What are the {label} values where {column} is {compared} {bound}?",
        "Show every {row} whose {column} is {compared} {bound}.",
    ),
    "listing": (
        "List all {shown} where {condition}{order}.",
        "Show the {shown} of the {rows} when {condition}{order}.",
        "Which {shown} are there where {condition}{order}?",
        "Give me every {shown} for which {condition}{order}.",
    ),
    "insert": (
        "Add a new row to the table: {described}.",
        "Insert a {row} with {described}.",
        "Please record a new {row}: {described}.",
        "A new entry needs adding, with {described}.",
        "Put this {row} into the table - {described}.",
    ),
    "update": (
        "Change the {column} to {value} where {condition}.",
        "Set the {column} to {value} for every {row} where {condition}.",
        "Update the table so that the {column} is {value} when {condition}.",
        "The {column} should be {value} for the rows where {condition}; fix it.",
        "when {condition}, the {column} must now read {value}.",
    ),
    "delete_compared": (
        "Delete all {rows} with {compared} {bound} {column}.",
        "Remove every {row} whose {column} is {compared} {bound}.",
        "Get rid of the {rows} that have {compared} {bound} {column}.",
        "Please delete each {row} with a {column} {compared} {bound}.",
    ),
    "delete": (
        "Delete the rows where {condition}.",
        "Remove every {row} for which {condition}.",
        "Get rid of all entries where {condition}.",
        "Please delete each {row} when {condition}.",
    ),
}


class Plain:
    """One plain task in the making over a freshly made sheet."""

    def __init__(self, rng: random.Random, maker: TableMaker, made: MadeSheet):
        self.rng, self.maker, self.made = rng, maker, made
        self.table = quoted(made.table.name)
        self.records = made.records
        self.label = made.columns[0]
        self.others = list(made.columns[1:])
        self.ordered = [c for c in self.others if c.ordered]

    def say(self, kind: str, **words: object) -> str:
        """One of the phrasings of `kind`, filled in with `words` and the sheet's nouns."""
        sheet = self.made.sheet
        nouns = {"row": sheet.singular, "rows": sheet.plural, "label": self.label.name}
        return self.rng.choice(_PHRASINGS[kind]).format(**nouns, **words)

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

    def comparison(self) -> tuple[str, dict[str, object]] | None:
        """A test of a typed number column against a value of a row: (SQL, words), or None
        when the table has no such column."""
        if not self.ordered:
            return None
        column = self.rng.choice(self.ordered)
        operator, spoken = self.rng.choice(_COMPARISONS)
        bound = self.rng.choice(self.records)[column.name]
        words = {"column": column.name, "compared": self.rng.choice(spoken), "bound": bound}
        return f"{quoted(column.name)} {operator} {bound}", words


def _lookup(p: Plain) -> Built | None:
    target = p.rng.choice(p.others)
    where, cond = p.conditions(avoid=target)
    text = p.say("lookup", column=target.name, condition=cond)
    return Built((f"SELECT {quoted(target.name)} FROM {p.table} WHERE {where}",), text)


def _count(p: Plain) -> Built | None:
    where, cond = p.conditions()
    text = p.say("count", condition=cond)
    return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {where}",), text)


def _aggregate(p: Plain) -> Built | None:
    rng = p.rng
    target = rng.choice([c for c in p.others if c.numeric])
    function = rng.choice(("SUM", "AVG", "MAX", "MIN") if target.ordered else ("SUM", "AVG"))
    sql = f"SELECT {function}({quoted(target.name)}) FROM {p.table}"
    scope = ""
    if rng.random() < 0.7:
        where, cond = p.conditions(avoid=target)
        sql += f" WHERE {where}"
        scope = rng.choice((" when {}", " where {}", " for which {}", " if {}")).format(cond)
    word = rng.choice(_AGGREGATES[function])
    return Built((sql,), p.say("aggregate", aggregate=word, column=target.name, scope=scope))


def _extreme(p: Plain) -> Built | None:
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
    return Built((sql,), p.say("extreme", extreme=word, column=target.name))


def _compared(p: Plain) -> Built | None:
    found = p.comparison()
    if found is None:
        return None
    test, words = found
    if p.rng.random() < 0.35:
        text = p.say("count_compared", **words)
        return Built((f"SELECT COUNT(*) FROM {p.table} WHERE {test}",), text)
    text = p.say("list_compared", **words)
    return Built((f"SELECT {quoted(p.label.name)} FROM {p.table} WHERE {test}",), text)


def _listing(p: Plain) -> Built | None:
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
    return Built((sql,), p.say("listing", shown=names, condition=cond, order=order))


def _insert(p: Plain) -> Built | None:
    rng = p.rng
    taken = {r[p.label.name] for r in p.records}
    row = [label_values(p.maker, p.made.sheet, 1, taken)[0], *(value(rng, c) for c in p.others)]
    columns = p.made.columns
    sql = (
        f"INSERT INTO {p.table} ({', '.join(quoted(c.name) for c in columns)}) "
        f"VALUES ({', '.join(literal(c, v) for c, v in zip(columns, row, strict=True))})"
    )
    pair = rng.choice(("{} {}", "{}: {}", "{} is {}"))
    described = ", ".join(pair.format(c.name, v) for c, v in zip(columns, row, strict=True))
    return Built((sql,), p.say("insert", described=described))


def _update(p: Plain) -> Built | None:
    target = p.rng.choice(p.others)
    new = value(p.rng, target)
    where, cond = p.conditions(avoid=target)
    sql = f"UPDATE {p.table} SET {quoted(target.name)} = {literal(target, new)} WHERE {where}"
    return Built((sql,), p.say("update", column=target.name, value=new, condition=cond))


def _delete(p: Plain) -> Built | None:
    found = p.comparison() if p.rng.random() < 0.3 else None
    if found is not None:
        test, words = found
        return Built((f"DELETE FROM {p.table} WHERE {test}",), p.say("delete_compared", **words))
    where, cond = p.conditions()
    return Built((f"DELETE FROM {p.table} WHERE {where}",), p.say("delete", condition=cond))


KINDS: dict[str, Callable[[Plain], Built | None]] = {
    "lookup": _lookup,
    "count": _count,
    "aggregate": _aggregate,
    "extreme": _extreme,
    "comparison": _compared,
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
