"""Which agent statements either back-end runs: one allow-list by kind, for SQLite and MySQL.

The tasks need queries, row changes, metadata and plain transactions; everything else an
agent could send (compound statements, XA, SET, PREPARE, HANDLER, LOAD DATA, DDL, account
statements, KILL, executable comments, lock functions, files) is refused here, in the same
words on both back-ends, before it reaches SQLite or the server. On MySQL the agent's
account lacks the privileges for most of it as well; this guard covers what privileges
cannot stop (XA, SET PASSWORD, compound statements).
The lexer follows MariaDB's: quotes with backslash escapes (unless the session's sql_mode
has NO_BACKSLASH_ESCAPES), `#`, `-- ` and `/* */` comments. When unsure, it refuses.
"""

from __future__ import annotations

import functools
import re

from lifelong_gym.actions import not_text

from .error_replies import SYNTAX_ERROR, syntax_error

# the first word of a statement the tasks may need
ALLOWED_FIRST_WORDS = frozenset(
    {
        "SELECT", "WITH", "VALUES",  # queries
        "INSERT", "REPLACE", "UPDATE", "DELETE",  # row changes
        "SHOW", "DESCRIBE", "DESC", "EXPLAIN",  # metadata
        "START", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE",  # transactions
    }
)  # fmt: skip
# what may follow SHOW: the task's tables and columns, and the last statement's warnings
SHOW_WORDS = frozenset(
    {
        "TABLES", "COLUMNS", "FIELDS", "CREATE", "INDEX", "INDEXES", "KEYS", "TABLE",
        "DATABASES", "SCHEMAS", "WARNINGS", "ERRORS", "COUNT",
    }
)  # fmt: skip
# words refused anywhere outside strings: lock functions (a channel between concurrent
# episodes, or a wait on another session), files, and server-side waits
DENIED_WORDS = frozenset(
    {
        "GET_LOCK", "RELEASE_LOCK", "RELEASE_ALL_LOCKS", "IS_FREE_LOCK", "IS_USED_LOCK",
        "LOAD_FILE", "OUTFILE", "DUMPFILE",
        "MASTER_POS_WAIT", "MASTER_GTID_WAIT", "SOURCE_POS_WAIT",
    }
)  # fmt: skip
# a word that upper-cases to a denied word leaves that word in the upper-cased statement
_DENIED_TEXT = re.compile("|".join(sorted(DENIED_WORDS)))
_SYNTAX_ERROR = f"({SYNTAX_ERROR})"
_RULED_BY_REST = frozenset({"BEGIN", "START", "COMMIT", "ROLLBACK", "SHOW"})
ALLOWED_TEXT = "queries, INSERT, REPLACE, UPDATE, DELETE, SHOW, DESCRIBE, EXPLAIN and transactions"
_WORD = re.compile(r"[A-Za-z0-9_$\x80-\U0010ffff]+")
_BLANK = re.compile(r"\s+")
# a statement of ASCII without comments, escapes, double quotes or backticks, its single
# quotes paired (most statements): its words are found by one regular expression
# (possessive: a run is taken whole and never split again, so a statement that is not plain
# fails at once, and the runs make it a sixth of the time of a character at a time)
_PLAIN = re.compile(r"(?:[^\x80-\U0010ffff#\-/\"`'\\]++|'[^'\\\x80-\U0010ffff]*+')*+")
_PLAIN_TOKEN = re.compile(r"'[^']*'|[A-Za-z0-9_$]+|[(:]")


@functools.lru_cache(maxsize=4096)
def refusal(sql: str, *, backslash_escapes: bool = True) -> str | None:
    """What the agent is told when its statement is refused, or None when it may run
    (cached: RL loops send the same statements again). A statement MySQL cannot read gets
    MySQL's syntax error; any other refusal says why, in this guard's words."""
    reason = _reason(sql, backslash_escapes)
    if reason is None or reason.startswith(_SYNTAX_ERROR):
        return reason
    return f"the statement was refused: {reason}"


