"""MySQL's date and time functions for SQLite, on dates stored as ISO text.

A result is a date ('YYYY-MM-DD') when MySQL's would be a DATE and a datetime
('YYYY-MM-DD HH:MM:SS') when it would be a DATETIME, which is how the MySQL driver's
values read in the agent's observation. Unreadable dates give NULL, as in MySQL.
"""

from __future__ import annotations

import calendar
import re
import time as clock
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

_MOMENT = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?)?\s*$"
)
_TIME = re.compile(r"\s*(-?\d{1,3}):(\d{1,2})(?::(\d{1,2}))?")
_TIME_UNITS = {"MICROSECOND", "SECOND", "MINUTE", "HOUR"}
_TIME_CODES = re.compile(r"%[-]?[HIMSfpTXrkl]")


def moment(value: Any) -> tuple[datetime, bool] | None:
    """A value as a datetime and whether it carried a time of day; None when unreadable."""
    if value is None:
        return None
    if isinstance(value, int) and 10000101 <= value <= 99991231:
        value = f"{value // 10000:04d}-{value // 100 % 100:02d}-{value % 100:02d}"
    found = _MOMENT.match(str(value))
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction = found.groups()
    try:
        when = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")),
        )
    except ValueError:
        return None
    return when, hour is not None


def show(when: datetime, with_time: bool) -> str:
    """A date or datetime as the MySQL driver's value reads."""
    if not with_time:
        return when.date().isoformat()
    text = when.isoformat(sep=" ", timespec="seconds")
    return text + (f".{when.microsecond:06d}" if when.microsecond else "")


def _part(read: Callable[[datetime], Any]) -> Callable[[Any], Any]:
    def part(value: Any) -> Any:
        found = moment(value)
        return None if found is None else read(found[0])

    return part


def _clock_part(index: int) -> Callable[[Any], int | None]:
    """HOUR / MINUTE / SECOND, of a datetime or of a bare time 'HH:MM:SS'."""

    def part(value: Any) -> int | None:
        found = moment(value)
        if found is not None:
            return (found[0].hour, found[0].minute, found[0].second)[index]
        match = _TIME.match(str(value)) if value is not None else None
        if match is None:
            return None
        return abs(int(match.group(index + 1) or 0))

    return part


def week(value: Any, mode: Any = 0) -> int | None:
    """WEEK(d[, mode]) for modes 0 (Sunday first, 0..53), 1 and 3 (ISO-like)."""
    found = moment(value)
    if found is None:
        return None
    day = found[0]
    if int(mode or 0) in (1, 3):
        year, number, _ = day.isocalendar()
        if int(mode) == 1 and year != day.year:
            return 0 if year < day.year else number
        return number
    return int(day.strftime("%U"))


def last_day(value: Any) -> str | None:
    """LAST_DAY(d): the month's last date."""
    found = moment(value)
    if found is None:
        return None
    day = found[0]
    return date(day.year, day.month, calendar.monthrange(day.year, day.month)[1]).isoformat()


