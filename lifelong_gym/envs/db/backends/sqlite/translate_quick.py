"""The translation of the common statements, found without sqlglot.

Most statements the generator and agents write are plain queries and row changes over the
task's columns. Reading one with sqlglot, rewriting and generating it costs far more than
this token scan and small grammar (the figures: docs/db-tasks.md, "Speed"). It accepts
only a short list of keywords, the task's own column and table names, aliases, plain
literals, COUNT / MIN / MAX / SUM / AVG / ROUND and + - *, and writes what the translation
(`translate.py`) writes for them: the statement as it is, with `DEC(..., scale)` around
an outermost exact-number aggregate or arithmetic (MySQL's scale), the collation after a
text literal compared with an operand of no known type, and `SORT_KEY(...)` around a text
column alone as a GROUP BY or ORDER BY term. Anything else (other functions,
division, backticks, comments, escapes, words it does not know, sqlglot's keywords, text
read as a number) returns None and goes through the translation, so constructs added there
later keep working.
"""

from __future__ import annotations

import re

from sqlglot.dialects.mysql import MySQL

from .catalog import SCHEMA
from .mysql_functions import COLLATION
from .mysql_types import NumericType, column_type, combine_types, is_text
from .translate_expand import EXPANDED_WORDS

# blanks, then one token: a word, a number, a string or an operator (`findall` gives each
# token's five groups at once, a third cheaper than a match object a token)
_TOKEN = re.compile(
    r"([ \t\r\n]*)(?:([A-Za-z_][A-Za-z0-9_]*)"
    r"|((?:\d+(?:\.\d*)?|\.\d+)(?![\w.]))"
    r"|('(?:[^'\\]|'')*')"
    r"|(<>|!=|<=|>=|-(?!-)|[=<>(),.*;+]))"  # `--` is a comment to SQLite alone
)
_KEYWORDS = frozenset(
    "SELECT DISTINCT FROM WHERE AND OR NOT IN IS NULL BETWEEN LIKE GROUP ORDER BY ASC DESC "
    "HAVING LIMIT OFFSET AS INSERT INTO VALUES UPDATE SET DELETE EXISTS".split()
)
_FUNCTIONS = frozenset({"COUNT", "MIN", "MAX", "SUM", "AVG", "ROUND"})
# a word sqlglot reads as a keyword may mean something else there: the translation decides,
# unless it names one of the task's columns and is a word sqlglot reads as a column there
_COLUMN_WORDS = frozenset({"FORMAT", "DATE", "YEAR", "TIME", "TIMESTAMP", "TEXT", "COMMENT"})
# Words that make a statement need the translation whatever else it holds (the expansions
# of ALL / ANY / SOME and WITH ROLLUP, and the catalog: DATABASE() and SCHEMA() name the
# task's database as the catalog does): a word of these outside a string is never read here
TRANSLATED_WORDS = frozenset({*EXPANDED_WORDS, SCHEMA.upper(), "DATABASE", "SCHEMA"})
_SQLGLOT_WORDS = (frozenset(MySQL.Tokenizer.KEYWORDS) - _KEYWORDS) | TRANSLATED_WORDS
_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
_ENDS = frozenset({"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "AND", "OR"})
_ENDS |= frozenset({",", ")", ";", ""})
_SORT_KEY_ENDS = frozenset({"ASC", "DESC", "HAVING", "ORDER", "LIMIT", ",", ")", ";", ""})

_PAST_END = ["", "", ""]  # what `peek(2)` reads past the last token
Token = tuple[str, str, int, int]  # kind (kw, name, number, string, op), text, start, end
Operand = tuple[str, NumericType | None]  # kind (column, string, number, null, other), type


class _NotQuick(Exception):
    """The statement needs the translation."""


def quick_translation(sql: str, columns: dict[str, str], tables: tuple[str, ...]) -> str | None:
    """The statement's SQLite text, or None for the translation.

    `columns` maps lower-case column names to declared MySQL types, as the translation's."""
    tokens = _tokens(sql, columns)
    if tokens is None:
        return None
    reader = _Reader(tokens, columns, tables)
    try:
        reader.statement()
    except (_NotQuick, IndexError):
        return None
    text, done = [], 0
    for position, insert in sorted(reader.inserts, key=lambda item: item[0]):
        text += [sql[done:position], insert]
        done = position
    return "".join([*text, sql[done:]]).strip()


def _tokens(sql: str, columns: dict[str, str]) -> list[Token] | None:
    """The tokens, words upper-cased; None at anything outside the scan's tokens."""
    found: list[Token] = []
    position, end = 0, len(sql.rstrip())
    for blank, word, number, string, operator in _TOKEN.findall(sql, 0, end):
        start = position + len(blank)
        if word:
            position = start + len(word)
            upper = word.upper()
            if upper in _KEYWORDS:
                found.append(("kw", upper, start, position))
            elif upper in _SQLGLOT_WORDS and not (
                upper in _COLUMN_WORDS and word.lower() in columns
            ):
                return None
            else:
                found.append(("name", word, start, position))
        else:
            text = operator or number or string  # a token is never empty
            kind = "op" if operator else "number" if number else "string"
            position = start + len(text)
            found.append((kind, text, start, position))
    # `findall` passes over what no token matches: then the tokens fall short of the end
    return found if position == end else None


class _Reader:
    """A recursive-descent reader of the accepted statements; raises `_NotQuick`."""

    def __init__(self, tokens: list[Token], columns: dict[str, str], tables: tuple[str, ...]):
        self.tokens = tokens
        # what the hot calls read, past the end too (as ""): each token's text and kind, and
        # its mark (the text of a keyword or operator, None for a name or literal)
        self.texts = [token[1] for token in tokens] + _PAST_END
        self.kinds = [token[0] for token in tokens] + _PAST_END
        self.marks = [t[1] if t[0] in ("kw", "op") else None for t in tokens] + _PAST_END
        self.at = 0
        self.columns = columns
        self.tables = frozenset(tables)
        self.folded = frozenset(t.lower() for t in tables)
        self.defined: set[str] = set()  # aliases
        self.used: set[str] = set()  # qualifiers and names that must be aliases
        self.inserts: list[tuple[int, str]] = []  # (position in the statement, text)

    # -- tokens --------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> str:
        return self.texts[self.at + ahead]

    def kind(self) -> str:
        return self.kinds[self.at]

    def take(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def accept(self, text: str) -> bool:
        if self.marks[self.at] == text:
            self.at += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise _NotQuick

    def start(self) -> int:
        return self.tokens[self.at][2]

    def end(self) -> int:
        return self.tokens[self.at - 1][3]

    # -- statements ----------------------------------------------------------------

    def statement(self) -> None:
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
            raise _NotQuick
        self.accept(";")
        if self.at != len(self.tokens) or not self.used <= self.defined | self.tables:
            raise _NotQuick

    def select(self) -> NumericType | None:
        """A query; the type of its one selected expression (None for several)."""
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
                raise _NotQuick
            self.defined.add(self.take()[1])

    def table(self, alias: bool = True) -> None:
        kind, name, *_ = self.take()
        if kind != "name" or name not in self.tables:
            raise _NotQuick  # another table, or the task's in the wrong case (refused)
        if alias:
            self.alias()

    def where(self) -> None:
        if self.accept("WHERE"):
            self.condition()

    def sort_key(self) -> None:
        """A GROUP BY or ORDER BY term; a text column alone is sorted by `SORT_KEY`, which
        orders as the collation does at a Python call a row, not one a comparison."""
        if self.kind() == "number":
            self.take()
        elif self._text_column_alone():
            _, _, start, end = self.take()
            self.inserts += [(start, "SORT_KEY("), (end, ")")]
        else:
            self.operand(typed=False)
        if not self.accept("ASC"):
            self.accept("DESC")

    def _text_column_alone(self) -> bool:
        kind, name, *_ = self.tokens[self.at]
        declared = self.columns.get(name.lower())
        return (
            kind == "name"
            and declared is not None
            and is_text(declared)
            and name.lower() not in {d.lower() for d in self.defined}  # not an alias
            and self.peek(1) in _SORT_KEY_ENDS
        )

    def integer(self) -> None:
        kind, text, *_ = self.take()
        if kind != "number" or not text.isdigit():
            raise _NotQuick

    def column_name(self) -> None:
        kind, name, *_ = self.take()
        if kind != "name" or name.lower() not in self.columns:
            raise _NotQuick

    def row(self) -> None:
        self.expect("(")
        self.list_of(self.literal)
        self.expect(")")

    def literal(self) -> Operand:
        kind, text, *_ = self.take()
        if kind == "string":
            return ("string", None)
        if kind == "number":
            return ("number", ("decimal", len(text.split(".")[1])) if "." in text else ("int", 0))
        if (kind, text) == ("kw", "NULL"):
            return ("null", None)
        raise _NotQuick

    def assignment(self) -> None:
        """`column = value` (an assignment: no collation, no conversion)."""
        self.column_name()
        self.expect("=")
        self.operand(typed=True)

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
        left, left_end = self.operand(typed=True), self.end()
        if self.marks[self.at] in _COMPARISONS:
            self.take()
            right = self.operand(typed=True)
            self.compare(left, left_end, right, self.end())
        elif self.accept("IS"):
            self.accept("NOT")
            self.expect("NULL")
        else:
            negated = self.accept("NOT")
            if self.accept("IN"):
                if left[0] != "column":
                    raise _NotQuick  # the translation may add the collation
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
                    raise _NotQuick
            elif negated:
                raise _NotQuick
        if self.peek() not in _ENDS:
            raise _NotQuick

    def compare(self, left: Operand, left_end: int, right: Operand, right_end: int) -> None:
        """The rewriter's `_comparison`: a text literal against an operand of no known type
        gets the collation; text against a number would be read as a number (not here)."""
        for (side, end), other in (((left, left_end), right), ((right, right_end), left)):
            if side[0] == "string" and other[1] is None:
                self.inserts.append((end, f" COLLATE {COLLATION}"))
            if side[1] == ("text", 0) and other[1] is not None and other[1][0] != "text":
                raise _NotQuick

    def subquery(self) -> NumericType | None:
        self.expect("(")
        found = self.select()
        self.expect(")")
        return found

    # -- operands ------------------------------------------------------------------

    def operand(self, typed: bool) -> Operand:
        """A primary, or primaries added, subtracted and multiplied; an outermost exact-number
        aggregate or arithmetic is rounded to MySQL's scale as the translation does."""
        start = self.start()
        found = self.term(typed)
        while self.marks[self.at] in ("+", "-"):
            self.take()
            found = ("arithmetic", combine_types(found[1], self.term(typed)[1], "add"))
        if found[0] not in ("arithmetic", "aggregate"):
            return found
        if found[1] is not None and found[1][0] == "decimal":
            self.inserts += [(start, "DEC("), (self.end(), f", {found[1][1]})")]
        return ("other", found[1])

    def term(self, typed: bool) -> Operand:
        found = self.primary(typed)
        while self.marks[self.at] == "*":
            self.take()
            found = ("arithmetic", combine_types(found[1], self.primary(typed)[1], "mul"))
        return found

    def primary(self, typed: bool) -> Operand:
        """A column, literal, function call or scalar subquery, with the rewriter's type.

        In a typed place (a comparison) every name must be a known column."""
        kind, text, *_ = self.tokens[self.at]
        if kind in ("string", "number") or (kind, text) == ("kw", "NULL"):
            return self.literal()
        if text == "(" and self.peek(1) == "SELECT":
            return ("other", self.subquery())
        if kind != "name":
            raise _NotQuick
        if self.peek(1) == "(":
            return self.function()
        return self.column(typed)

    def column(self, typed: bool) -> Operand:
        name = self.take()[1]
        if self.accept("."):
            self.used.add(name)
            kind, name, *_ = self.take()
            if kind != "name":
                raise _NotQuick
        declared = self.columns.get(name.lower())
        if declared is None:
            if typed or name.lower() in self.folded:
                raise _NotQuick
            self.used.add(name)  # a select alias in ORDER BY, GROUP BY or HAVING
            return ("alias", None)
        return ("column", column_type(declared))

    def function(self) -> Operand:
        """COUNT, MIN, MAX, SUM, AVG of a column, or ROUND; kind "aggregate" for SUM and AVG
        (rounded to their scale where no arithmetic holds them)."""
        name = self.take()[1].upper()
        if name not in _FUNCTIONS:
            raise _NotQuick
        self.expect("(")
        if name == "ROUND":
            inner = self.operand(typed=True)[1]
            places = 0
            if self.accept(","):
                kind, text, *_ = self.take()
                if kind != "number" or not text.isdigit():
                    raise _NotQuick
                places = int(text)
            self.expect(")")
            if inner is not None and inner[0] == "float":
                raise _NotQuick  # ROUND of a double rounds half to even there
            if inner is None or inner[0] != "decimal":
                return ("other", inner)
            return ("other", ("decimal", places) if places > 0 else ("int", 0))
        if name == "COUNT":
            if not self.accept("*"):
                self.accept("DISTINCT")
                self.column(typed=True)
            self.expect(")")
            return ("other", ("int", 0))
        found = self.column(typed=True)[1]
        self.expect(")")
        if found == ("text", 0) and name in ("SUM", "AVG"):
            raise _NotQuick  # text summed is read as a number there
        if name == "AVG" and found is not None and found[0] != "float":
            return ("aggregate", ("decimal", found[1] + 4))  # MySQL's AVG has 4 more decimals
        return ("aggregate" if name in ("SUM", "AVG") else "other", found)
