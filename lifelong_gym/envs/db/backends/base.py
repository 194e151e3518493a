"""What a database back-end does for the DB environment."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from lifelong_gym.errors import BackendError as BackendError

from ..tasks import TableInfo

DEFAULT_STATEMENT_TIMEOUT = 5.0
DEFAULT_MAX_ROWS = 1000


class UnreadableTable(LookupError):
    """The task's table cannot be scored: gone, replaced by a view, or not readable in time."""


@dataclass
class StatementResult:
    """What one agent statement did: its rows (None when it returns none), or an error."""

    rows: list[tuple[Any, ...]] | None = None
    error: str | None = None
    more_rows: bool = False


class DatabaseBackend(ABC):
    """One database per task: `start` creates it with the task's table, `discard` drops it."""

    def __init__(
        self,
        *,
        statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
        max_rows: int = DEFAULT_MAX_ROWS,
    ):
        self.statement_timeout = statement_timeout
        self.max_rows = max_rows

    @abstractmethod
    def start(self, table: TableInfo) -> None:
        """Create a fresh database holding `table` with its rows."""

    @abstractmethod
    def execute(self, sql: str) -> StatementResult:
        """Run one agent statement within the time and row limits; errors are results."""

    @property
    @abstractmethod
    def database(self) -> str | None:
        """The name of the task's database, as the agent's `DATABASE()` shows it (None when
        no task is running)."""

    @abstractmethod
    def table_hash(self, table: TableInfo) -> str | None:
        """The benchmark's hash of the table's current rows (None when it has none)."""

    @abstractmethod
    def discard(self) -> None:
        """Drop the task's database; safe to call when none exists."""

    @abstractmethod
    def close(self) -> None:
        """Free every connection and leftover; safe to call twice."""


def overrun_message(timeout: float) -> str:
    """The observation for a statement stopped by the time limit."""
    return f"the statement ran longer than {timeout:g} s and was stopped"


def plain_value(value: Any) -> Any:
    """A value as plain Python for observations: numbers, strings or None."""
    if isinstance(value, Decimal):
        return (
            int(value)
            if value == value.to_integral_value() and value.as_tuple().exponent >= 0
            else float(value)
        )
    if isinstance(value, (datetime, date, time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return value
