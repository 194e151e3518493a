"""Queries that list rows or compute one row of aggregates, with filters and subqueries."""

from __future__ import annotations

from .conditions import Cond, Ref
from .context import Built, Context
from .domains import CATEGORY, INTEGER, KEY, MONEY, NAME, Column

WHERE_SHAPES = {
    "where_single_condition": "single",
    "where_multiple_conditions": "multiple",
    "where_nested_conditions": "nested",
}
SUBQUERY_KINDS = {
    "subquery_single": "single",
    "subquery_multiple": "multiple",
    "subquery_nested": "nested",
}
_OPENINGS = ("List", "Show", "Return", "Find", "Retrieve", "Give")


def filters(ctx: Context, ref: Ref, want: set[str], correlated: bool) -> Cond | None:
    """The WHERE condition a query needs for the wanted skills (or a random one)."""
    rng = ctx.rng
    shape = next((WHERE_SHAPES[s] for s in want if s in WHERE_SHAPES), None)
    sub = next((SUBQUERY_KINDS[s] for s in want if s in SUBQUERY_KINDS), None)
    if shape is None and sub is None:
        roll = rng.random()
        shape = "single" if roll < 0.4 else "multiple" if roll < 0.6 else None
        if shape is None and roll > 0.85:
            sub = "single"
    parts: list[Cond] = []
    if sub == "nested":
        parts.append(ctx.subqueries.nested(ref))
    elif sub is not None:
        parts.append(ctx.subqueries.single(ref, correlated))
        if sub == "multiple":
            parts.append(ctx.subqueries.single(ref, False))
    if shape is not None and (sub is None or shape == "single"):
        parts.insert(0, ctx.conditions.combine(ref, shape))
    if not parts:
        return None
    joiner = "OR" if len(parts) == 2 and sub == "multiple" and rng.random() < 0.3 else "AND"
    text = f" {joiner.lower()} ".join(p.text for p in parts)
    if joiner == "OR":
        text += " (either is enough)"
    return Cond(f" {joiner} ".join(p.sql for p in parts), text, max(p.depth for p in parts))


def listing(ctx: Context, want: set[str]) -> Built | None:
    """SELECT some columns of the rows that pass a filter, sorted, maybe cut by LIMIT."""
    rng = ctx.rng
    domain = ctx.domain
    source, ref = ctx.alias("table_alias" in want or rng.random() < 0.15)
    correlated = source != domain.table and rng.random() < 0.5
    where = filters(ctx, ref, want, correlated)
    name = ctx.columns(NAME)[0]
    others = [c for c in domain.columns if c.role not in (KEY, NAME)]
    chosen = [name, *rng.sample(others, rng.randint(0, 2))]
    rng.shuffle(chosen)
    items = [ref(c.name) for c in chosen]
    words = [c.name for c in chosen]
    labels = list(words)
    if "column_alias" in want or rng.random() < 0.15:
        item, word, label = _aliased(ctx, ref)
        items.append(item)
        words.append(word)
        labels.append(label)
    order_sql, order_text = _order(ctx, ref, want)
    sql = f"SELECT {', '.join(items)} FROM {source}"
    if where is not None:
        sql += f" WHERE {where.sql}"
    sql += f" ORDER BY {order_sql}"
    total = len(ctx.probe(sql))
    if total == 0 or (where is not None and total == len(ctx.records)):
        return None
    cut = limit_clause(ctx, want, total)
    if cut is False:
        return None
    text = f"{rng.choice(_OPENINGS)} the {join_words(words)} of the {domain.plural}"
    if where is not None:
        text += f" {rng.choice(('for which', 'where'))} {where.text}"
    text += f", {order_text}"
    if cut:
        sql += cut[0]
        text += f"; {cut[1]}"
    return Built((sql,), text + f". Return the columns in this order: {', '.join(labels)}.")


def aggregate(ctx: Context, want: set[str]) -> Built | None:
    """One row of aggregates over the rows that pass a filter."""
    rng = ctx.rng
    domain = ctx.domain
    source, ref = ctx.alias("table_alias" in want or rng.random() < 0.1)
    where = filters(ctx, ref, want, False)
    aliased = "column_alias" in want or rng.random() < 0.3
    picked = [summary(ctx, ref, aliased) for _ in range(rng.choice((1, 1, 2)))]
    if len({p[0] for p in picked}) < len(picked):
        return None
    sql = f"SELECT {', '.join(p[0] for p in picked)} FROM {source}"
    if where is not None:
        sql += f" WHERE {where.sql}"
    rows = ctx.probe(sql)
    if not rows or rows[0][0] in (None, 0) and where is not None:
        return None
    scope = f"the {domain.plural}" + (f" for which {where.text}" if where else "")
    text = rng.choice(
        (
            f"Considering {scope}, compute {join_words([p[1] for p in picked])}.",
            f"For {scope}, what is {join_words([p[1] for p in picked])}?",
            f"Report {join_words([p[1] for p in picked])} over {scope}.",
        )
    )
    return Built((sql,), text + " Return a single row with these values in this order.")


