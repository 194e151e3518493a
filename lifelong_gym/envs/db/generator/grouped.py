"""Queries that group rows, aggregate each group and keep groups by HAVING conditions."""

from __future__ import annotations

from typing import Any

from .conditions import Ref
from .context import Built, Context
from .domains import CATEGORY, INTEGER, MONEY, Column
from .queries import join_words, limit_clause, summary

HAVING = (
    "having_single_condition_with_aggregate",
    "having_multiple_conditions_with_aggregate",
    "having_aggregate_calculation",
)


def grouped(ctx: Context, want: set[str]) -> Built | None:
    """Per-group aggregates, optionally filtered by WHERE and HAVING, sorted and limited."""
    rng = ctx.rng
    domain = ctx.domain
    source, ref = ctx.alias("table_alias" in want or rng.random() < 0.15)
    many = "group_by_multiple_columns" in want or (
        "group_by_single_column" not in want and rng.random() < 0.3
    )
    keys = rng.sample(ctx.columns(CATEGORY), 2 if many else 1)
    where = ctx.conditions.combine(ref, "single") if rng.random() < 0.3 else None
    aliased = "column_alias" in want or rng.random() < 0.4
    picked = [summary(ctx, ref, aliased, tuple(keys)) for _ in range(rng.choice((1, 1, 2)))]
    if len({p[0] for p in picked}) < len(picked):
        return None
    base = f" FROM {source}" + (f" WHERE {where.sql}" if where else "")
    group = " GROUP BY " + ", ".join(ref(k.name) for k in keys)
    having = _having(ctx, ref, want, base + group)
    if having is False:
        return None
    select = ", ".join([ref(k.name) for k in keys] + [p[0] for p in picked])
    sql = f"SELECT {select}{base}{group}"
    if having:
        sql += f" HAVING {having[0]}"
    order_sql, order_text = _order(ctx, ref, want, keys, picked)
    sql += f" ORDER BY {order_sql}"
    total = len(ctx.probe(sql))
    if total < 2:
        return None
    cut = limit_clause(ctx, want, total)
    if cut is False:
        return None
    names = join_words([k.name for k in keys])
    scope = f"the {domain.plural}" + (f" for which {where.text}" if where else "")
    report = join_words([k.name for k in keys] + [p[1] for p in picked])
    text = rng.choice(
        (
            f"Group {scope} by {names}. For each group, report {report}",
            f"Break {scope} down by {names} and give, per group, {report}",
            f"For every {names} combination among {scope}, show {report}"
            if many
            else f"For every {names} among {scope}, show {report}",
        )
    )
    if having:
        text += f"; keep only the groups in which {having[1]}"
    text += f"; {order_text}"
    if cut:
        sql += cut[0]
        text += f"; {cut[1]}"
    return Built((sql,), text + ". Return the columns in the order they are listed.")


def _order(
    ctx: Context, ref: Ref, want: set[str], keys: list[Column], picked: list[tuple[str, str]]
) -> tuple[str, str]:
    """Sort by the group keys, or by the first aggregate with the keys breaking ties."""
    rng = ctx.rng
    single_ok = len(keys) == 1 and "order_by_multiple_columns_same_direction" not in want
    if "order_by_multiple_columns_different_directions" in want:
        by_keys = False
    elif "order_by_single_column" in want:
        by_keys = True
    else:
        by_keys = rng.random() < 0.5 and (
            single_ok or "order_by_multiple_columns_different_directions" not in want
        )
    if by_keys:
        down = rng.random() < 0.3
        sql = ", ".join(ref(k.name) + (" DESC" if down else "") for k in keys)
        return sql, ctx.order_words([(k.name, down) for k in keys])
    expression, words = picked[0]
    label = expression.split(" AS ")[-1] if " AS " in expression else expression
    same = "order_by_multiple_columns_same_direction" in want or (
        "order_by_multiple_columns_different_directions" not in want and rng.random() < 0.3
    )
    down = rng.random() < 0.7
    key_down = down if same else not down
    sql = ", ".join(
        [label + (" DESC" if down else "")]
        + [ref(k.name) + (" DESC" if key_down else "") for k in keys]
    )
    spoken = words.split(" (name it")[0]
    return sql, ctx.order_words([(spoken, down)] + [(k.name, key_down) for k in keys])


def _having(
    ctx: Context, ref: Ref, want: set[str], grouped_from: str
) -> tuple[str, str] | None | bool:
    """A HAVING condition that keeps some groups but not all (False when none fits)."""
    rng = ctx.rng
    wanted = [s for s in HAVING if s in want]
    if not wanted and rng.random() > 0.35:
        return None
    calc = "having_aggregate_calculation" in wanted or (not wanted and rng.random() < 0.3)
    count = 2 if "having_multiple_conditions_with_aggregate" in wanted else 1
    if not wanted and rng.random() < 0.3:
        count = 2
    terms = []
    for number in range(count):
        term = _term(ctx, ref, calc and number == 0, grouped_from)
        if term is None:
            return False
        terms.append(term)
    joiner = "AND" if count == 1 or rng.random() < 0.7 else "OR"
    text = f" {joiner.lower()} ".join(t[1] for t in terms)
    if joiner == "OR":
        text += " (either is enough)"
    return f" {joiner} ".join(t[0] for t in terms), text


def _term(ctx: Context, ref: Ref, calc: bool, grouped_from: str) -> tuple[str, str] | None:
    rng = ctx.rng
    num = rng.choice(ctx.columns(INTEGER, MONEY))
    n = ref(num.name)
    if calc:
        expression, words = rng.choice(
            (
                (f"MAX({n}) - MIN({n})", f"the highest {num.name} minus the lowest {num.name}"),
                (f"SUM({n}) - MAX({n})", f"the total {num.name} without the largest one"),
                (f"MAX({n}) + MIN({n})", f"the highest plus the lowest {num.name}"),
            )
        )
    else:
        expression, words = rng.choice(
            (
                ("COUNT(*)", f"the number of {ctx.domain.plural}"),
                (f"SUM({n})", f"the total {num.name}"),
                (f"MAX({n})", f"the highest {num.name}"),
                (f"MIN({n})", f"the lowest {num.name}"),
                (f"AVG({n})", f"the average {num.name}"),
            )
        )
    values = sorted({_number(row[0]) for row in ctx.probe(f"SELECT {expression}{grouped_from}")})
    whole = expression == "COUNT(*)" or (num.role == INTEGER and not expression.startswith("AVG"))
    found = _threshold(rng, values, whole)
    if found is None:
        return None
    op, literal = found
    word = {">": "greater than", "<": "less than", ">=": "at least", "<=": "at most"}[op]
    return f"{expression} {op} {literal}", f"{words} is {word} {literal}"


def _threshold(rng: Any, values: list[float], whole: bool) -> tuple[str, str] | None:
    """A comparison that splits the values: exact for whole numbers, else a midpoint."""
    if whole:
        if len(values) < 2:
            return None
        low, high = rng.choice(list(zip(values, values[1:], strict=False)))
        return rng.choice(((">=", str(int(high))), ("<=", str(int(low)))))
    gaps = [(a, b) for a, b in zip(values, values[1:], strict=False) if b - a > 0.05]
    if not gaps:
        return None
    low, high = rng.choice(gaps)
    middle = round((low + high) / 2, 2)
    if not low + 0.01 < middle < high - 0.01:
        return None
    return rng.choice((">", "<")), f"{middle:.2f}"


def _number(value: Any) -> float:
    return float(value) if value is not None else 0.0
