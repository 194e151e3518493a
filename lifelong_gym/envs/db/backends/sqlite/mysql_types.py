"""MySQL column types: how SQLite stores them, how MySQL names them, and expression types.

The agent is told it works with MySQL, so the task table keeps its declared MySQL types:
they decide how SQLite stores a column (DECIMAL as REAL so that 7.00 stays 7.0, text
columns under the case-insensitive collation) and how `DESCRIBE` names it (MariaDB's
`int(11)`, `decimal(10,2)`). `numeric_type` infers MySQL's type of a numeric expression
(integer, decimal of some scale, or double) so results can be shown at MySQL's scale.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from sqlglot import exp

from .mysql_functions import COLLATION

# MariaDB's display widths for integer types (what DESCRIBE shows)
_INTEGER_WIDTHS = {
    "TINYINT": 4,
    "SMALLINT": 6,
    "MEDIUMINT": 9,
    "INT": 11,
    "INTEGER": 11,
    "BIGINT": 20,
}
_TYPE = re.compile(r"\s*([A-Za-z ]+?)\s*(?:\(\s*([^)]*)\))?\s*(UNSIGNED)?\s*$", re.I)
# the column constraints a task file may declare after a type (`INT PRIMARY KEY`)
_CONSTRAINTS = re.compile(r"\s+(?:PRIMARY\s+KEY|UNIQUE|NOT\s+NULL)\b.*$", re.I | re.S)
_KEYS = (("PRI", re.compile(r"\bPRIMARY\s+KEY\b", re.I)), ("UNI", re.compile(r"\bUNIQUE\b", re.I)))
_NOT_NULL = re.compile(r"\bNOT\s+NULL\b", re.I)
_TEXT_TYPES = {"CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"}
_DECIMAL_TYPES = {"DECIMAL", "NUMERIC", "DEC", "FIXED"}
_FLOAT_TYPES = {"FLOAT", "DOUBLE", "REAL", "DOUBLE PRECISION"}

NumericType = tuple[str, int]  # ("int", 0), ("decimal", scale), ("float", 0) or ("text", 0)


@functools.lru_cache(maxsize=1024)
def _split(declared: str) -> tuple[str, tuple[str, ...], bool]:
    """Name, arguments and UNSIGNED of a declared type, without its constraints (cached:
    each statement types its columns again, from the same few declarations)."""
    declared = _CONSTRAINTS.sub("", declared)
    found = _TYPE.match(declared)
    if found is None:
        return declared.strip().upper(), (), False
    name, arguments, unsigned = found.groups()
    parts = tuple(a.strip() for a in arguments.split(",")) if arguments else ()
    return " ".join(name.upper().split()), parts, bool(unsigned)


def mariadb_type(declared: str) -> str:
    """The type as MariaDB's DESCRIBE shows it: `INT` is `int(11)`, `DECIMAL` `decimal(10,0)`."""
    name, arguments, unsigned = _split(declared)
    suffix = " unsigned" if unsigned else ""
    if name in ("BOOL", "BOOLEAN"):
        return "tinyint(1)"
    if name in _INTEGER_WIDTHS:
        width = arguments[0] if arguments else str(_INTEGER_WIDTHS[name] - bool(unsigned))
        return f"{'int' if name == 'INTEGER' else name.lower()}({width}){suffix}"
    if name in _DECIMAL_TYPES:
        precision, scale = (arguments + ("10", "0")[len(arguments) :])[:2]
        return f"decimal({precision},{scale}){suffix}"
    if name == "CHAR" and not arguments:
        return "char(1)"
    if name == "YEAR":
        return "year(4)"
    if name == "REAL" or name == "DOUBLE PRECISION":
        return "double"
    return name.lower() + (f"({','.join(arguments)})" if arguments else "") + suffix


# information_schema.COLUMNS' numbers for a type: precision of the integer types (signed,
# unsigned) and the length of the text types without one
_INTEGER_PRECISION = {
    "TINYINT": (3, 3),
    "SMALLINT": (5, 5),
    "MEDIUMINT": (7, 8),
    "INT": (10, 10),
    "INTEGER": (10, 10),
    "BIGINT": (19, 20),
}
_TEXT_LENGTHS = {"TINYTEXT": 255, "TEXT": 65535, "MEDIUMTEXT": 16777215, "LONGTEXT": 4294967295}
_TIME_TYPES = {"TIME", "DATETIME", "TIMESTAMP"}