def _add_months(when: datetime, months: int) -> datetime:
    total = when.year * 12 + when.month - 1 + months
    year, month = divmod(total, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return when.replace(year=year, month=month + 1, day=min(when.day, last))


def date_add(value: Any, amount: Any, unit: str) -> str | None:
    """DATE_ADD(d, INTERVAL n unit) (DATE_SUB passes -n); month ends clamp as in MySQL."""
    found = moment(value)
    if found is None or amount is None:
        return None
    when, with_time = found
    unit = unit.upper()
    try:
        count = float(amount) if unit == "SECOND" else int(float(amount))
        if unit in ("MONTH", "QUARTER", "YEAR"):
            months = count * {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit]
            when = _add_months(when, months)
        else:
            seconds = {"MICROSECOND": 1e-6, "SECOND": 1, "MINUTE": 60, "HOUR": 3600}
            days = {"DAY": 1, "WEEK": 7}
            if unit in days:
                when = when + timedelta(days=count * days[unit])
            else:
                when = when + timedelta(seconds=count * seconds[unit])
    except (KeyError, ValueError, OverflowError):
        return None
    if not 1 <= when.year <= 9999:
        return None
    return show(when, with_time or unit in _TIME_UNITS)


def datediff(later: Any, earlier: Any) -> int | None:
    """DATEDIFF(a, b): days between the dates, times of day ignored."""
    a, b = moment(later), moment(earlier)
    if a is None or b is None:
        return None
    return (a[0].date() - b[0].date()).days


def timestampdiff(unit: str, start: Any, end: Any) -> int | None:
    """TIMESTAMPDIFF(unit, a, b): whole units from a to b, cut towards zero."""
    a, b = moment(start), moment(end)
    if a is None or b is None:
        return None
    first, second = a[0], b[0]
    unit = unit.upper()
    if unit in ("MONTH", "QUARTER", "YEAR"):
        months = (second.year - first.year) * 12 + second.month - first.month
        rest_a = (first.day, first.time())
        rest_b = (second.day, second.time())
        if months > 0 and rest_b < rest_a:
            months -= 1
        elif months < 0 and rest_b > rest_a:
            months += 1
        return int(months / {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit])
    seconds = (second - first).total_seconds()
    size = {"MICROSECOND": 1e-6, "SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400}
    size["WEEK"] = 7 * 86400
    if unit not in size:
        return None
    return int(seconds / size[unit])


def str_to_date(text: Any, pattern: Any) -> str | None:
    """STR_TO_DATE(s, format) (format already in strftime's codes); NULL when it does not fit."""
    if text is None or pattern is None:
        return None
    try:
        when = datetime.strptime(str(text).strip(), str(pattern).replace("%-", "%"))
    except ValueError:
        return None
    return show(when, bool(_TIME_CODES.search(str(pattern))))


def date_format(value: Any, pattern: Any) -> str | None:
    """DATE_FORMAT(d, format) (format already in strftime's codes)."""
    found = moment(value)
    if found is None or pattern is None:
        return None
    return found[0].strftime(str(pattern))


def _now() -> str:
    return show(datetime.now().replace(microsecond=0), True)


def _unix_timestamp(value: Any = None) -> int | None:
    if value is None:
        return int(clock.time())
    found = moment(value)
    return None if found is None else int(found[0].timestamp())


def _from_unixtime(seconds: Any) -> str | None:
    if seconds is None:
        return None
    return show(datetime.fromtimestamp(int(float(seconds))), True)


DATE_FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "YEAR": (1, _part(lambda d: d.year)),
    "MONTH": (1, _part(lambda d: d.month)),
    "DAYOFMONTH": (1, _part(lambda d: d.day)),
    "QUARTER": (1, _part(lambda d: (d.month - 1) // 3 + 1)),
    "DAYNAME": (1, _part(lambda d: d.strftime("%A"))),
    "MONTHNAME": (1, _part(lambda d: d.strftime("%B"))),
    "DAYOFWEEK": (1, _part(lambda d: d.isoweekday() % 7 + 1)),
    "WEEKDAY": (1, _part(lambda d: d.weekday())),
    "DAYOFYEAR": (1, _part(lambda d: d.timetuple().tm_yday)),
    "MYSQL_DATE": (1, _part(lambda d: d.date().isoformat())),
    "WEEK": (-1, week),
    "LAST_DAY": (1, last_day),
    "HOUR": (1, _clock_part(0)),
    "MINUTE": (1, _clock_part(1)),
    "SECOND": (1, _clock_part(2)),
    "NOW": (0, _now),
    "CURDATE": (0, lambda: date.today().isoformat()),
    "CURTIME": (0, lambda: datetime.now().strftime("%H:%M:%S")),
    "UNIX_TIMESTAMP": (-1, _unix_timestamp),
    "FROM_UNIXTIME": (1, _from_unixtime),
}
