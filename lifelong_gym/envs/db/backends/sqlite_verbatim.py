"""Statements SQLite runs as written, recognised without sqlglot.

Most statements the generator and agents write need nothing of the translation: plain
queries and row changes over the task's columns, whose comparisons SQLite already answers
as MySQL does (text columns carry the case-insensitive collation). Reading one with sqlglot,
rewriting and generating it costs about half a millisecond; this scan and small grammar take
a few tens of microseconds. It accepts only what the translation (`sqlite_translate`) would
leave unchanged in meaning: a short list of keywords, the task's own column and table names,
aliases, plain literals, COUNT / MIN / MAX, SUM of integer columns and AVG of FLOAT ones, and
comparisons whose operand types need neither the collation on a literal nor a conversion to
a number (the rules of the rewriter's `_comparison`, `_in` and `_sum`). Anything else (other
functions, arithmetic, backticks, comments, escapes, words it does not know, sqlglot's
keywords) returns None and goes through the translation, so constructs added there later
keep working.
"""

from __future__ import annotations

import re

from sqlglot.dialects.mysql import MySQL

from .sqlite_types import NumericType, column_type

_TOKEN = re.compile(
    r"[ \t\r\n]*(?:(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?![\w.]))"
    r"|(?P<string>'(?:[^'\\]|'')*')"
    r"|(?P<op><>|!=|<=|>=|-(?!-)|[=<>(),.*;+]))"  # `--` is a comment to SQLite alone
)
_KEYWORDS = frozenset(
    "SELECT DISTINCT FROM WHERE AND OR NOT IN IS NULL BETWEEN LIKE GROUP ORDER BY ASC DESC "
    "HAVING LIMIT OFFSET AS INSERT INTO VALUES UPDATE SET DELETE EXISTS".split()
)
_AGGREGATES = frozenset({"COUNT", "MIN", "MAX", "SUM", "AVG"})
# a word sqlglot reads as a keyword may mean something else there: the translation decides,
# unless it names one of the task's columns and is a word sqlglot reads as a column there
_COLUMN_WORDS = frozenset({"FORMAT", "DATE", "YEAR", "TIME", "TIMESTAMP", "TEXT", "COMMENT"})
_SQLGLOT_WORDS = frozenset(MySQL.Tokenizer.KEYWORDS) - _KEYWORDS
_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
_ENDS = frozenset({"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", ",", ")", ";", ""})

Operand = tuple[str, NumericType | None]  # kind (column, string, number, null, other), type


class _NotVerbatim(Exception):
    """The statement needs the translation."""


def verbatim_kind(sql: str, columns: dict[str, str], tables: tuple[str, ...]) -> str | None:
    """The statement's first keyword when SQLite runs `sql` as MySQL means it, else None.

    `columns` maps lower-case column names to declared MySQL types, as the translation's."""
    tokens = _tokens(sql, columns)
    if tokens is None:
        return None
    reader = _Reader(tokens, columns, tables)
    try:
        return reader.statement()
    except (_NotVerbatim, IndexError):
        return None


def _tokens(sql: str, columns: dict[str, str]) -> list[tuple[str, str]] | None:
    """(kind, text) pairs, words upper-cased; None at anything outside the scan's tokens."""
    found: list[tuple[str, str]] = []
    position, end = 0, len(sql.rstrip())
    while position < end:
        match = _TOKEN.match(sql, position)
        if match is None:
            return None
        kind = match.lastgroup
        assert kind is not None
        text = match.group(kind)
        if kind == "word":
            upper = text.upper()
            if upper in _SQLGLOT_WORDS and not (upper in _COLUMN_WORDS and text.lower() in columns):
                return None
            found.append(("kw", upper) if upper in _KEYWORDS else ("name", text))
        else:
            found.append((kind, text))
        position = match.end()
    return found


