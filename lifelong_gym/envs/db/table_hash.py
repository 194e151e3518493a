"""The benchmark's table hash (identical in AgentBench), computed from a table's rows.

Each row's values are joined with ',' (NULLs skipped, as SQL's CONCAT_WS does), the first
five hex digits of that string's MD5 are kept, those are sorted and joined with ',' (as
GROUP_CONCAT does), and the MD5 of the result is the hash. MySQL cuts GROUP_CONCAT at
`group_concat_max_len` bytes, 1024 by default on MySQL (MariaDB's default is larger): the
hashes AgentBench stores were made with that cut, so we apply it everywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

GROUP_CONCAT_MAX_LEN = 1024

try:  # CPython's own MD5: cheaper than OpenSSL's on a row's short text (docs/db-tasks.md)
    from _md5 import md5 as _md5
except ImportError:  # a Python built without it
    _md5 = hashlib.md5


def row_text(values: Iterable[str | None]) -> str:
    """The row's non-NULL values joined by ',' (as CONCAT_WS does)."""
    return ",".join(v for v in values if v is not None)


def table_hash(rows: Iterable[Iterable[str | None]]) -> str | None:
    """The hash of a table given its rows as MySQL renders them as text; None when empty."""
    return texts_hash(row_text(row) for row in rows)


def texts_hash(texts: Iterable[str]) -> str | None:
    """The hash of a table given each row's `row_text`; None when it has no rows."""
    digests = sorted([_md5(text.encode("utf-8")).hexdigest()[:5] for text in texts])
    if not digests:
        return None  # GROUP_CONCAT over no rows is NULL, and so is its MD5
    joined = ",".join(digests).encode("utf-8")[:GROUP_CONCAT_MAX_LEN]
    return hashlib.md5(joined).hexdigest()


def table_hash_sql(table: str, columns: list[str]) -> str:
    """The query that computes the hash inside MySQL (identifiers already quoted)."""
    concat = f"CONCAT_WS(',', {', '.join(columns)})"
    return (
        "SELECT MD5(GROUP_CONCAT(digest ORDER BY digest SEPARATOR ',')) FROM "
        f"(SELECT SUBSTRING(MD5({concat}), 1, 5) AS digest FROM {table}) AS digests"
    )