def _reason(sql: str, backslash_escapes: bool) -> str | None:
    """Why the statement is refused (or MySQL's syntax error for it), or None."""
    invalid = not_text(sql, "the statement")
    if invalid is not None:
        return invalid
    if "\x00" in sql:
        return "the statement holds a NUL character"
    words = _words(sql, backslash_escapes)
    if isinstance(words, str):
        return words
    if not words:
        return "the statement is empty"
    first = words[0].upper()
    if first == "(":  # a parenthesised query
        first = next((w.upper() for w in words if w != "("), "")
        if first not in ("SELECT", "WITH", "VALUES"):
            return "only a query may stand in parentheses"
    if first not in ALLOWED_FIRST_WORDS:
        return f"{first} statements are not allowed; the task needs only {ALLOWED_TEXT}"
    if len(words) > 1 and words[1] == ":":
        return "labels open compound statements, which are not allowed"
    # the words after the first, for the statements whose rule reads them
    rest = [w.upper() for w in words[1:]] if first in _RULED_BY_REST else []
    if first == "BEGIN" and rest not in ([], ["WORK"]):
        return "BEGIN may only open a transaction (BEGIN or BEGIN WORK), not a compound statement"
    if first == "START" and rest[:1] != ["TRANSACTION"]:
        return "START is allowed only as START TRANSACTION"
    if first in ("COMMIT", "ROLLBACK") and "RELEASE" in rest and "NO" not in rest:
        return "ending the session (RELEASE) is not allowed"
    shown = rest[1:] if rest[:1] == ["FULL"] else rest  # SHOW FULL TABLES, SHOW FULL COLUMNS
    if first == "SHOW" and (not shown or shown[0] not in SHOW_WORDS):
        return "SHOW may only list the task's tables, columns, indexes, warnings and errors"
    if _DENIED_TEXT.search(sql.upper()) is None:  # most statements: no word to look at
        return None
    denied = sorted({w.lstrip("`").upper() for w in words} & DENIED_WORDS)
    if denied:
        return f"{', '.join(denied)} is not allowed"
    return None


def _words(sql: str, backslash_escapes: bool) -> list[str] | str:
    """The words, `(` and `:` outside strings and comments, or why the statement is refused
    (MySQL's syntax error for a quote or comment left open)."""
    if _PLAIN.fullmatch(sql) is not None:  # half the time of the lexer below
        return [token for token in _PLAIN_TOKEN.findall(sql) if token[0] != "'"]
    return _lexed_words(sql, backslash_escapes)


def _lexed_words(sql: str, backslash_escapes: bool) -> list[str] | str:
    """`_words` read character by character as MariaDB's lexer reads them."""
    words: list[str] = []
    position, length = 0, len(sql)
    while position < length:
        char = sql[position]
        if char.isspace():
            position = _BLANK.match(sql, position).end()
        elif char == "#" or sql.startswith("--", position) and _dash_comment(sql, position):
            end = sql.find("\n", position)
            position = length if end < 0 else end + 1
        elif sql.startswith("/*", position):
            if sql.startswith(("/*!", "/*M!"), position):
                return "executable comments (/*! ... */) are not allowed"
            end = sql.find("*/", position + 2)
            if end < 0:
                return syntax_error(sql, position)  # MySQL reads no further either
            position = end + 2
        elif char in "'\"`":
            end = _quote_end(sql, position, backslash_escapes and char != "`")
            if end < 0:
                return syntax_error(sql, position)
            if char == "`":  # a quoted name is never a keyword: keep its quote on
                words.append("`" + sql[position + 1 : end].replace("``", "`"))
            position = end + 1
        elif (found := _WORD.match(sql, position)) is not None:
            words.append(found.group())
            position = found.end()
        else:
            if char in "(:":
                words.append(char)
            position += 1
    return words


def _dash_comment(sql: str, position: int) -> bool:
    """`--` starts a comment only when a blank or control character (or the end) follows."""
    after = position + 2
    return after >= len(sql) or sql[after].isspace() or ord(sql[after]) < 32


def _quote_end(sql: str, start: int, backslash_escapes: bool) -> int:
    """The index of the quote closing the one at `start` (doubled quotes stay inside), or -1."""
    quote, position = sql[start], start + 1
    while position < len(sql):
        char = sql[position]
        if backslash_escapes and char == "\\":
            position += 2
        elif char == quote:
            if sql.startswith(quote, position + 1):
                position += 2
            else:
                return position
        else:
            position += 1
    return -1
