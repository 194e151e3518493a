"""MySQL's functions and text collation as SQLite user functions, with MySQL's semantics.

Values arrive as SQLite stores them (dates as 'YYYY-MM-DD[ HH:MM:SS]' text, DECIMAL as
REAL) and leave as MySQL would show them through the driver: dates as the same text, exact
numbers rounded to their MySQL scale. Every result is bounded by `MAX_VALUE_BYTES` before
it is built, so no function can be asked for a gigabyte.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import re
import sqlite3
import unicodedata
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from .mysql_dates import (
    DATE_FUNCTIONS,
    date_add,
    date_format,
    datediff,
    str_to_date,
    timestampdiff,
)
from .strict_writes import STRICT_FUNCTIONS

MAX_VALUE_BYTES = 1_000_000
COLLATION = "MYSQL_CI"
# MariaDB's default group_concat_max_len (MySQL 8 has 1024; the comparison server is MariaDB)
GROUP_CONCAT_MAX_LEN = 1_048_576

# SQLite's own functions an agent's statement may call; everything else is denied.
SQLITE_BUILTINS = frozenset(
    """abs avg changes char coalesce count date datetime glob group_concat hex ifnull iif
    julianday last_insert_rowid like likelihood likely lower ltrim max min nullif printf
    quote random replace rtrim sign strftime substr substring sum time total total_changes
    trim typeof unicode unlikely upper cume_dist dense_rank first_value lag last_value
    lead nth_value ntile percent_rank rank row_number acos asin atan atan2 cos cosh degrees
    exp ln log10 log2 pi pow power radians sin sinh sqrt tan tanh instr length""".split()
) | {  # what ALTER TABLE calls inside SQLite (internal: an agent cannot call them itself)
    "sqlite_rename_column",
    "sqlite_rename_table",
    "sqlite_rename_test",
    "sqlite_drop_column",
    "sqlite_rename_quotefix",
}


def _too_big(size: int) -> None:
    if size > MAX_VALUE_BYTES:
        raise ValueError(f"the result would exceed {MAX_VALUE_BYTES} bytes")


def collation_key(text: str) -> str:
    """utf8mb4_general_ci's weight: accents dropped, case folded, trailing spaces ignored."""
    if text.isascii():
        return text.rstrip(" ").upper()
    return _folded_key(text) if len(text) <= KEPT_KEY_LENGTH else _folded(text)


KEPT_KEY_LENGTH = 256  # longer texts' keys are not kept: the cache stays within ~35 MB


def _folded(text: str) -> str:
    stripped = "".join(
        c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)
    )
    return stripped.rstrip(" ").upper()


_folded_key = functools.lru_cache(maxsize=16384)(_folded)


def compare_text(left: str, right: str) -> int:
    """The collation: -1, 0 or 1 as MySQL's default case-insensitive collation orders them."""
    if left == right:
        return 0  # most calls come from equal values (grouping, lookups): the cheap answer
    if left.isascii() and right.isascii():
        a, b = left.rstrip(" ").upper(), right.rstrip(" ").upper()
    else:
        a, b = collation_key(left), collation_key(right)
    return (a > b) - (a < b)


def sort_key(value: Any) -> Any:
    """What a sort by the collation compares, as a value SQLite compares byte by byte: text's
    `collation_key` (a Python call a row, where the collation makes one a comparison);
    numbers, blobs and NULL as they are."""
    return collation_key(value) if type(value) is str else value


def exact(value: Any) -> Decimal | None:
    """A number as the exact decimal MySQL would hold (floats by their shortest repr)."""
    if value is None or isinstance(value, bytes):
        return None
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value).strip())
    except InvalidOperation:
        return _leading_number(str(value))


def _leading_number(text: str) -> Decimal:
    found = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?", text, re.I)
    return Decimal(found.group(0).strip()) if found else Decimal(0)


def _shown(value: Decimal, scale: int) -> int | float:
    """A decimal as the driver shows it: an int at scale 0, else a float."""
    return int(value) if scale <= 0 else float(value)


def decimal_value(value: Any, scale: int) -> int | float | None:
    """`value` rounded to `scale` digits as an exact MySQL DECIMAL (half away from zero)."""
    number = exact(value)
    if number is None or not number.is_finite():
        return None if number is None else float(number)
    step = Decimal(1).scaleb(-max(scale, 0))
    return _shown(number.quantize(step, ROUND_HALF_UP), scale)


