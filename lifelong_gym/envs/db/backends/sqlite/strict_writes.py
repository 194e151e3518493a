"""What strict MySQL refuses in a write, refused on SQLite in MySQL's words.

MariaDB's default sql_mode (STRICT_TRANS_TABLES, ERROR_FOR_DIVISION_BY_ZERO), which the
MySQL back-end runs under unless told otherwise, stops an INSERT or UPDATE that would store
text that is no number in a numeric column (1366, or 1265 for a number followed by junk),
divide by zero (1365) or read text as a number in a comparison (1292). SQLite stores and
divides without a word; here a CHECK constraint on each numeric column of the task's
table (`store.stored_check`) and the translation's wrappers (`STRICT_NUMBER`, `STRICT_DIVISOR`)
stop the statement instead. SQLite tells only that a function failed, so the function
leaves MySQL's reply for the back-end (`take_refusal`).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, NoReturn

from ..error_replies import VALUE_CHARACTERS, cut, division_by_zero, mysql_error

STORED_VALUE = "STORED_VALUE"
_NUMBER_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?\s*", re.I)
_NUMBER_PREFIX = re.compile(r"\s*[-+]?(\d|\.\d)")


@dataclass(frozen=True)
class Refusal:
    """MySQL's reply to a write a function stopped; `rowid` is the row it stopped at, when
    the reply ends with the row's number ("... at row N")."""

    reply: str
    rowid: int | None = None


class _Pending(threading.local):
    refusal: Refusal | None = None


_pending = _Pending()


def _refuse(refusal: Refusal) -> NoReturn:
    _pending.refusal = refusal
    raise ValueError(refusal.reply)


def take_refusal() -> Refusal | None:
    """The refusal the last failed statement's function left, once."""
    refusal, _pending.refusal = _pending.refusal, None
    return refusal


def strict_number(value: Any, kind: str) -> Any:
    """A text read as a number (of MySQL's `kind`, DECIMAL or DOUBLE) in a write, as strict
    MySQL does: junk is an error."""
    if not isinstance(value, str):
        return value
    if not _NUMBER_TEXT.fullmatch(value):
        shown = cut(value, VALUE_CHARACTERS)
        _refuse(Refusal(mysql_error(1292, f"Truncated incorrect {kind} value: '{shown}'")))
    return float(value)


def strict_divisor(value: Any) -> Any:
    """A divisor in a write: zero stops the statement, as MySQL's
    ERROR_FOR_DIVISION_BY_ZERO does in strict mode."""
    if value is not None and value == 0:
        _refuse(Refusal(division_by_zero()))
    return value


def stored_value(value: Any, kind: str, where: str, column: str, rowid: int) -> int:
    """1 when a value may be stored in a numeric column (`where`: the column as MySQL's
    message names it): SQLite's affinity has made a number of every text that reads as one,
    so text left is what strict MySQL refuses."""
    if not isinstance(value, str):
        return 1
    if _NUMBER_PREFIX.match(value):
        reply = mysql_error(1265, f"Data truncated for column '{column}' at row")
    else:
        shown = cut(value, VALUE_CHARACTERS)
        reply = mysql_error(1366, f"Incorrect {kind} value: '{shown}' for column {where} at row")
    _refuse(Refusal(reply, rowid))


STRICT_FUNCTIONS = {
    "STRICT_NUMBER": (2, strict_number),
    "STRICT_DIVISOR": (1, strict_divisor),
    STORED_VALUE: (5, stored_value),
}
