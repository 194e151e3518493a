"""Plain changes: INSERT, UPDATE and DELETE worded as people ask for them, from a list of
values to a sentence stating the fact to record."""

from __future__ import annotations

from ..context import Built
from ..queries import join_words
from ..sheets import COUNT, DATE, GROUP, YEAR, Column, label_values, literal, quoted, value
from .base import Plain

#: A new row: {described} lists "column value" pairs in one of several ways, {quoted_pairs}
#: as "'value' for 'column'", {name} is the row's label and {facts} its other values.
_INSERTS = (
    "Add a new row to the table: {described}.",
    "Insert {a_row} with {described}.",
    "Please record a new {row}: {described}.",
    "A new entry needs adding, with {described}.",
    "Put this {row} into the table - {described}.",
    "Insert '{name}' into '{table}' with values {quoted_pairs}.",
    "Insert a new record into the '{table}' table with the values of {described}.",
    "Add to {table}: {described}.",
    "The {row} {name} has {facts}; record it in {table}.",
    "{name} is a new {row} with {facts}. Add it to the {table} table.",
    "We have a new {row}, {name}, with {facts} - please add it to {table}.",
)
_PAIRS = ("{} {}", "{}: {}", "{} is {}", "{} = {}")
#: A new row told as a story ({story}), as many crowd-written inserts are: its facts in
#: another order than the table's columns, and some without their column's name.
_INSERT_STORIES = (
    "{name}, {story}, was added to the {table} table.",
    "Record {a_row} in {table}: {name}, {story}.",
    "{name} - {story}. This was inserted into the {table} table.",
    "There is a new {row} for the {table} table: {name}, {story}.",
    "Put {name} into {table}; {story}.",
)
#: How often an insert is told as a story.
STORY_SHARE = 0.35
#: A change of one column of the row named {name}.
_UPDATES_BY_LABEL = (
    "Update the {column} of {name} to {value}.",
    "Change the {column} of the {row} named {name} to {value} in the {table} table.",
    "Set the {column} of {name} to {value}.",
    "{name}'s {column} should now be {value}; update it.",
    "In the `{table}` table, update the `{column}` column to '{value}' for the `{key}` {name}.",
)
#: A change of several columns ({changes}: "Goals to 5 and Club to Northside").
_UPDATES_OF_MANY = (
    "Update {name}'s {changes}.",
    "Change the {changes} for the {row} named {name}.",
    "For {name}, set the {changes}.",
    "Set {changes} for {name} in the {table} table.",
)
#: A change of one column where a condition holds.
_UPDATES_BY_CONDITION = (
    "Change the {column} to {value} where {condition}.",
    "Set the {column} to {value} for every {row} where {condition}.",
    "Update the table so that the {column} is {value} when {condition}.",
    "The {column} should be {value} for the rows where {condition}; fix it.",
    "when {condition}, the {column} must now read {value}.",
    "Set {column} to {value} where {condition}.",
)
_DELETES = (
    "Delete the rows where {condition}.",
    "Remove every {row} for which {condition}.",
    "Get rid of all entries where {condition}.",
    "Please delete each {row} when {condition}.",
    "Delete {name} from the {table} table.",
)
_DELETES_COMPARED = (
    "Delete all {rows} with {compared} {bound} {column}.",
    "Remove every {row} whose {column} is {compared} {bound}.",
    "Get rid of the {rows} that have {compared} {bound} {column}.",
    "Please delete each {row} with a {column} {compared} {bound}.",
)


