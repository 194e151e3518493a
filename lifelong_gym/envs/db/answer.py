"""Scoring a SELECT task's final answer against the ground-truth rows, as the benchmark does."""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

TOLERANCE = 1e-6


def parse_answer(text: str) -> list[tuple[Any, ...]]:
    """The final answer as rows: a list of tuples, a single tuple, or a bare value."""
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