class _Reader:
    """A recursive-descent reader of the accepted statements; raises `_NotVerbatim`."""

    def __init__(self, tokens: list[tuple[str, str]], columns: dict[str, str], tables):
        self.tokens = tokens
        self.at = 0
        self.columns = columns
        self.tables = frozenset(tables)
        self.folded = frozenset(t.lower() for t in tables)
        self.defined: set[str] = set()  # aliases
        self.used: set[str] = set()  # qualifiers and names that must be aliases

    # -- tokens --------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.tokens[index][1] if index < len(self.tokens) else ""

    def kind(self) -> str:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def accept(self, text: str) -> bool:
        if self.peek() == text and self.kind() in ("kw", "op"):
            self.at += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise _NotVerbatim

    # -- statements ----------------------------------------------------------------

    def statement(self) -> str:
        first = self.peek()
        handlers = {"SELECT": self.select, "INSERT": self.insert, "UPDATE": self.update}
        if first == "DELETE":
            self.take()
            self.expect("FROM")
            self.table(alias=False)
            self.where()
        elif first in handlers and self.kind() == "kw":
            handlers[first]()
        else:
            raise _NotVerbatim
        self.accept(";")
        if self.at != len(self.tokens) or not self.used <= self.defined | self.tables:
            raise _NotVerbatim
        return first

    def select(self) -> NumericType | None:
        """A query; its type when it selects exactly one typed expression."""
        self.expect("SELECT")
        self.accept("DISTINCT")
        items = [self.select_item()]
        while self.accept(","):
            items.append(self.select_item())
        self.expect("FROM")
        self.table()
        self.where()
        if self.accept("GROUP"):
            self.expect("BY")
            self.list_of(self.sort_key)
        if self.accept("HAVING"):
            self.condition()
        if self.accept("ORDER"):
            self.expect("BY")
            self.list_of(self.sort_key)
        if self.accept("LIMIT"):
            self.integer()
            if self.accept(",") or self.accept("OFFSET"):
                self.integer()
        return items[0] if len(items) == 1 else None

    def insert(self) -> None:
        self.expect("INSERT")
        self.expect("INTO")
        self.table(alias=False)
        if self.accept("("):
            self.list_of(self.column_name)
            self.expect(")")
        self.expect("VALUES")
        self.list_of(self.row)

    def update(self) -> None:
        self.expect("UPDATE")
        self.table(alias=False)
        self.expect("SET")
        self.list_of(self.assignment)
        self.where()

    # -- clauses -------------------------------------------------------------------

    def list_of(self, item) -> None:
        item()
        while self.accept(","):
            item()

    def select_item(self) -> NumericType | None:
        if self.accept("*"):
            return None
        if self.kind() == "name" and self.peek(1) == "." and self.peek(2) == "*":
            self.used.add(self.take()[1])
            self.at += 2
            return None
        found = self.operand(typed=False)[1]
        self.alias()
        return found

    def alias(self) -> None:
        """`AS name` or a bare name after a select item or a table."""
        if self.accept("AS") or self.kind() == "name":
            if self.kind() != "name":
                raise _NotVerbatim
            self.defined.add(self.take()[1])

    def table(self, alias: bool = True) -> None:
        kind, name = self.take()
        if kind != "name" or name not in self.tables:
            raise _NotVerbatim  # another table, or the task's in the wrong case (refused)
        if alias:
            self.alias()

    def where(self) -> None:
        if self.accept("WHERE"):
            self.condition()

    def sort_key(self) -> None:
        if self.kind() == "number":
            self.take()
        else:
            self.operand(typed=False)
        if not self.accept("ASC"):
            self.accept("DESC")

    def integer(self) -> None:
        kind, text = self.take()
        if kind != "number" or not text.isdigit():
            raise _NotVerbatim

    def column_name(self) -> None:
        kind, name = self.take()
        if kind != "name" or name.lower() not in self.columns:
            raise _NotVerbatim

    def row(self) -> None:
        self.expect("(")
        self.list_of(self.literal)
        self.expect(")")

    def literal(self) -> Operand:
        kind, text = self.take()
        if kind == "string":
            return ("string", None)
        if kind == "number":
            return ("number", ("decimal", len(text.split(".")[1])) if "." in text else ("int", 0))
        if (kind, text) == ("kw", "NULL"):
            return ("null", None)
        raise _NotVerbatim

    def assignment(self) -> None:
        """`column = value` (an assignment: the rewriter leaves it as it is)."""
        self.column_name()
        self.expect("=")
        if self.kind() == "name":
            self.operand(typed=True)
        else:
            self.literal()

    # -- conditions ----------------------------------------------------------------

    def condition(self) -> None:
        self.conjunction()
        while self.accept("OR"):
            self.conjunction()

    def conjunction(self) -> None:
        self.factor()
        while self.accept("AND"):
            self.factor()

    def factor(self) -> None:
        if self.accept("NOT"):
            self.factor()
        elif self.accept("EXISTS"):
            self.subquery()
        elif self.peek() == "(" and self.peek(1) != "SELECT":
            self.take()
            self.condition()
            self.expect(")")
        else:
            self.predicate()

    def predicate(self) -> None:
        left = self.operand(typed=True)
        following = self.peek()
        if following in _COMPARISONS and self.kind() == "op":
            self.take()
            _comparable(left, self.operand(typed=True))
        elif self.accept("IS"):
            self.accept("NOT")
            self.expect("NULL")
        else:
            negated = self.accept("NOT")
            if self.accept("IN"):
                if left[0] != "column":
                    raise _NotVerbatim  # the translation would add the collation
                if self.peek(1) == "SELECT":
                    self.subquery()
                else:
                    self.expect("(")
                    self.list_of(self.literal)
                    self.expect(")")
            elif self.accept("BETWEEN"):
                self.operand(typed=True)
                self.expect("AND")
                self.operand(typed=True)
            elif self.accept("LIKE"):
                if self.take()[0] != "string":
                    raise _NotVerbatim
            elif negated:
                raise _NotVerbatim
        if self.peek() not in _ENDS | {"AND", "OR"}:
            raise _NotVerbatim

    def subquery(self) -> NumericType | None:
        self.expect("(")
        found = self.select()
        self.expect(")")
        return found

    # -- operands ------------------------------------------------------------------

    def operand(self, typed: bool) -> Operand:
        """A primary, or integers added, subtracted or multiplied (the translation leaves
        those as they are: other arithmetic is rounded to MySQL's scale there)."""
        found = self.primary(typed)
        if self.peek() not in ("+", "-", "*") or self.kind() != "op":
            return found
        while self.peek() in ("+", "-", "*") and self.kind() == "op":
            self.take()
            if found[1] != ("int", 0) or self.primary(typed=True)[1] != ("int", 0):
                raise _NotVerbatim
        return ("other", ("int", 0))

    def primary(self, typed: bool) -> Operand:
        """A column, literal, aggregate or scalar subquery, with the rewriter's type of it.

        In a typed place (a comparison) every name must be a known column."""
        kind, text = self.tokens[self.at]
        if kind in ("string", "number") or (kind, text) == ("kw", "NULL"):
            return self.literal()
        if text == "(" and self.peek(1) == "SELECT":
            return ("other", self.subquery())
        if kind != "name":
            raise _NotVerbatim
        if self.peek(1) == "(":
            return ("other", self.aggregate())
        return self.column(typed)

    def column(self, typed: bool) -> Operand:
        name = self.take()[1]
        if self.accept("."):
            self.used.add(name)
            kind, name = self.take()
            if kind != "name":
                raise _NotVerbatim
        declared = self.columns.get(name.lower())
        if declared is None:
            if typed or name.lower() in self.folded:
                raise _NotVerbatim
            self.used.add(name)  # a select alias in ORDER BY, GROUP BY or HAVING
            return ("alias", None)
        return ("column", column_type(declared))

    def aggregate(self) -> NumericType | None:
        name = self.take()[1].upper()
        if name not in _AGGREGATES:
            raise _NotVerbatim
        self.expect("(")
        if name == "COUNT":
            if not self.accept("*"):
                self.accept("DISTINCT")
                self.column(typed=True)
            self.expect(")")
            return ("int", 0)
        found = self.column(typed=True)[1]
        self.expect(")")
        # SUM of decimals and AVG of exact numbers are rounded to MySQL's scale by the
        # translation; SUM and AVG of text are read as numbers there
        if name == "SUM" and found != ("int", 0) or name == "AVG" and found != ("float", 0):
            raise _NotVerbatim
        return found


def _comparable(left: Operand, right: Operand) -> None:
    """Refuse a comparison the rewriter would change: a text literal against an operand of
    no known type gets the collation; text against a number is read as a number."""
    for side, other in ((left, right), (right, left)):
        if side[0] == "string" and other[1] is None:
            raise _NotVerbatim
        if side[1] == ("text", 0) and other[1] is not None and other[1][0] != "text":
            raise _NotVerbatim