def insert(p: Plain) -> Built | None:
    rng = p.rng
    taken = {r[p.label.name] for r in p.records}
    fresh = label_values(p.maker, p.made.sheet, 1, taken)
    if not fresh:
        return None  # the sheet's listed labels are all in the table
    others = list(p.others)
    if rng.random() < 0.35:  # some columns left unsaid (NULL)
        others = sorted(rng.sample(others, rng.randint(1, len(others))), key=p.others.index)
    columns: list[Column] = [p.label, *others]
    row = [fresh[0], *(value(rng, c) for c in others)]
    sql = (
        f"INSERT INTO {p.table} ({', '.join(quoted(c.name) for c in columns)}) "
        f"VALUES ({', '.join(literal(c, v) for c, v in zip(columns, row, strict=True))})"
    )
    named = list(zip(columns, row, strict=True))
    if rng.random() < STORY_SHARE:
        told = [_told(p, c, v, others) for c, v in named[1:]]
        rng.shuffle(told)
        return Built((sql,), p.say(_INSERT_STORIES, name=fresh[0], story=join_words(told)))
    pair = rng.choice(_PAIRS)
    facts = [f"{c.name} {v}" if rng.random() < 0.5 else f"a {c.name} of {v}" for c, v in named[1:]]
    words = {
        "described": ", ".join(pair.format(c.name, v) for c, v in named),
        "quoted_pairs": ", ".join(f"'{v}' for '{c.name}'" for c, v in named[1:]),
        "name": fresh[0],
        "facts": join_words(facts),
    }
    return Built((sql,), p.say(_INSERTS, **words))


def _told(p: Plain, column: Column, told: object, columns: list[Column]) -> str:
    """One fact of a story: a year or a day after "in" or "on", a group's value alone, a count
    before its column's name ("12 goals"); where that could belong to another of `columns`
    (two years, a value two columns may take, a short one such as "No"), the column's name in
    lower case before the value ("open sundays No")."""
    kind, name = column.kind, column.name.lower()
    alike = [c for c in columns if c.kind == kind]
    if kind in (YEAR, DATE) and len(alike) == 1:
        return f"{'in' if kind == YEAR else 'on'} {told}"
    if kind == GROUP and len(str(told)) > 3 and p.rng.random() < 0.7:
        if not any(told in c.field.choices for c in alike if c is not column):
            return str(told)
    if kind == COUNT and p.rng.random() < 0.5:
        return f"{told} {name}"
    return f"{name} {told}"


def update(p: Plain) -> Built | None:
    rng = p.rng
    targets = rng.sample(p.others, 2 if len(p.others) > 2 and rng.random() < 0.3 else 1)
    new = [value(rng, c) for c in targets]
    pairs = list(zip(targets, new, strict=True))
    sets = ", ".join(f"{quoted(c.name)} = {literal(c, v)}" for c, v in pairs)
    words = {"column": targets[0].name, "value": new[0], "key": p.label.name}
    if len(targets) > 1 or rng.random() < 0.6:  # the row named by its label, as people ask
        seen = rng.choice(p.records)[p.label.name]
        where = f"{quoted(p.label.name)} = {literal(p.label, seen)}"
        changes = " and ".join(f"{c.name} to {v}" for c, v in pairs)
        phrasings = _UPDATES_OF_MANY if len(targets) > 1 else _UPDATES_BY_LABEL
        text = p.say(phrasings, **words, name=seen, changes=changes)
    else:
        test = p.conditions(targets[0])
        where = test.sql
        text = p.say(_UPDATES_BY_CONDITION, **words, condition=test.plain)
    return Built((f"UPDATE {p.table} SET {sets} WHERE {where}",), text)


def delete(p: Plain) -> Built | None:
    rng = p.rng
    found = p.comparison(typed=rng.random() < 0.5) if rng.random() < 0.3 else None
    if found is not None:
        test, words = found
        text = p.say(_DELETES_COMPARED, **words)
        return Built((f"DELETE FROM {p.table} WHERE {test.sql}",), text)
    if rng.random() < 0.2:
        seen = rng.choice(p.records)[p.label.name]
        condition = f"the {p.label.name} is {seen}"
        where = f"{quoted(p.label.name)} = {literal(p.label, seen)}"
        text = p.say(_DELETES, condition=condition, name=seen)
        return Built((f"DELETE FROM {p.table} WHERE {where}",), text)
    test = p.conditions()
    text = p.say(_DELETES[:4], condition=test.plain)
    return Built((f"DELETE FROM {p.table} WHERE {test.sql}",), text)
