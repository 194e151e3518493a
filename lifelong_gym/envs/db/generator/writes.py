"""Tasks that change the table: INSERT new rows, UPDATE some rows, DELETE some rows."""

from __future__ import annotations

from .conditions import literal, no_alias, spoken
from .context import Built, Context
from .domains import CATEGORY, DAY, INTEGER, KEY, MONEY, NAME
from .queries import WHERE_SHAPES, join_words


def insert(ctx: Context, want: set[str]) -> Built | None:
    """Add one or two new rows with every value given."""
    rng = ctx.rng
    domain = ctx.domain
    count = rng.choice((1, 1, 2))
    key = ctx.columns(KEY)[0]
    name = ctx.columns(NAME)[0]
    next_key = max(r[key.name] for r in ctx.records) + 1
    names = ctx.maker.names(domain, count, {r[name.name] for r in ctx.records})
    rows = []
    for number in range(count):
        row = {}
        for column in domain.columns:
            if column.role == KEY:
                row[column.name] = next_key + number
            elif column.role == NAME:
                row[column.name] = names[number]
            else:
                taken = {r[column.name] for r in ctx.records} | {r.get(column.name) for r in rows}
                row[column.name] = ctx.maker.value(column, taken)
        rows.append(row)
    columns = [c.name for c in domain.columns]
    values = ", ".join(
        "(" + ", ".join(literal(c, row[c.name]) for c in domain.columns) + ")" for row in rows
    )
    sql = f"INSERT INTO {domain.table} ({', '.join(columns)}) VALUES {values}"
    described = [
        join_words([f"{c.name} {spoken(c, row[c.name])}" for c in domain.columns]) for row in rows
    ]
    if count == 1:
        text = rng.choice(
            (
                f"Add a new {domain.singular} to the {domain.table} table with {described[0]}.",
                f"Insert one row into {domain.table}: {described[0]}.",
                f"A new {domain.singular} must be recorded in {domain.table}: {described[0]}.",
            )
        )
    else:
        text = (
            f"Insert two new {domain.plural} into {domain.table}: one with {described[0]}, "
            f"and another with {described[1]}."
        )
    return Built((sql,), text)


def update(ctx: Context, want: set[str]) -> Built | None:
    """Change one column of the rows that pass a filter."""
    rng = ctx.rng
    domain = ctx.domain
    shape = next((WHERE_SHAPES[s] for s in want if s in WHERE_SHAPES), None)
    if shape is None and rng.random() < 0.9:
        shape = rng.choice(("single", "single", "multiple", "nested"))
    where = ctx.conditions.combine(no_alias, shape) if shape else None
    target = rng.choice(ctx.columns(CATEGORY, INTEGER, MONEY, DAY))
    rows = ctx.records
    if where is not None:
        keys = {
            r[0] for r in ctx.probe(f"SELECT {_key(ctx)} FROM {domain.table} WHERE {where.sql}")
        }
        rows = [r for r in rows if r[_key(ctx)] in keys]
    if not rows or (where is not None and len(rows) == len(ctx.records)):
        return None
    if target.role in (CATEGORY, DAY):
        value = ctx.maker.value(target)
        if all(r[target.name] == value for r in rows):
            return None
        change = f"{target.name} = {literal(target, value)}"
        words = f"set {target.name} to {spoken(target, value)}"
    else:
        step = rng.choice((1, 2, 5, 10)) if target.role == INTEGER else rng.choice((5, 12.5, 100))
        amount = literal(target, step)
        up = rng.random() < 0.7
        change = f"{target.name} = {target.name} {'+' if up else '-'} {amount}"
        words = f"{'increase' if up else 'decrease'} {target.name} by {amount}"
    sql = f"UPDATE {domain.table} SET {change}"
    scope = f"every {domain.singular}"
    if where is not None:
        sql += f" WHERE {where.sql}"
        scope = f"the {domain.plural} for which {where.text}"
    text = rng.choice(
        (
            f"In the {domain.table} table, {words} for {scope}.",
            f"Update the {domain.table} table: {words} for {scope}.",
            f"Apply this change to {domain.table}: {words} for {scope}.",
        )
    )
    return Built((sql,), text[0].upper() + text[1:])


def delete(ctx: Context, want: set[str]) -> Built | None:
    """Remove the rows that pass a filter (some, never all)."""
    rng = ctx.rng
    domain = ctx.domain
    shape = next((WHERE_SHAPES[s] for s in want if s in WHERE_SHAPES), None) or rng.choice(
        ("single", "single", "multiple", "nested")
    )
    where = ctx.conditions.combine(no_alias, shape)
    (gone,) = ctx.probe(f"SELECT COUNT(*) FROM {domain.table} WHERE {where.sql}")[0]
    if not 0 < gone < len(ctx.records):
        return None
    sql = f"DELETE FROM {domain.table} WHERE {where.sql}"
    text = rng.choice(
        (
            f"Delete every {domain.singular} from {domain.table} for which {where.text}.",
            f"Remove from the {domain.table} table all {domain.plural} for which {where.text}.",
            f"Clean up {domain.table}: delete each {domain.singular} for which {where.text}.",
        )
    )
    return Built((sql,), text)


def _key(ctx: Context) -> str:
    return ctx.columns(KEY)[0].name