ColumnFacts = tuple[str, int | None, int | None, int | None, int | None, int | None]


def column_facts(declared: str) -> ColumnFacts:
    """What MariaDB's information_schema.COLUMNS says of a declared type: DATA_TYPE,
    CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE,
    DATETIME_PRECISION (a text type's character set is utf8mb4, 4 bytes a character)."""
    name, arguments, unsigned = _split(declared)
    numbers = [int(a) for a in arguments if a.isdigit()]
    shown = mariadb_type(declared)
    data_type = shown.split("(")[0].split(" ")[0]
    if name in ("BOOL", "BOOLEAN"):
        return ("tinyint", None, None, 3, 0, None)
    if name in _INTEGER_PRECISION:
        return (data_type, None, None, _INTEGER_PRECISION[name][unsigned], 0, None)
    if name in _DECIMAL_TYPES:
        precision, scale = (numbers + [10, 0][len(numbers) :])[:2]
        return ("decimal", None, None, precision, scale, None)
    if name in _FLOAT_TYPES:
        default = 12 if name == "FLOAT" else 22
        precision, scale = numbers if len(numbers) == 2 else (default, None)
        return (data_type, None, None, precision, scale, None)
    if name in _TIME_TYPES:
        return (data_type, None, None, None, None, numbers[0] if numbers else 0)
    if name in _TEXT_LENGTHS:
        return (data_type, _TEXT_LENGTHS[name], _TEXT_LENGTHS[name], None, None, None)
    if name in ("CHAR", "VARCHAR"):
        length = numbers[0] if numbers else 1
        return (data_type, length, 4 * length, None, None, None)
    if name in ("ENUM", "SET"):
        sizes = [len(a.strip("'")) for a in arguments] or [0]
        length = max(sizes) if name == "ENUM" else sum(sizes) + len(sizes) - 1
        return (data_type, length, 4 * length, None, None, None)
    if name == "BIT":
        return ("bit", None, None, numbers[0] if numbers else 1, None, None)
    return (data_type, None, None, None, None, None)


def storage_type(declared: str) -> str:
    """The SQLite column type for a declared MySQL type (affinity and collation), with its
    constraints (a PRIMARY KEY is NOT NULL, as in MySQL; SQLite's may hold NULL)."""
    name, arguments, _ = _split(declared)
    if name in _DECIMAL_TYPES and len(arguments) == 2 and arguments[1] != "0":
        # REAL affinity keeps 7.00 a real number (NUMERIC would store the integer 7)
        constraints = _CONSTRAINTS.search(declared)
        stored = f"REAL DECIMAL({arguments[0]},{arguments[1]})"
        stored += constraints.group() if constraints else ""
    elif name in _TEXT_TYPES:
        stored = f"{declared} COLLATE {COLLATION}"
    else:
        stored = declared
    if key_of(declared) == "PRI" and _NOT_NULL.search(declared) is None:
        stored += " NOT NULL"
    return stored


def column_type(declared: str) -> NumericType | None:
    """The numeric type of a column of `declared` MySQL type; None for non-numbers."""
    name, arguments, _ = _split(declared)
    if name in _INTEGER_WIDTHS or name in ("BOOL", "BOOLEAN", "BIT", "YEAR"):
        return ("int", 0)
    if name in _DECIMAL_TYPES:
        scale = int(arguments[1]) if len(arguments) == 2 and arguments[1].isdigit() else 0
        return ("decimal", scale) if scale else ("int", 0)
    if name in _FLOAT_TYPES:
        return ("float", 0)
    if name in _TEXT_TYPES:
        return ("text", 0)  # a number in text: MySQL reads it as a double in arithmetic
    return None


def key_of(declared: str) -> str:
    """DESCRIBE's Key of a column of `declared` type and constraints: PRI, UNI or ''."""
    return next((key for key, found in _KEYS if found.search(declared)), "")