def decimal_text(value: Any, scale: int) -> str | None:
    """A DECIMAL(_, scale) value as MySQL prints it in a string context ('3.50')."""
    number = exact(value)
    if number is None or isinstance(value, str):
        return value
    return str(number.quantize(Decimal(1).scaleb(-scale), ROUND_HALF_UP))


def mysql_round(value: Any, places: int = 0) -> int | float | None:
    """ROUND on an exact value: half away from zero; an int when no decimals are left."""
    if value is None or places is None:
        return None
    if isinstance(value, int) and places >= 0:
        return value
    number = exact(value)
    rounded = number.quantize(Decimal(1).scaleb(-int(places)), ROUND_HALF_UP)
    return _shown(rounded, int(places))


def round_double(value: Any, places: int = 0) -> float | None:
    """ROUND on a FLOAT/DOUBLE: half to even, as the C library rounds."""
    if value is None or places is None:
        return None
    return float(round(float(value), int(places)))


def truncate(value: Any, places: int) -> int | float | None:
    """TRUNCATE(x, d): cut (not round) to d decimals."""
    if value is None or places is None:
        return None
    if isinstance(value, int) and places >= 0:
        return value
    number = exact(value).quantize(Decimal(1).scaleb(-int(places)), ROUND_DOWN)
    return _shown(number, int(places))


def cast_signed(value: Any) -> int | None:
    """CAST(x AS SIGNED): exact values round half away from zero, text is read up to junk."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    number = exact(value)
    if isinstance(value, float):  # a DECIMAL stored as REAL: rounds half away from zero
        return int(number.quantize(Decimal(1), ROUND_HALF_UP))
    text = str(value).strip()
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return int(number.to_integral_value(ROUND_DOWN)) if "e" not in text.lower() else int(number)


def int_div(left: Any, right: Any) -> int | None:
    """a DIV b: the quotient cut towards zero; NULL when dividing by zero."""
    a, b = exact(left), exact(right)
    if a is None or b is None or b == 0:
        return None
    return int((a / b).to_integral_value(ROUND_DOWN))


def mysql_mod(left: Any, right: Any) -> int | float | None:
    """a MOD b / a % b: the remainder with the dividend's sign, on decimals too."""
    a, b = exact(left), exact(right)
    if a is None or b is None or b == 0:
        return None
    remainder = a - b * (a / b).to_integral_value(ROUND_DOWN)
    if isinstance(left, int) and isinstance(right, int):
        return int(remainder)
    return float(remainder)


def mysql_format(value: Any, places: int, _locale: str | None = None) -> str | None:
    """FORMAT(x, d): thousands separators, d decimals rounded half away from zero."""
    number = exact(value)
    if number is None or places is None:
        return None
    places = max(0, min(int(places), 30))
    rounded = number.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
    return f"{rounded:,.{places}f}"


