"""Scoring a SELECT task's final answer against the ground-truth rows, as the benchmark does."""

from __future__ import annotations

import ast
import functools
import math
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

TOLERANCE = 1e-6
ANSWER_CACHE = 4096  # answers parsed before (a task solved again gives the same text)
_SCALARS = (int, float, str, bool, type(None))


def parse_answer(text: str) -> list[tuple[Any, ...]]:
    """The final answer as rows: a list of tuples, a single tuple, or a bare value."""
    return list(_parsed(text))


@functools.lru_cache(maxsize=ANSWER_CACHE)
def _parsed(text: str) -> tuple[tuple[Any, ...], ...]:
    return tuple(_parse(text))


def _parse(text: str) -> list[tuple[Any, ...]]:
    text = text.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return [(_strip_quotes(text),)]
    if isinstance(value, list):
        return [tuple(item) if isinstance(item, (list, tuple)) else (item,) for item in value]
    if isinstance(value, tuple):
        return [value]
    return [(value,)]


def score_rows(
    answer: Sequence[tuple[Any, ...]], truth: Sequence[tuple[Any, ...]]
) -> tuple[bool, float]:
    """Whether the answer is right, and its row overlap (partial credit).

    Right when the rows match, or when a one-row truth is the answer's first column."""
    if _identical(answer, truth):
        return True, 1.0  # what the two below find, without their work on every value
    ok = rows_match(answer, truth) or (
        len(truth) == 1 and all(answer) and rows_match([tuple(r[0] for r in answer)], truth)
    )
    return ok, row_overlap(answer, truth)


def _identical(answer: Sequence[tuple[Any, ...]], truth: Sequence[tuple[Any, ...]]) -> bool:
    """The same rows in order, value for value, all plain scalars (there Python's equality is
    `values_match`'s, and NaN, equal to nothing, never passes)."""
    return (
        len(answer) == len(truth)
        and all(type(v) in _SCALARS for rows in (answer, truth) for row in rows for v in row)
        and tuple(answer) == tuple(truth)
    )


def rows_match(answer: Sequence[Sequence[Any]], truth: Sequence[Sequence[Any]]) -> bool:
    """Rows equal in order, numbers within 1e-6, strings exactly (outer quotes stripped)."""
    if len(answer) != len(truth):
        return False
    return all(
        len(a) == len(t) and all(values_match(x, y) for x, y in zip(a, t, strict=True))
        for a, t in zip(answer, truth, strict=True)
    )


def row_overlap(answer: Sequence[Sequence[Any]], truth: Sequence[Sequence[Any]]) -> float:
    """Partial credit: the rows the answer and the truth share, in any order, over the longer."""
    if not truth:
        return float(not answer)
    shared = Counter(map(_row_key, answer)) & Counter(map(_row_key, truth))
    return sum(shared.values()) / max(len(truth), len(answer))


def _row_key(row: Sequence[Any]) -> tuple[Any, ...]:
    """A row as comparable values: numbers to 1e-6 (so near-equal ones meet), text unquoted."""
    key: list[Any] = []
    for value in row:
        number = None if value is None else _number(value)
        if value is None:
            key.append(None)
        elif number is not None:
            key.append(round(number / TOLERANCE))
        else:
            key.append(_strip_quotes(str(value)))
    return tuple(key)


def values_match(answer: Any, truth: Any) -> bool:
    """One value against the truth."""
    if answer is None or truth is None:
        return answer is None and truth is None
    a, t = _number(answer), _number(truth)
    if a is not None and t is not None:
        return math.isclose(a, t, rel_tol=0.0, abs_tol=TOLERANCE)
    return _strip_quotes(str(answer)) == _strip_quotes(str(truth))


def _number(value: Any) -> float | None:
    """A value as a finite number, or None (inf, NaN and 10**400 are compared as text)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, Decimal)):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text