def nullable(declared: str) -> bool:
    """Whether a column of `declared` type and constraints may hold NULL."""
    return _NOT_NULL.search(declared) is None and key_of(declared) != "PRI"


def value_kind(declared: str) -> str | None:
    """How strict MySQL's message names a value a numeric column of `declared` type cannot
    store (`Incorrect integer value`); None for the types this does not check."""
    name = _split(declared)[0]
    if name in _INTEGER_WIDTHS or name in ("BOOL", "BOOLEAN"):
        return "integer"
    if name in _DECIMAL_TYPES:
        return "decimal"
    if name in _FLOAT_TYPES or name == "DOUBLE PRECISION":
        return "double"
    return None


def is_text(declared: str) -> bool:
    """Whether a declared MySQL type holds text."""
    return _split(declared)[0] in _TEXT_TYPES


def _literal_type(literal: exp.Literal) -> NumericType | None:
    if literal.is_string:
        return None
    text = literal.this.lower()
    if "e" in text:
        return ("float", 0)
    if "." in text:
        return ("decimal", len(text.split(".")[1]))
    return ("int", 0)


def combine_types(
    left: NumericType | None, right: NumericType | None, how: str
) -> NumericType | None:
    """MySQL's type of `left op right` (`how`: add, mul or div)."""
    if left is None or right is None:
        return None
    if {"float", "text"} & {left[0], right[0]}:
        return ("float", 0)
    if how == "div":
        return ("decimal", left[1] + 4)
    scale = left[1] + right[1] if how == "mul" else max(left[1], right[1])
    return ("decimal", scale) if scale else ("int", 0)


_SPREAD = (exp.Avg, exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance, exp.VariancePop)


def numeric_type(
    node: exp.Expression,
    columns: dict[str, str],
    aliases: dict[str, NumericType | None],
    child: Callable[[exp.Expression], NumericType | None] | None = None,
) -> NumericType | None:
    """MySQL's type of a numeric expression, from declared column types and select aliases.

    `child` types the sub-expressions (a caller passes its memo); by default recursively."""
    if child is None:

        def child(sub: exp.Expression) -> NumericType | None:
            return numeric_type(sub, columns, aliases)

    if isinstance(node, exp.Column):
        declared = columns.get(node.name.lower())
        return column_type(declared) if declared else aliases.get(node.name.lower())
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        selected = node.this.expressions
        return child(selected[0]) if len(selected) == 1 else None
    if isinstance(node, exp.Alias):
        return child(node.this)
    if isinstance(node, exp.Coalesce):
        kinds = [child(e) for e in (node.this, *node.expressions)]
        found = kinds[0]
        for kind in kinds[1:]:
            found = combine_types(found, kind, "add")
        return found
    if isinstance(node, exp.Literal):
        return _literal_type(node)
    if isinstance(node, (exp.Paren, exp.Neg, exp.Abs, exp.Min, exp.Max, exp.Window)):
        return child(node.this)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mod)):
        return combine_types(
            child(node.left),
            child(node.right),
            "add",
        )
    if isinstance(node, exp.Mul):
        return combine_types(
            child(node.left),
            child(node.right),
            "mul",
        )
    if isinstance(node, exp.Div):
        return combine_types(
            child(node.left),
            child(node.right),
            "div",
        )
    if isinstance(node, _SPREAD):
        inner = child(node.this)
        if inner is None or inner[0] in ("float", "text"):
            return inner and ("float", 0)
        return ("decimal", inner[1] + 4)
    if isinstance(node, exp.Sum):
        inner = child(node.this)
        return ("float", 0) if inner == ("text", 0) else inner
    if isinstance(node, (exp.Count, exp.IntDiv)):
        return ("int", 0)
    if isinstance(node, exp.Round):
        inner = child(node.this)
        places = node.args.get("decimals")
        if inner is None or inner[0] != "decimal":
            return inner
        scale = int(places.this) if isinstance(places, exp.Literal) and not places.is_string else 0
        return ("decimal", scale) if scale > 0 else ("int", 0)
    return None