def concat_ws(separator: Any, *values: Any) -> str | None:
    """CONCAT_WS: values joined by the separator, NULLs skipped; NULL separator gives NULL."""
    if separator is None:
        return None
    parts = [_text(v) for v in values if v is not None]
    _too_big(sum(map(len, parts)) + len(str(separator)) * len(parts))
    return str(separator).join(parts)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _pad(left: bool) -> Callable[[Any, Any, Any], str | None]:
    def pad(text: Any, length: Any, filler: Any) -> str | None:
        if text is None or length is None or filler is None:
            return None
        text, length, filler = _text(text), int(length), _text(filler)
        _too_big(length)
        if length < 0:
            return None
        if len(text) >= length:
            return text[:length]
        if not filler:
            return None
        fill = (filler * (length // len(filler) + 1))[: length - len(text)]
        return fill + text if left else text + fill

    return pad


def repeat(text: Any, count: Any) -> str | None:
    """REPEAT(s, n)."""
    if text is None or count is None:
        return None
    _too_big(len(_text(text)) * max(int(count), 0))
    return _text(text) * max(int(count), 0)


def left(text: Any, count: Any) -> str | None:
    """LEFT(s, n)."""
    if text is None or count is None:
        return None
    return _text(text)[: max(int(count), 0)]


def right(text: Any, count: Any) -> str | None:
    """RIGHT(s, n)."""
    if text is None or count is None:
        return None
    count = max(int(count), 0)
    return _text(text)[-count:] if count else ""


def substring_index(text: Any, delimiter: Any, count: Any) -> str | None:
    """SUBSTRING_INDEX(s, delim, n): before the n-th delimiter (from the end when n < 0)."""
    if text is None or delimiter is None or count is None:
        return None
    text, delimiter, count = _text(text), _text(delimiter), int(count)
    if not delimiter or count == 0:
        return ""
    parts = text.split(delimiter)
    return delimiter.join(parts[:count] if count > 0 else parts[count:])


def locate(needle: Any, haystack: Any, start: Any = 1) -> int | None:
    """LOCATE / INSTR / POSITION, case-insensitive as MySQL's default collation."""
    if needle is None or haystack is None or start is None:
        return None
    found = _text(haystack).lower().find(_text(needle).lower(), max(int(start) - 1, 0))
    return found + 1 if int(start) >= 1 else 0


def regexp(pattern: Any, text: Any) -> int | None:
    """`text REGEXP pattern`, case-insensitive as MySQL's default collation."""
    if pattern is None or text is None:
        return None
    return int(re.search(_text(pattern), _text(text), re.IGNORECASE) is not None)


def field(needle: Any, *choices: Any) -> int:
    """FIELD(x, a, b, ...): the 1-based position of x among the choices, else 0."""
    if needle is None:
        return 0
    key = collation_key(_text(needle)) if isinstance(needle, str) else needle
    for position, choice in enumerate(choices, 1):
        value = collation_key(_text(choice)) if isinstance(choice, str) else choice
        if choice is not None and value == key:
            return position
    return 0


def elt(index: Any, *choices: Any) -> Any:
    """ELT(n, a, b, ...): the n-th choice."""
    if index is None or not 1 <= int(index) <= len(choices):
        return None
    return choices[int(index) - 1]


def strcmp(a: Any, b: Any) -> int | None:
    """STRCMP under the case-insensitive collation."""
    if a is None or b is None:
        return None
    return compare_text(_text(a), _text(b))


def _digest(algorithm: str) -> Callable[[Any], str | None]:
    def digest(value: Any) -> str | None:
        if value is None:
            return None
        data = value if isinstance(value, bytes) else _text(value).encode("utf-8")
        return hashlib.new(algorithm, data).hexdigest()

    return digest


def sha2(value: Any, bits: Any) -> str | None:
    """SHA2(s, bits)."""
    name = {0: "sha256", 224: "sha224", 256: "sha256", 384: "sha384", 512: "sha512"}
    if value is None or bits is None or int(bits) not in name:
        return None
    return _digest(name[int(bits)])(value)


def _case(convert: Callable[[str], str]) -> Callable[[Any], Any]:
    def change(value: Any) -> Any:
        return convert(value) if isinstance(value, str) else value

    return change


def log(first: Any, second: Any = None) -> float | None:
    """LOG(x) is the natural log in MySQL; LOG(b, x) the log of x in base b."""
    base, value = (None, first) if second is None else (first, second)
    if value is None or float(value) <= 0 or (base is not None and float(base) <= 1):
        return None
    return math.log(float(value)) if base is None else math.log(float(value), float(base))


def _ceiling(up: bool) -> Callable[[Any], int | None]:
    def ceiling(value: Any) -> int | None:
        number = exact(value)
        if number is None:
            return None
        return int(math.ceil(number) if up else math.floor(number))

    return ceiling


class Deviation:
    """STD / STDDEV / VARIANCE and their _SAMP forms, as MySQL aggregates."""

    sample = False
    root = True

    def __init__(self) -> None:
        self.values: list[float] = []

    def step(self, value: Any) -> None:
        """Add a value."""
        if value is not None:
            self.values.append(float(value))

    def finalize(self) -> float | None:
        """The deviation or variance; NULL when too few values."""
        count = len(self.values) - self.sample
        if count <= 0:
            return None
        mean = sum(self.values) / len(self.values)
        variance = sum((v - mean) ** 2 for v in self.values) / count
        return math.sqrt(variance) if self.root else variance


def _deviation(sample: bool, root: bool) -> type[Deviation]:
    return type("Deviation", (Deviation,), {"sample": sample, "root": root})


class OrderedGroupConcat:
    """GROUP_CONCAT([DISTINCT] x ORDER BY k [DESC] ... SEPARATOR s) for SQLite 3.40."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, tuple[Any, ...]]] = []
        self.separator = ","
        self.distinct = False
        self.size = 0

    def step(self, value: Any, separator: str, distinct: int, *keys: Any) -> None:
        """Add a value with its sort keys (pairs of key, 1 for descending)."""
        self.separator, self.distinct = separator, bool(distinct)
        if value is not None:
            self.size += len(_text(value)) + len(separator)
            _too_big(self.size)
            self.items.append((value, keys))

    def finalize(self) -> str | None:
        """The values sorted by their keys and joined, cut at group_concat_max_len."""
        items = self.items
        if self.distinct:
            seen: set[Any] = set()
            items = [
                item
                for item in items
                if not (sort_key(item[0]) in seen or seen.add(sort_key(item[0])))
            ]
        if not items:
            return None
        for position in reversed(range(0, len(items[0][1]), 2)):
            descending = bool(items[0][1][position + 1])
            items = sorted(items, key=lambda i: _class_and_key(i[1][position]), reverse=descending)
        joined = self.separator.join(_text(value) for value, _ in items)
        return joined.encode("utf-8")[:GROUP_CONCAT_MAX_LEN].decode("utf-8", "ignore")


def _class_and_key(value: Any) -> tuple[int, Any]:
    """A value's place in SQLite's order for a Python sort: NULL, then numbers, then text
    by the collation (`sort_key` alone leaves the classes to SQLite)."""
    if value is None:
        return (0, 0)
    if isinstance(value, str):
        return (2, collation_key(value))
    return (1, value)


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


SCALAR_FUNCTIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "DEC": (2, decimal_value),
    "SORT_KEY": (1, sort_key),
    "DEC_TEXT": (2, decimal_text),
    "ROUND": (-1, mysql_round),
    "ROUND_DOUBLE": (-1, round_double),
    "TRUNCATE": (2, truncate),
    "CAST_SIGNED": (1, cast_signed),
    "MYSQL_DIV": (2, int_div),
    "MYSQL_MOD": (2, mysql_mod),
    "FORMAT": (-1, mysql_format),
    "CONCAT_WS": (-1, concat_ws),
    "LPAD": (3, _pad(left=True)),
    "RPAD": (3, _pad(left=False)),
    "REPEAT": (2, repeat),
    "MYSQL_LEFT": (2, left),
    "MYSQL_RIGHT": (2, right),
    "REVERSE": (1, lambda v: None if v is None else _text(v)[::-1]),
    "SUBSTRING_INDEX": (3, substring_index),
    "LOCATE": (-1, locate),
    "MYSQL_INSTR": (2, lambda haystack, needle: locate(needle, haystack)),
    "REGEXP": (2, regexp),
    "FIELD": (-1, field),
    "ELT": (-1, elt),
    "STRCMP": (2, strcmp),
    "MD5": (1, _digest("md5")),
    "SHA1": (1, _digest("sha1")),
    "SHA2": (2, sha2),
    "UPPER": (1, _case(str.upper)),
    "LOWER": (1, _case(str.lower)),
    "CHAR_LENGTH": (1, lambda v: None if v is None else len(_text(v))),
    "OCTET_LENGTH": (1, lambda v: None if v is None else len(_text(v).encode("utf-8"))),
    "MYSQL_LOG": (-1, log),
    "CEILING": (1, _ceiling(up=True)),
    "FLOOR": (1, _ceiling(up=False)),
    "MYSQL_PI": (0, _constant(3.141593)),
    "RAND": (-1, lambda *_seed: random.random()),
    "DATE_ADD": (3, date_add),
    "DATE_FORMAT": (2, date_format),
    "DATEDIFF": (2, datediff),
    "STR_TO_DATE": (2, str_to_date),
    "TIMESTAMPDIFF": (3, timestampdiff),
    **DATE_FUNCTIONS,
    **STRICT_FUNCTIONS,
}
AGGREGATE_FUNCTIONS: dict[str, tuple[int, type]] = {
    "STDDEV_POP": (1, _deviation(sample=False, root=True)),
    "STDDEV_SAMP": (1, _deviation(sample=True, root=True)),
    "VAR_POP": (1, _deviation(sample=False, root=False)),
    "VAR_SAMP": (1, _deviation(sample=True, root=False)),
    "GROUP_CONCAT_ORDERED": (-1, OrderedGroupConcat),
}
ALLOWED_FUNCTIONS = SQLITE_BUILTINS | {
    name.lower() for name in (*SCALAR_FUNCTIONS, *AGGREGATE_FUNCTIONS)
}


def register(connection: sqlite3.Connection) -> None:
    """Give `connection` MySQL's functions and the case-insensitive collation."""
    for name, (arity, function) in SCALAR_FUNCTIONS.items():
        connection.create_function(name, arity, function, deterministic=name not in _VOLATILE)
    for name, (arity, aggregate) in AGGREGATE_FUNCTIONS.items():
        connection.create_aggregate(name, arity, aggregate)
    connection.create_collation(COLLATION, compare_text)


_VOLATILE = {"NOW", "CURDATE", "CURTIME", "UNIX_TIMESTAMP", "RAND"}