def summary(
    ctx: Context, ref: Ref, aliased: bool, groups: tuple[Column, ...] = ()
) -> tuple[str, str]:
    """An aggregate (SQL, wording), with an alias when `aliased`; none counts a group key."""
    rng = ctx.rng
    domain = ctx.domain
    num = rng.choice(ctx.columns(INTEGER, MONEY))
    cat = rng.choice([c for c in ctx.columns(CATEGORY) if c not in groups] or [None])
    options = [
        ("COUNT(*)", f"the number of {domain.plural}", f"{domain.singular}_count"),
        (
            f"ROUND(AVG({ref(num.name)}), 2)",
            f"the average {num.name} rounded to 2 decimal places",
            f"average_{num.name}",
        ),
        (f"MAX({ref(num.name)})", f"the highest {num.name}", f"max_{num.name}"),
        (f"MIN({ref(num.name)})", f"the lowest {num.name}", f"min_{num.name}"),
        (_total(ref, num), f"the total {num.name}", f"total_{num.name}"),
    ]
    if cat is not None:
        options.append(
            (
                f"COUNT(DISTINCT {ref(cat.name)})",
                f"how many different {cat.name} values occur",
                f"distinct_{cat.name}s",
            )
        )
    sql, words, label = rng.choice(options)
    if aliased:
        return f"{sql} AS {label}", f"{words} (name it {label})"
    return sql, words


def _total(ref: Ref, column: Column) -> str:
    total = f"SUM({ref(column.name)})"
    return f"ROUND({total}, 2)" if column.role == MONEY else total


def _aliased(ctx: Context, ref: Ref) -> tuple[str, str, str]:
    """A computed, aliased column: a multiple of a number, or a difference from the minimum."""
    rng = ctx.rng
    num = rng.choice(ctx.columns(INTEGER, MONEY))
    if rng.random() < 0.5:
        factor = rng.choice((2, 3, 4, 10, 12))
        label = f"{num.name}_times_{factor}"
        sql = f"{ref(num.name)} * {factor}"
        words = f"{num.name} multiplied by {factor} (as {label})"
    else:
        label = f"{num.name}_above_min"
        sql = f"{ref(num.name)} - (SELECT MIN({num.name}) FROM {ctx.domain.table})"
        words = f"amount by which {num.name} exceeds the smallest {num.name} (as {label})"
    if num.role == MONEY:
        sql = f"ROUND({sql}, 2)"
    return f"{sql} AS {label}", words, label


def _order(ctx: Context, ref: Ref, want: set[str]) -> tuple[str, str]:
    rng = ctx.rng
    kind = (
        "single"
        if "order_by_single_column" in want
        else "same"
        if "order_by_multiple_columns_same_direction" in want
        else "different"
        if "order_by_multiple_columns_different_directions" in want
        else rng.choice(("single", "single", "same", "different"))
    )
    last = rng.choice(ctx.unique_columns())
    if kind == "single":
        keys = [(last, rng.random() < 0.5)]
    else:
        first = rng.choice(ctx.grouping_columns())
        down = rng.random() < 0.5
        keys = [(first, down), (last, down if kind == "same" else not down)]
    sql = ", ".join(ref(c.name) + (" DESC" if d else "") for c, d in keys)
    return sql, ctx.order_words([(c.name, d) for c, d in keys])


def limit_clause(ctx: Context, want: set[str], total: int) -> tuple[str, str] | None | bool:
    """The LIMIT clause wanted (False when it cannot be had), or sometimes a random one."""
    offset = "limit_and_offset" in want
    if not offset and "limit_only" not in want:
        if ctx.rng.random() > 0.2:
            return None
        offset = ctx.rng.random() < 0.4
    cut = ctx.limit(total, offset)
    return False if cut is None else cut


def join_words(words: list[str]) -> str:
    """Words joined as English lists them: a, b and c."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
